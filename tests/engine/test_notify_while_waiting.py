"""``notify: {on: [waiting]}`` tells someone as soon as a run waits for a person: when a
gate's question is asked at the terminal and while ``run --wait`` waits for an answer
given elsewhere, not only when a run stops with exit code 3. Such an event's
``exit_code`` is ``null`` (``PHASEGATE_EXIT_CODE`` empty) and its message says how to
answer; the run's end is announced as before.

End to end: the shipped ``review-loop`` example (its critic rejects the plan, so the
run asks ``plan-rejected``), the CLI on a pseudo-terminal and as a script runs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from review_loop_helpers import DECISION, ITEM, make_repo, script, words

sys.path.insert(0, str(Path(__file__).parent.parent))
from pty_terminal import Terminal

PROMPT = "Answer (revise / implement / view / drop)"
PLAIN = {"TERM": "dumb", "NO_COLOR": "1"}

RECORDER = """\
import json, os, sys
from pathlib import Path
folder = Path(sys.argv[1])
folder.mkdir(exist_ok=True)
record = {
    "stdin": sys.stdin.read(),
    "env": {k: v for k, v in os.environ.items() if k.startswith("PHASEGATE_")},
}
(folder / f"{len(list(folder.iterdir()))}.json").write_text(json.dumps(record))
"""


def rejected_repo(tmp_path: Path) -> tuple[Path, Path]:
    """The example item whose critic rejects the plan, with a notify command recording
    what it hears in the folder returned."""
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    recorder = tmp_path / "recorder.py"
    recorder.write_text(RECORDER)
    folder = tmp_path / "heard"
    config = repo / ".phasegate" / "config.yaml"
    notify = {"command": f"{sys.executable} {recorder} {folder}"}
    config.write_text(config.read_text() + "\nnotify: " + json.dumps(notify) + "\n")
    return repo, folder


def heard(folder: Path) -> list[dict[str, Any]]:
    if not folder.exists():
        return []
    records = [json.loads(p.read_text()) for p in sorted(folder.iterdir())]
    return [{"event": json.loads(r["stdin"]), "env": r["env"]} for r in records]


def heard_soon(folder: Path, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while len(found := heard(folder)) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def assert_waiting(record: dict[str, Any]) -> None:
    event = record["event"]
    assert (event["event"], event["exit_code"], event["item"]) == ("waiting", None, ITEM)
    assert f"phasegate answer {ITEM} {DECISION}" in event["message"], event["message"]
    assert record["env"]["PHASEGATE_EVENT"] == "waiting"
    assert record["env"]["PHASEGATE_EXIT_CODE"] == ""


def test_a_question_asked_at_the_terminal_is_told_before_anyone_answers(
    tmp_path: Path,
) -> None:
    repo, folder = rejected_repo(tmp_path)
    terminal = Terminal(repo, "run", ITEM, env=PLAIN)
    terminal.wait_for(PROMPT)
    (record,) = heard_soon(folder, 1)  # told while the prompt still waits
    assert_waiting(record)
    assert "at the terminal" in record["event"]["message"]
    terminal.type("drop")
    assert terminal.finish() == 0
    events = [r["event"]["event"] for r in heard(folder)]
    assert events == ["waiting", "stopped"], events


def test_run_wait_tells_it_waits_and_goes_on_with_the_answer_given_elsewhere(
    tmp_path: Path,
) -> None:
    repo, folder = rejected_repo(tmp_path)
    waiting = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "run", ITEM, "--wait"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        (record,) = heard_soon(folder, 1)
        assert_waiting(record)
        assert waiting.poll() is None  # still waiting for the answer
        given = cli(repo, "answer", ITEM, DECISION, "drop")
        assert given.returncode == 0, given.stderr
        _, stderr = waiting.communicate(timeout=120)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 0, stderr
    events = [r["event"]["event"] for r in heard(folder)]
    assert events == ["waiting", "stopped"], events


def test_without_waiting_in_on_nothing_is_told_while_the_terminal_asks(
    tmp_path: Path,
) -> None:
    repo, folder = rejected_repo(tmp_path)
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text().replace('"}', '", "on": ["stopped"]}'))
    terminal = Terminal(repo, "run", ITEM, env=PLAIN)
    terminal.wait_for(PROMPT)
    terminal.type("drop")
    assert terminal.finish() == 0
    events = [r["event"]["event"] for r in heard(folder)]
    assert events == ["stopped"], events
