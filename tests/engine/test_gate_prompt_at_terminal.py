"""A gate asked at a terminal by ``phasegate run``: answered elsewhere meanwhile, viewed,
or left with Ctrl-D.

- an answer given with ``phasegate answer`` while the run asks at a terminal wins: the
  prompt notices it, says so and goes on with it; ``decisions`` and ``status`` never list
  the decision as pending (even when the run is killed before it notices);
- an answer typed after another was recorded is told it came too late, and the recorded
  one is used: the journal holds one answer per decision and visit;
- ``view`` shows the gate's files, with their content;
- Ctrl-D at the prompt stops the run with exit 3, naming the decision and the command
  that answers it.

End to end: the shipped ``review-loop`` example, scripted agents, the CLI on a
pseudo-terminal (or the engine with a person who types late).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from review_loop_helpers import DECISION, FOLDER, ITEM, make_repo, script, words

from phasegate.api import open_repo
from phasegate.engine.walk import RunOptions
from phasegate.errors import ExitCode

sys.path.insert(0, str(Path(__file__).parent.parent))
from pty_terminal import Terminal

PROMPT = "Answer (revise / implement / view / drop)"
PLAIN = {"TERM": "dumb", "NO_COLOR": "1"}


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a script runs it: no terminal."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def answers(repo: Path) -> list[tuple[str, str]]:
    """(choice, by) of every ``decision.answered`` event of the gate."""
    lines = (repo / FOLDER / ".journal.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    return [
        (e["choice"], e["by"])
        for e in events
        if e["event"] == "decision.answered" and e["id"] == DECISION
    ]


def rejected_repo(tmp_path: Path) -> Path:
    """The example item, whose critic rejects the plan: the run asks ``plan-rejected``."""
    return make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))


def assert_not_pending(repo: Path) -> None:
    listed = cli(repo, "decisions", ITEM)
    assert listed.returncode == 0, listed.stderr
    assert f"{ITEM}: no decision waits." in listed.stdout, listed.stdout
    status = cli(repo, "status", ITEM, "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["pendingDecisions"] == [], data["pendingDecisions"]
    assert "phasegate answer" not in str(data["nextCommand"]), data["nextCommand"]
    table = cli(repo, "status")
    assert table.returncode == 0, table.stderr
    assert f"phasegate answer {ITEM}" not in table.stdout, table.stdout


def test_an_answer_given_elsewhere_while_the_terminal_asks_wins(tmp_path: Path) -> None:
    """`phasegate answer ... drop` while `run` asks at a terminal: the decision is no
    longer listed as pending, the prompt says it was answered elsewhere and the run goes
    on with `drop` without anyone typing; one answer is journaled."""
    repo = rejected_repo(tmp_path)
    terminal = Terminal(repo, "run", ITEM, env=PLAIN)
    terminal.wait_for(PROMPT)
    given = cli(repo, "answer", ITEM, DECISION, "drop")
    assert given.returncode == 0, given.stderr
    assert_not_pending(repo)
    shown = terminal.wait_for("dropped at the gate")
    assert f"{DECISION} was answered elsewhere: drop (by command)" in shown, shown
    code = terminal.finish()
    assert code == 0
    assert answers(repo) == [("drop", "command")]
    data = json.loads(cli(repo, "status", ITEM, "--json").stdout)
    assert data["status"] == "stopped", data["status"]


def test_a_run_killed_after_an_answer_given_elsewhere_lists_nothing_pending(
    tmp_path: Path,
) -> None:
    """The run asking at the terminal is killed right after `phasegate answer`: decisions
    and status do not offer to answer it again, and the next run goes on with it."""
    repo = rejected_repo(tmp_path)
    terminal = Terminal(repo, "run", ITEM, env=PLAIN)
    terminal.wait_for(PROMPT)
    terminal.proc.send_signal(signal.SIGSTOP)  # the run cannot notice the answer
    try:
        given = cli(repo, "answer", ITEM, DECISION, "drop")
        assert given.returncode == 0, given.stderr
        assert_not_pending(repo)
    finally:
        os.killpg(terminal.proc.pid, signal.SIGKILL)
    terminal.finish()
    assert_not_pending(repo)
    again = cli(repo, "answer", ITEM, DECISION, "revise")
    assert again.returncode == ExitCode.BAD_INPUT
    assert "already answered: 'drop' by command" in again.stderr
    ran = cli(repo, "run", ITEM)
    assert ran.returncode == 0, ran.stderr
    assert answers(repo) == [("drop", "command")]
    assert "dropped at the gate" in ran.stdout, ran.stdout
    assert json.loads(cli(repo, "status", ITEM, "--json").stdout)["status"] == "stopped"


class LateTyper:
    """A person at a terminal who types ``implement`` just after someone answered the
    same decision with ``phasegate answer ... drop``."""

    interactive = True

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.shown: list[str] = []

    def choose(self, question: str, choices: Sequence[str], default: str | None) -> str:
        given = cli(self.repo, "answer", ITEM, DECISION, "drop")
        assert given.returncode == 0, given.stderr
        return "implement"

    def confirm(self, question: str, default: bool) -> bool:
        raise AssertionError(f"not asked here: {question}")

    def show(self, text: str) -> None:
        self.shown.append(text)


def test_an_answer_typed_after_another_was_recorded_comes_too_late(tmp_path: Path) -> None:
    """The typed `implement` is told it came too late; the recorded `drop` is used, and
    the journal holds that one answer."""
    repo = rejected_repo(tmp_path)
    person = LateTyper(repo)
    outcome = open_repo(repo).run(ITEM, asker=person, options=RunOptions())
    assert "dropped at the gate" in outcome.message, outcome
    assert answers(repo) == [("drop", "command")]
    said = "\n".join(person.shown)
    assert "'implement' came too late" in said, said
    assert "already answered: drop (by command)" in said, said


def test_view_at_the_terminal_shows_the_gate_files(tmp_path: Path) -> None:
    """`view` at the prompt of `phasegate run` shows plan.md, content and all."""
    repo = rejected_repo(tmp_path)
    terminal = Terminal(repo, "run", ITEM, "--color", "never", env=PLAIN)
    terminal.wait_for(PROMPT)
    terminal.type("view")
    shown = terminal.wait_for("Answer (revise / implement / drop)")
    assert "plan.md" in shown and "Count requests per client." in shown, shown
    assert "- [ ] T1 Add the limiter" in shown, shown
    terminal.type("drop")
    assert terminal.finish() == 0


def test_ctrl_d_at_the_prompt_names_the_decision_and_the_command(tmp_path: Path) -> None:
    """Ctrl-D: exit 3, one error line naming the decision and how to answer it; the
    decision stays pending."""
    repo = rejected_repo(tmp_path)
    terminal = Terminal(repo, "run", ITEM, env=PLAIN)
    terminal.wait_for(PROMPT)
    os.write(terminal.leader, b"\x04")
    before = terminal.wait_for("phasegate: ", timeout=30)
    line = "phasegate: " + terminal.wait_for("\n", timeout=30)
    code = terminal.finish()
    assert code == ExitCode.WAITING, before + line
    assert before.count("phasegate: ") == 1, before
    assert DECISION in line, line
    assert f"phasegate answer {ITEM} {DECISION} revise" in line, line
    assert answers(repo) == []
    listed = cli(repo, "decisions", ITEM)
    assert f"answer: phasegate answer {ITEM} {DECISION} revise" in listed.stdout
