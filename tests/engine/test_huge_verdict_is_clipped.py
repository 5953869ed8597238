"""A reviewer's verdict larger than any sensible review (megabytes of summary, of one issue's
text) is kept clipped, with a note of how much was cut: the item's state, review history
and verdict events stay small instead of holding the text again in every one of them."""

from __future__ import annotations

import json
from pathlib import Path

from engine_helpers import init_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions

ITEM_DIR = Path("docs/features/item")
HUGE = 2_000_000


def test_a_huge_verdict_is_clipped_where_it_is_kept(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    repo = Repo(root, Config())
    repo.new("item", mode="hotfix", description="Add rate limiting")
    executor = ScriptedBackend(
        script={"executor": {"*": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}]}}
    )
    verdict = {
        "approved": True,
        "summary": "S" * HUGE,
        "issues": [{"severity": "warning", "description": "D" * HUGE, "location": "L" * HUGE}],
    }
    reviewer = ScriptedBackend(script={"*": {"*": [{"verdict": verdict}]}})
    repo.run(
        "item",
        backends={"executor": executor, "chain-reviewer": reviewer},
        options=RunOptions(until="brainstorm"),
    )
    folder = root / ITEM_DIR
    for name in (".meta.json", ".review-history.md", ".engine.json"):
        assert (folder / name).stat().st_size < 100_000, name
    lines = (folder / ".journal.jsonl").read_text().splitlines()
    (read,) = [e for e in map(json.loads, lines) if e["event"] == "review.verdict"]
    assert read["approved"] is True
    assert len(read["summary"]) < 20_000
    assert "characters cut" in read["summary"]
    (issue,) = read["issues"]
    assert len(issue["description"]) < 20_000 and len(issue["location"]) < 20_000


def test_a_verdict_of_thousands_of_issues_keeps_its_blockers_and_says_what_was_cut(
    tmp_path: Path,
) -> None:
    root = init_repo(tmp_path / "repo")
    repo = Repo(root, Config())
    repo.new("item", mode="hotfix", description="Add rate limiting")
    executor = ScriptedBackend(
        script={"executor": {"*": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}]}}
    )
    issues = [
        {"severity": "note", "description": f"nit {n}", "location": None} for n in range(5000)
    ]
    issues.append({"severity": "blocker", "description": "no problem statement", "location": None})
    verdict = {"approved": True, "summary": "fine", "issues": issues}
    reviewer = ScriptedBackend(script={"*": {"*": [{"verdict": verdict}]}})
    repo.run(
        "item",
        backends={"executor": executor, "chain-reviewer": reviewer},
        options=RunOptions(until="brainstorm"),
    )
    lines = (root / ITEM_DIR / ".journal.jsonl").read_text().splitlines()
    (read,) = [e for e in map(json.loads, lines) if e["event"] == "review.verdict"]
    assert read["approved"] is False
    assert len(read["issues"]) <= 200
    assert "no problem statement" in [i["description"] for i in read["issues"]]
    assert read["issues"][-1]["description"].endswith("more issues cut")
