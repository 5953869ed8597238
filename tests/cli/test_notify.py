"""Config ``notify:``: a command hears when a run waits on a person, fails, or completes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, SECRET, approving_script, new_repo, phasegate, write_script

RECORDER = """\
import json, os, sys
from pathlib import Path
folder = Path(sys.argv[1])
folder.mkdir(exist_ok=True)
record = {
    "stdin": sys.stdin.read(),
    "env": {k: v for k, v in os.environ.items() if k.startswith("PHASEGATE_")},
    "cwd": os.getcwd(),
}
(folder / f"{len(list(folder.iterdir()))}.json").write_text(json.dumps(record))
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return new_repo(tmp_path / "repo", approving_script())


def configure(repo: Path, command: str, on: list[str] | None = None, **extra: Any) -> None:
    settings: dict[str, Any] = {"command": command, **extra}
    if on is not None:
        settings["on"] = on
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\nnotify: " + json.dumps(settings) + "\n")


def recorder(repo: Path, tmp_path: Path, on: list[str] | None = None) -> Path:
    """Configure a notify command that records what it gets; return where it records."""
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    heard = tmp_path / "heard"
    configure(repo, f"{sys.executable} {script} {heard}", on)
    return heard


def heard(folder: Path) -> list[dict[str, Any]]:
    if not folder.exists():
        return []
    records = [json.loads(p.read_text()) for p in sorted(folder.iterdir())]
    return [{**r, "event": json.loads(r["stdin"])} for r in records]


def test_a_completed_run_is_told_on_stdin_and_in_the_environment(
    repo: Path, tmp_path: Path
) -> None:
    """The event reaches the command as JSON on stdin and as PHASEGATE_* variables."""
    folder = recorder(repo, tmp_path)
    ran = phasegate(repo, "run", ITEM)
    assert ran.returncode == 0, ran.stderr
    (record,) = heard(folder)
    event = record["event"]
    assert event["event"] == "completed" and event["exit_code"] == 0
    assert (event["item"], event["workflow"], event["command"]) == (ITEM, "feature", "run")
    assert event["message"] and event["message"] in ran.stderr
    assert event["repo"] == str(repo) and event["time"].endswith("Z")
    env = record["env"]
    assert env["PHASEGATE_EVENT"] == "completed" and env["PHASEGATE_ITEM"] == ITEM
    assert env["PHASEGATE_WORKFLOW"] == "feature" and env["PHASEGATE_EXIT_CODE"] == "0"
    assert env["PHASEGATE_MESSAGE"] == event["message"]
    assert Path(record["cwd"]) == repo


def test_a_run_stopping_for_a_person_is_told_as_waiting(repo: Path, tmp_path: Path) -> None:
    """Exit 3 (waiting on a human decision) is the `waiting` event, with what to do."""
    folder = recorder(repo, tmp_path)
    stopped = phasegate(repo, "run", ITEM, "--phase", "design")
    assert stopped.returncode == 3
    (record,) = heard(folder)
    assert record["event"]["event"] == "waiting" and record["event"]["exit_code"] == 3
    assert "--yes" in record["event"]["message"]


def test_a_failed_run_is_told_as_failed_with_secrets_redacted(repo: Path, tmp_path: Path) -> None:
    """An agent failure (exit 6) is `failed`; secrets in its message are masked."""
    script = approving_script()
    script["executor"]["brainstorm"] = [{"fail": {"exit": 1, "error": f"bad key {SECRET}"}}]
    write_script(repo, script)
    folder = recorder(repo, tmp_path)
    failed = phasegate(repo, "run", ITEM, env={"MY_SERVICE_TOKEN": SECRET})
    assert failed.returncode == 6
    (record,) = heard(folder)
    assert record["event"]["event"] == "failed" and record["event"]["exit_code"] == 6
    assert "failed in phase brainstorm" in record["event"]["message"]
    assert SECRET not in json.dumps(record) and "[REDACTED]" in record["event"]["message"]


def test_only_the_listed_events_are_told(repo: Path, tmp_path: Path) -> None:
    """`on:` limits the events: nothing else runs the command."""
    folder = recorder(repo, tmp_path, on=["failed"])
    assert phasegate(repo, "run", ITEM, "--until", "brainstorm").returncode == 0
    assert phasegate(repo, "run", ITEM, "--phase", "design").returncode == 3
    assert heard(folder) == []


def test_a_failing_notify_command_is_reported_and_never_changes_the_exit_code(
    repo: Path,
) -> None:
    """A notify command that fails is a warning; the run keeps its own exit code."""
    configure(repo, "echo 'no route to the chat server' >&2; exit 9")
    failed = "warning: notify command failed (exit 9): no route to the chat server"
    stopped = phasegate(repo, "run", ITEM, "--phase", "design")
    assert stopped.returncode == 3  # still the run's own exit code
    assert failed in stopped.stderr
    ran = phasegate(repo, "run", ITEM)
    assert ran.returncode == 0
    assert failed in ran.stderr


def test_a_hanging_notify_command_is_stopped_after_its_timeout(repo: Path) -> None:
    """A notify command past its timeout is stopped and reported; the run ends."""
    configure(repo, "sleep 60", timeout=0.5)
    started = time.monotonic()
    ran = phasegate(repo, "run", ITEM)
    assert ran.returncode == 0 and time.monotonic() - started < 30
    assert "notify command timed out after 0.5s" in ran.stderr


def test_a_plan_of_the_change_workflow_is_told_too(tmp_path: Path) -> None:
    """`plan` and `impl` announce their end like `run`: here a plan waiting at its limit."""
    root = new_repo(tmp_path / "repo", approving_script())
    minor = {
        "verdict": "NEEDS_REVISION",
        "summary": "wording",
        "issues": [{"severity": "low", "description": "typo", "location": None}],
    }
    write_script(
        root,
        {
            "proposal-author": {
                "proposal": [
                    {
                        "write": {
                            "{item_dir}/proposal.md": "---\nchange_id: oauth\nspecs: []\n---\n# P\n"
                        }
                    }
                ],
                "tasks": [{"write": {"{item_dir}/tasks.md": "## 1. Data Layer\n- [ ] 1.1 x\n"}}],
            },
            "challenger": {"tasks": [{"json": minor}]},
        },
    )
    folder = recorder(root, tmp_path)
    planned = phasegate(root, "plan", "oauth", "Add OAuth", "--mode", "quick")
    assert planned.returncode == 3, planned.stderr
    (record,) = heard(folder)
    event = record["event"]
    assert (event["event"], event["item"], event["workflow"], event["command"]) == (
        "waiting",
        "oauth",
        "change",
        "plan",
    )


def test_an_unknown_notify_event_is_a_config_error(repo: Path) -> None:
    """`notify.on` is validated like the rest of the config: file and field named."""
    configure(repo, "true", on=["sometimes"])
    result = phasegate(repo, "run", ITEM)
    assert result.returncode == 2
    assert "config.yaml: notify.on.0:" in result.stderr
