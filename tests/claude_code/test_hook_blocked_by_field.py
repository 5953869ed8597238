"""The SessionStart hook tells a phase blocked by its failed checks from the brief's
``blockedBy`` field, not from the wording of the block's message: a message worded
otherwise still reads "blocked (checks failed)", and a brief written before the field
was recorded is still read from its wording."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_hook_blocked_phase import context, phasegate, project, status_lines

from phasegate.errors import ExitCode

CHECKS_FAILED = "- Phase: implement, blocked (checks failed)"


def _blocked_item(tmp_path: Path) -> tuple[Path, Path]:
    repo = project(tmp_path / "repo", "exit 1")
    made = phasegate(repo, "new", "c", "--workflow", "feature", "--mode", "quick", "-d", "d")
    assert made.returncode == 0, made.stderr
    assert phasegate(repo, "run", "c").returncode == ExitCode.BLOCKED
    return repo, repo / "docs" / "features" / "c" / ".engine.json"


def _rewrite_brief(repo: Path, state_file: Path, **changes: object) -> None:
    """The item's state with its brief changed, and the index (a cache) dropped."""
    data = json.loads(state_file.read_text())
    for key, value in changes.items():
        if value is None:
            data["brief"].pop(key, None)
        else:
            data["brief"][key] = value
    state_file.write_text(json.dumps(data))
    shutil.rmtree(repo / ".phasegate" / "cache", ignore_errors=True)


def test_the_brief_records_what_blocked_the_item(tmp_path: Path) -> None:
    repo, state_file = _blocked_item(tmp_path)
    brief = json.loads(state_file.read_text())["brief"]
    assert brief["blockedBy"] == {"by": "checks", "node": "implement"}
    shown = phasegate(repo, "status", "c", "--json")
    assert json.loads(shown.stdout)["blockedBy"] == {"by": "checks", "node": "implement"}
    assert CHECKS_FAILED in context(repo)


def test_a_block_whose_wording_is_masked_is_still_said_checks_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A variable named like a secret holding "checks" masks that word in the block's
    # message (free text), never in the recorded field.
    monkeypatch.setenv("C_TOKEN", "checks")
    repo, _ = _blocked_item(tmp_path)
    lines = context(repo)
    assert CHECKS_FAILED in lines, lines
    assert "Phase: implement, blocked (checks failed)" in status_lines(repo, "c")


def test_a_block_worded_otherwise_is_still_said_checks_failed(tmp_path: Path) -> None:
    repo, state_file = _blocked_item(tmp_path)
    assert "Phase: implement, blocked (checks failed)" in status_lines(repo, "c")
    _rewrite_brief(repo, state_file, blocked="implement stopped: the test check still fails")
    lines = context(repo)
    assert CHECKS_FAILED in lines, lines
    assert "- Blocked: implement stopped: the test check still fails" in lines


def test_a_brief_without_the_field_is_read_from_its_wording(tmp_path: Path) -> None:
    repo, state_file = _blocked_item(tmp_path)
    _rewrite_brief(repo, state_file, blockedBy=None)
    assert CHECKS_FAILED in context(repo)
    # A block of another cause, recorded so, is not said to be failed checks.
    _rewrite_brief(repo, state_file, blockedBy={"by": "outcome", "node": "implement"})
    lines = context(repo)
    assert "- Phase: implement, blocked" in lines, lines
    assert CHECKS_FAILED not in lines
