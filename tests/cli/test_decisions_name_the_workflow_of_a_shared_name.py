"""`phasegate decisions` lists the decisions of items of several workflows; an item name
two workflows share is shown with its workflow, so the two entries can be told apart (their
answer commands name it too). A name only one workflow has is shown alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_hostile_text_and_answers import GATES, phasegate, setup


def test_decisions_of_a_name_two_workflows_share_name_each_workflow(tmp_path: Path) -> None:
    repo = setup(tmp_path / "repo", "gates", GATES)
    other = GATES.replace("name: gates", "name: gates2").replace("gitems", "g2items")
    (repo / ".phasegate" / "workflows" / "gates2.yaml").write_text(other)
    prompts = repo / ".phasegate" / "workflows" / "prompts"
    shutil.copytree(prompts / "gates", prompts / "gates2")
    for name, workflow in (("x", "gates"), ("x", "gates2"), ("y", "gates2")):
        assert phasegate(repo, "new", name, "-w", workflow).returncode == 0
        assert phasegate(repo, "run", name, "-w", workflow).returncode == 3
    listed = phasegate(repo, "decisions")
    assert listed.returncode == 0, listed.stderr
    heads = [line for line in listed.stdout.splitlines() if not line.startswith(" ")]
    assert heads == [
        "x (gates) go-x: Proceed with x?",
        "x (gates2) go-x: Proceed with x?",
        "y go-y: Proceed with y?",
    ], listed.stdout
    assert "phasegate answer x --workflow gates2 go-x yes" in listed.stdout
    rows = json.loads(phasegate(repo, "decisions", "--json").stdout)
    assert [(r["item"], r["workflow"], r["id"]) for r in rows] == [
        ("x", "gates", "go-x"),
        ("x", "gates2", "go-x"),
        ("y", "gates2", "go-y"),
    ]
