"""The gates at a real terminal (a pty) and without one: the same session either way.

Seed 003 asks the person with ``ask_questions``; phasegate asks at the terminal when
there is one, and otherwise stops (exit 3) with the command that answers. Both ways
must leave the very same state behind.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from team_helpers import DESCRIPTION, ITEM, SESSION, cli, make_team_repo

from phasegate.engine.state import read_state_file
from pty_terminal import Terminal

#: Who answered and when: the only differences between the two ways of answering.
VOLATILE = {
    "by",
    "answered_by",
    "started",
    "completed",
    "created",
    "updated",
    "entered",
    "timestamp",
    "journal",
    "asked_at",
    "answered_at",
    "resolved_at",
    "copilot_checked_at",
    "last_update",
    "at",
    "base_commit",
    "brief",
    "input_tokens",
    "output_tokens",
}


def normalized(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def session_state(repo: Path) -> dict[str, Any]:
    files = {
        p.name: p.read_text()
        for p in sorted((repo / SESSION).iterdir())
        if p.is_file()
        and p.name not in ("status.json", ".engine.json", ".engine-archive.jsonl", ".journal.jsonl")
    }
    return {
        "status": normalized(json.loads((repo / SESSION / "status.json").read_text())),
        "engine": normalized(read_state_file(repo / SESSION / ".engine.json").to_dict()),
        "files": files,
        "code": (repo / "src" / "limit.py").read_text(),
    }


def test_gates_answered_at_a_terminal_and_by_command_leave_identical_state(
    tmp_path: Path,
) -> None:
    """APPROVE_DESIGN and REVIEW_STRATEGY asked at a real terminal (the answers typed in a
    person's words, classified) and the same session run without a terminal (answered with
    ``phasegate answer``) end in identical status.json, engine state and files."""
    at_terminal = make_team_repo(tmp_path / "terminal")
    assert cli(at_terminal, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    terminal = Terminal(
        at_terminal,
        "run",
        ITEM,
        env={"NO_COLOR": None, "FORCE_COLOR": None, "TERM": "xterm"},
    )
    shown = terminal.wait_for("Answer (")
    assert "Approve the design of login?" in shown and "Files: spec.md" in shown
    terminal.type("looks good")
    shown = terminal.wait_for("Answer (")
    assert "How should the work of login be reviewed?" in shown
    assert "Recommended: per-batch" in shown
    terminal.type("per batch")
    assert terminal.finish() == 0

    by_command = make_team_repo(tmp_path / "command")
    assert cli(by_command, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    assert cli(by_command, "run", ITEM).returncode == 3
    assert cli(by_command, "answer", ITEM, "UD-APPROVE-DESIGN", "looks good").returncode == 0
    assert cli(by_command, "run", ITEM).returncode == 3
    assert cli(by_command, "answer", ITEM, "UD-REVIEW-STRATEGY", "per batch").returncode == 0
    assert cli(by_command, "run", ITEM).returncode == 0

    terminal_state, command_state = session_state(at_terminal), session_state(by_command)
    assert terminal_state["status"]["current_state"] == "DONE"
    assert terminal_state == command_state
    answers = {
        d["decision_id"]: d["answered_by"]
        for d in json.loads((at_terminal / SESSION / "status.json").read_text())["user_decisions"]
    }
    assert answers == {"UD-APPROVE-DESIGN": "prompt", "UD-REVIEW-STRATEGY": "prompt"}
