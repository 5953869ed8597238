"""A corrupt ``.the-startup/review-cycles.json``: its message says what works. The file is
a view of the engine state (phasegate never commits it), so deleting it is the way out:
the next run writes it again, the same, a completed item's too."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import Team, cli, cycles_file, make_repo, new_item, run

PLAN_TEXT = """# Plan

## Phase 1: Login

- [ ] **Implement JWT authentication** [`agent: the-developer`]
"""
TEAM = {
    "the-developer": {"*": [{"write": {"src/auth/jwt.py": "def check(token): ...\n"}}]},
    "the-security-engineer": {
        "*": [{"text": "NEEDS_REVISION\nAdd rate limiting"}, {"text": "APPROVED"}]
    },
}


def test_a_corrupt_file_is_deleted_and_written_again_from_the_engine_state(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    repo = new_item(root)
    assert run(repo, Team(TEAM)).status == "completed"
    before = cycles_file(root)
    path = root / ".the-startup" / "review-cycles.json"
    path.write_text("{\n")
    status = cli(root, "status", "006")
    assert status.returncode == 5
    lines = status.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "review-cycles.json is corrupt" in lines[0]
    assert "delete it" in lines[0] and "engine state" in lines[0]
    assert "git" not in lines[0]
    path.unlink()
    assert run(repo, Team(TEAM)).status == "completed"  # already complete: written again
    after = json.loads(path.read_text())
    assert after["sessions"] == before["sessions"]
