"""An artifact a completed phase made, deleted since, that the next phase requires
(``previous_required``): ``phasegate run`` stops blocked on it, and the SessionStart hook,
which reads the brief of the item's last commit, says the same block line instead of
advising ``phasegate run NAME``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, approving_script, new_repo, phasegate

BLOCK = (
    f"cannot start design: spec.md, which the specify phase makes, is missing or empty though "
    f"that phase completed; put it back, or run the specify phase again: "
    f"phasegate run {ITEM} --phase specify"
)


def _context(repo: Path) -> str:
    """The context the hook gives a session started in ``repo``."""
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
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def test_the_hook_says_the_block_of_a_deleted_previous_artifact(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", approving_script())
    folder = repo / "docs/features" / ITEM
    assert phasegate(repo, "run", ITEM, "--until", "specify").returncode == 0
    assert f"- Next command: phasegate run {ITEM}" in _context(repo)
    assert "Blocked" not in _context(repo)

    (folder / "spec.md").write_text("  \n")  # emptied: as missing as no file
    status = json.loads(phasegate(repo, "status", ITEM, "--json").stdout)
    assert status["blocked"] == BLOCK
    context = _context(repo)
    assert f"- Blocked: {BLOCK}" in context, context
    assert "- Phase: specify, blocked" in context, context
    assert f"- Next command: phasegate run {ITEM}" not in context, context

    (folder / "spec.md").unlink()
    assert f"- Blocked: {BLOCK}" in _context(repo)
    ran = phasegate(repo, "run", ITEM)
    assert ran.returncode == 4 and BLOCK in ran.stderr, ran.stderr

    # As the line says: the phase run again makes it, and the block is gone.
    again = phasegate(repo, "run", ITEM, "--phase", "specify", "--yes")
    assert again.returncode == 0, again.stderr
    context = _context(repo)
    assert "Blocked" not in context, context
    assert f"- Next command: phasegate run {ITEM}" in context, context
