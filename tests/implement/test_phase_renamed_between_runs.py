"""A person renames phase headings in PLAN.md while a run waits for them: the next
`phasegate implement` goes on where it was (the waiting task is not implemented again
under a "new" phase, a phase not begun yet does not stop the run with "no longer has the
phase"), and `phasegate status` lists each task once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from implement_helpers import PLAN, cli, key, make_repo

PLAN_TEXT = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
- [ ] **Verify signatures** [`agent: the-developer`]

## Phase 2: Docs

- [ ] **Document signing** [`agent: the-developer`]
"""
SIGN = key("Sign outgoing payloads")


def calls(root: Path, role: str) -> list[dict[str, Any]]:
    lines = (root / "calls.jsonl").read_text().splitlines()
    return [c for c in map(json.loads, filter(None, lines)) if c.get("role") == role]


def test_renamed_phase_headings_keep_the_run_where_it_was(tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {
            "scripted": {
                "script": ".phasegate/agents.yaml",
                "calls_log": "calls.jsonl",
                "structured_output": False,
            }
        },
    }
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {f"implement:{SIGN}": [{"text": "no idea"}], "*": [{"text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    first = cli(root, "implement", "006")
    assert first.returncode == 3, first.stdout + first.stderr
    plan = root / PLAN
    text = plan.read_text()
    text = text.replace("## Phase 1: Signing", "## Phase 1: Payload signing")
    plan.write_text(text.replace("## Phase 2: Docs", "## Phase 2: Documentation"))

    status = json.loads(cli(root, "status", "006", "--json").stdout)
    titles = [t["title"] for t in status["tasks"]]
    assert titles == ["Sign outgoing payloads", "Verify signatures", "Document signing"]

    assert cli(root, "answer", "006", f"unclear-{SIGN}", "approve").returncode == 0
    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stdout + again.stderr
    text = plan.read_text()
    for title in ("Sign outgoing payloads", "Verify signatures", "Document signing"):
        assert f"- [x] **{title}**" in text, text
    implemented = [c for c in calls(root, "the-developer")]
    assert len(implemented) == 3, [c.get("prompt", "")[:80] for c in implemented]
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert status["status"] == "completed"
    assert [(t["title"], t["state"]) for t in status["tasks"]] == [
        ("Sign outgoing payloads", "done"),
        ("Verify signatures", "done"),
        ("Document signing", "done"),
    ]
