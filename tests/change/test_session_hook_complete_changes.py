"""The Claude Code SessionStart hook lists a change in phase ``complete``: it has not ended
(seed 002: "READY for archive"). One that ``archive`` refused on a spec conflict is shown
waiting on a merge by hand, with the command that finishes it, as ``phasegate status``
says it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from change_helpers import complete
from test_archive_conflict_cli import archived_a_before_b

from cli_process import run_cli
from phasegate.errors import ExitCode


def _context(repo: Path) -> str:
    """The hook's context, given its input on stdin as Claude Code gives it."""
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"})
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "hook", "session-start"],
        cwd=repo,
        input=payload,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout).get("hookSpecificOutput")
    return str(output["additionalContext"]) if isinstance(output, dict) else ""


def test_a_change_waiting_on_an_archive_conflict_is_listed_with_how_to_finish_it(
    repo: Path,
) -> None:
    archived_a_before_b(repo)
    assert run_cli(repo, "archive", "change-b").returncode == ExitCode.BLOCKED

    status = run_cli(repo, "status", "change-b")
    assert "waiting on a merge by hand: specs/auth.md 'Requirement: Login'" in status.stdout
    text = _context(repo)
    assert "## change-b (workflow change" in text, text
    assert "- Phase: complete, waiting on a merge by hand: specs/auth.md 'Requirement: Login'" in (
        text
    )
    assert "in progress" not in text, text
    assert text.rstrip().endswith("then phasegate archive change-b --resolved"), text
    # change-a was archived: it ended.
    assert "change-a" not in text, text


def test_a_complete_change_is_listed_as_ready_for_archive(repo: Path) -> None:
    complete(repo, "add-oauth")
    text = _context(repo)
    assert "## add-oauth (workflow change" in text, text
    assert "- Phase: complete\n" in text, text
    assert "- Next command: phasegate archive add-oauth" in text, text
