"""In the feature workflow, a later phase's agent cannot change an earlier phase's
artifact: the implement executor that rewrites spec.md has it put back (a violation, as
for phasegate's own files), so the final reviewer judges against the spec as approved.
A phase run again still writes its own artifact. Paths a put-back line names cannot be
taken for an artifact: they are shown relative to the repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import approving_script, calls, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.runner import RunOptions
from phasegate.errors import AgentError

ITEM = Path("docs/features/item")
SPEC = "# Spec\nR1\n"


def _violations(repo: Path) -> list[dict[str, object]]:
    lines = (repo / ITEM / ".journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == "agent.violation"]


def test_the_implement_executor_cannot_weaken_the_spec(git_repo: Path) -> None:
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    script = approving_script()
    script["executor"]["implement"] = [
        {"write": {"app.py": "print('hi')\n", "{item_dir}/spec.md": "# Spec\nnothing\n"}}
    ]
    backend = ScriptedBackend(script=script)
    with pytest.raises(AgentError, match=r"another phase's artifact \(docs/features/item/spec"):
        repo.run("item", backends={"default": backend}, options=RunOptions(until="implement"))
    assert (git_repo / ITEM / "spec.md").read_text() == SPEC
    found = _violations(git_repo)
    assert len(found) == 2  # each attempt's change was put back, and the call failed
    assert all(v["role"] == "executor" and v["reverted"] is True for v in found)
    # No reviewer judged the work against a weakened spec.
    assert calls(backend, "final-reviewer") == []


def test_a_document_phase_editing_the_spec_is_put_back_and_stands(git_repo: Path) -> None:
    """A document phase (writes_only_outputs) has another phase's artifact put back as a
    file outside its outputs: the call stands, as before."""
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    script = approving_script()
    script["executor"]["design"] = [
        {"write": {"{item_dir}/design.md": "# Design\n", "{item_dir}/spec.md": "# weak\n"}}
    ]
    backend = ScriptedBackend(script=script)
    repo.run("item", backends={"default": backend}, options=RunOptions(until="design"))
    assert (git_repo / ITEM / "spec.md").read_text() == SPEC
    (found,) = _violations(git_repo)
    assert found["outside_outputs"] == ["docs/features/item/spec.md"]
    assert found["paths"] == []


def test_a_phase_run_again_still_writes_its_own_artifact(git_repo: Path) -> None:
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    backend = ScriptedBackend(script=approving_script())
    repo.run("item", backends={"default": backend}, options=RunOptions(until="design"))
    script = approving_script()
    script["executor"]["specify"] = [{"write": {"{item_dir}/spec.md": "# Spec\nR2\n"}}]
    again = ScriptedBackend(script=script)
    repo.run("item", backends={"default": again}, options=RunOptions(phase="specify", yes=True))
    assert (git_repo / ITEM / "spec.md").read_text() == "# Spec\nR2\n"
    assert _violations(git_repo) == []


def test_a_put_back_file_at_the_top_is_not_taken_for_the_artifact(git_repo: Path) -> None:
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    script = approving_script()
    script["executor"]["specify"] = [
        {"write": {"{item_dir}/spec.md": SPEC, "spec.md": "# a stray copy\n"}}
    ]
    backend = ScriptedBackend(script=script)
    repo.run("item", backends={"default": backend}, options=RunOptions(until="specify"))
    (found,) = _violations(git_repo)
    assert found["outside_outputs"] == ["spec.md"]
    (words,) = found["kept"]  # type: ignore[misc]
    assert "(spec.md)" not in words
    assert "./spec.md" in words
