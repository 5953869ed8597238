"""A node whose required previous artifact is missing stops after one look (revising it
cannot make an earlier node's output), and its blocker names the command that makes the
artifact: a plain run would go on past the node instead."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import approving_script, calls, make_repo, read_meta

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.runner import RunOptions


def test_the_blocker_names_the_command_that_makes_the_previous_artifact(git_repo: Path) -> None:
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    backend = ScriptedBackend(script=approving_script())
    repo.run("item", backends={"default": backend}, options=RunOptions(phase="design", yes=True))
    state = read_meta(git_repo / "docs/features/item")
    (record,) = state["engine"]["iterations"]
    assert record["issues"][0]["description"] == (
        "The previous artifact spec.md is missing or empty (run the specify phase first: "
        "phasegate run item --phase specify)."
    )
    assert len(calls(backend, "executor", "design")) == 1
