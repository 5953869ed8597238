"""A workflow's ``budget`` removes top-level caps with ``null`` (README "Budget caps"): a
cap (``usd: null``), an item's or a role's caps (``item: null``, ``roles: {ROLE: null}``),
or every cap (``budget: null``); none is silently kept, nor refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_cli import phasegate, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Every call reports $0.30; the top-level caps would stop the run at specify."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    script = approving_script()
    for replies in script["executor"].values():
        for reply in replies:
            reply["cost_usd"] = 0.3
    script["*"]["*"][0]["cost_usd"] = 0.3
    write_script(root, script)
    return root


@pytest.mark.parametrize(
    "override",
    [
        "{item: {usd: null}}",
        "{item: null}",
        "{roles: {executor: null}}",
        "null",
    ],
)
def test_null_in_a_workflows_budget_removes_the_caps_it_names(repo: Path, override: str) -> None:
    config = repo / ".phasegate" / "config.yaml"
    top = (
        "{roles: {executor: {usd: 0.5}}}"
        if "roles" in override
        else "{item: {usd: 0.5}, roles: {executor: {usd: 0.5}}}"
        if override == "null"
        else "{item: {usd: 0.5}}"
    )
    config.write_text(
        config.read_text() + f"\nbudget: {top}\nworkflows: {{feature: {{budget: {override}}}}}\n"
    )
    assert phasegate(repo, "new", "item", "-d", "Add rate limiting").returncode == 0
    ran = phasegate(repo, "run", "item")
    assert ran.returncode == 0, ran.stderr
    status = phasegate(repo, "status", "item")
    assert "Budget" not in status.stdout, status.stdout


def test_other_workflows_keep_the_top_level_caps(repo: Path) -> None:
    """``workflows.change.budget: null`` leaves the feature workflow's items capped."""
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(
        config.read_text() + "\nbudget: {item: {usd: 0.5}}\nworkflows: {change: {budget: null}}\n"
    )
    assert phasegate(repo, "new", "item", "-d", "Add rate limiting").returncode == 0
    ran = phasegate(repo, "run", "item")
    assert ran.returncode == 3, ran.stderr
    assert "item.usd" in ran.stderr
