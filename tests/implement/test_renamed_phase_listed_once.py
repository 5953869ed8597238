"""A person renames a phase heading in PLAN.md while a run waits for them: `phasegate
status` lists that phase once, under its new title (a renamed phase is the same phase),
before the next run and after it; the old title is not listed as a phase that was skipped,
and the run does not say it skipped one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, cli, key, make_repo

PLAN_TEXT = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]

## Phase 2: Docs

- [ ] **Document signing** [`agent: the-developer`]
"""
CONFIG: dict[str, Any] = {
    "roles": {"default": {"backend": "scripted"}},
    "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
}


def phases(root: Path) -> list[tuple[str, str]]:
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    loop = next(p for p in status["phases"] if p["node"] == "phases")
    return [(i["title"], i["status"]) for i in loop.get("items") or []]


@pytest.mark.parametrize(
    ("waits_on", "renamed", "before", "after"),
    [
        # Phase 2 not begun yet when it is renamed: read anew, listed once.
        (
            "Sign outgoing payloads",
            ("## Phase 2: Docs", "## Phase 2: Documentation"),
            [("Phase 1: Signing", "waiting"), ("Phase 2: Documentation", "pending")],
            [("Phase 1: Signing", "done"), ("Phase 2: Documentation", "done")],
        ),
        # Phase 1 finished when it is renamed: still done, under its new title.
        (
            "Document signing",
            ("## Phase 1: Signing", "## Phase 1: Payload signing"),
            [("Phase 1: Payload signing", "done"), ("Phase 2: Docs", "waiting")],
            [("Phase 1: Payload signing", "done"), ("Phase 2: Docs", "done")],
        ),
    ],
    ids=["not-begun", "finished"],
)
def test_a_renamed_phase_is_listed_once_under_its_new_title(
    tmp_path: Path,
    waits_on: str,
    renamed: tuple[str, str],
    before: list[tuple[str, str]],
    after: list[tuple[str, str]],
) -> None:
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=CONFIG)
    waiting = key(waits_on)
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}}]},
        "*": {f"implement:{waiting}": [{"text": "no idea"}], "*": [{"text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    assert cli(root, "implement", "006").returncode == 3
    plan = root / PLAN
    plan.write_text(plan.read_text().replace(*renamed))

    assert phases(root) == before

    assert cli(root, "answer", "006", f"unclear-{waiting}", "approve").returncode == 0
    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "skipped" not in again.stdout, again.stdout
    assert phases(root) == after
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert [(t["title"], t["state"]) for t in status["tasks"]] == [
        ("Sign outgoing payloads", "done"),
        ("Document signing", "done"),
    ]
