"""A failed validation checkpoint stops `phasegate implement` (exit 4); the line that says
how to go on names `phasegate implement ID`, as the implement workflow's other messages
do, not `phasegate run ID`."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import cli
from test_implement_cli import scripted_repo

PLAN_TWO_PHASES = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Validation**: run the unit tests

## Phase 2: Docs

- [ ] **Document the headers** [`agent: the-technical-writer`]
"""
SCRIPT = {
    "the-developer": {"*": [{"write": {"src/sign.py": "import hmac\n"}, "text": "done"}]},
    "the-technical-writer": {"*": [{"write": {"docs/h.md": "# H\n"}, "text": "done"}]},
    "*": {"*": [{"text": "APPROVED"}]},
}


def test_a_failed_checkpoint_says_phasegate_implement(tmp_path: Path) -> None:
    root = scripted_repo(tmp_path, SCRIPT, plan=PLAN_TWO_PHASES)
    config = root / ".phasegate" / "config.yaml"
    settings = json.loads(config.read_text())
    config.write_text(json.dumps({**settings, "commands": {"test": "false"}}) + "\n")
    result = cli(root, "implement", "006")
    assert result.returncode == 4, result.stdout + result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert "check 'test' (false) failed with exit code 1" in error
    assert error.endswith("Fix it, then run again: phasegate implement 006"), error
    assert "phasegate run 006" not in result.stdout + result.stderr
    # status says the same command after the block.
    shown = cli(root, "status", "006")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "fix the block, then: phasegate implement 006" in text, text
    assert json.loads(cli(root, "status", "006", "--json").stdout)["nextCommand"] == (
        "fix the block, then: phasegate implement 006"
    )
