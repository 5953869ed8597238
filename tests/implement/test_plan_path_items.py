"""``phasegate implement PATH`` runs the work item that implements that plan, whatever
its name: an item made with ``phasegate new NAME --workflow implement --plan PATH``
included, and never a second item for the same plan."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import cli, git, make_repo

PLAN_TEXT = """# Plan

## Phase 1: X

- [ ] **T** [`agent: the-developer`]
"""
A = "docs/specs/017-a/PLAN.md"
B = "docs/specs/017-b/PLAN.md"


def two_plans(tmp_path: Path) -> Path:
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
    }
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config, spec="docs/specs/017-a")
    (root / "docs/specs/017-b").mkdir()
    (root / B).write_text(PLAN_TEXT)
    script = {
        "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n"}, "text": "ok"}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plans")
    return root


def items(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".phasegate" / "implement").iterdir() if p.is_dir())


def test_the_advised_item_is_the_one_a_plan_path_runs(tmp_path: Path) -> None:
    """017 implements 017-b; 017-a's path is refused with the advice to give it its own
    item, and once that item exists the same command runs it."""
    root = two_plans(tmp_path)
    assert cli(root, "implement", B, "-q").returncode == 0
    refused = cli(root, "implement", A, "-q")
    assert refused.returncode == 2
    assert f"phasegate new NAME --workflow implement --plan {A}" in refused.stderr
    made = cli(root, "new", "web-a", "--workflow", "implement", "--plan", A)
    assert made.returncode == 0, made.stderr
    again = cli(root, "implement", A, "-q")
    assert again.returncode == 0, again.stderr
    assert "- [x] **T**" in (root / A).read_text()
    assert json.loads(cli(root, "status", "web-a", "--json").stdout)["status"] == "completed"
    assert items(root) == ["017", "web-a"]


def test_a_plan_path_runs_its_named_item_instead_of_making_another(tmp_path: Path) -> None:
    """With web-a implementing 017-a, the path of 017-a makes no item 017 beside it."""
    root = two_plans(tmp_path)
    made = cli(root, "new", "web-a", "--workflow", "implement", "--plan", A)
    assert made.returncode == 0, made.stderr
    result = cli(root, "implement", A, "-q")
    assert result.returncode == 0, result.stderr
    assert "Created 017" not in result.stdout
    assert items(root) == ["web-a"]
    assert json.loads(cli(root, "status", "web-a", "--json").stdout)["status"] == "completed"


def test_an_item_name_that_is_also_an_ambiguous_spec_id_is_resumed(tmp_path: Path) -> None:
    """Item 017 implements 017-b: ``phasegate implement 017`` resumes it although the
    spec id 017 alone would match both folders."""
    root = two_plans(tmp_path)
    assert cli(root, "implement", B, "-q").returncode == 0
    again = cli(root, "implement", "017")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "017 is already complete"
