"""An error in PLAN.md found before anything runs leaves no work item behind: `implement`
stops with exit 2 naming the line, and `status` does not show an item in progress."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import cli, make_repo

from phasegate.errors import ExitCode

CONFIG = {
    "roles": {"default": {"backend": "scripted"}},
    "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
}
SPEC = "docs/specs/020-limits"
BAD_PLAN = """# Plan: Limits

## Phase 1: Limits

- [ ] **Count requests** [`agent: the-developer`] [`parallel: maybe`]
"""
GOOD_PLAN = BAD_PLAN.replace(" [`parallel: maybe`]", "")
SCRIPT = {
    "the-developer": {"implement": [{"write": {"src/limits.py": "LIMIT = 10\n"}, "text": "done"}]},
    "*": {"*": [{"text": "APPROVED"}]},
}


def test_a_plan_error_creates_no_item(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", BAD_PLAN, config=CONFIG, spec=SPEC)
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(SCRIPT))
    ran = cli(root, "implement", "020")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert ran.stderr.strip().splitlines()[-1] == (
        f"phasegate: error: {SPEC}/PLAN.md:5:51: `parallel: maybe` must be true or false"
    )
    assert "Created 020" not in ran.stdout
    assert not (root / ".phasegate" / "implement" / "020").exists()
    status = cli(root, "status", "020")
    assert status.returncode == ExitCode.BAD_INPUT, status.stdout
    assert "in progress" not in status.stdout
    listed = json.loads(cli(root, "status", "--json").stdout)
    assert listed == []

    # Once PLAN.md is fixed, the same command creates the item and runs it.
    (root / SPEC / "PLAN.md").write_text(GOOD_PLAN)
    again = cli(root, "implement", "020")
    assert again.returncode == 0, again.stderr
    assert f"Created 020 (implement) for {SPEC}/PLAN.md." in again.stdout
    assert "- [x] **Count requests**" in (root / SPEC / "PLAN.md").read_text()


def test_new_with_a_plan_in_error_creates_no_item(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", BAD_PLAN, config=CONFIG, spec=SPEC)
    made = cli(root, "new", "limits", "--workflow", "implement", "--plan", f"{SPEC}/PLAN.md")
    assert made.returncode == ExitCode.BAD_INPUT, made.stderr
    assert made.stderr.strip().splitlines()[-1] == (
        f"phasegate: error: {SPEC}/PLAN.md:5:51: `parallel: maybe` must be true or false"
    )
    assert not (root / ".phasegate" / "implement" / "limits").exists()
    assert json.loads(cli(root, "status", "--json").stdout) == []
