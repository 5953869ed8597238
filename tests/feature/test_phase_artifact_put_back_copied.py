"""In the feature workflow a phase's call may not change the other phases' artifacts it is
given: what it changed is put back and the call fails. A person's edit made while the call
ran cannot be told from the agent's, so what the file held is first copied to the item's
``put-back/`` folder (numbered, never overwritten), named in the message; that folder is no
artifact of the item (the run goes on with the artifact as it was)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
from phasegate.engine.runner import RunOptions
from phasegate.errors import AgentError

ITEM = Path("docs/features/item")
SPEC = "# Spec\nR1\n"
PERSONS_SPEC = "# Spec\nR1\nR2 added by hand: the limit is logged\n"
WEAK_SPEC = "# Spec\nnothing\n"


def _script() -> dict[str, Any]:
    """Every phase's executor writes its artifact, every review approves."""
    return {
        "executor": {
            "brainstorm": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\nproblem\n"}}],
            "specify": [{"write": {"{item_dir}/spec.md": SPEC}}],
            "design": [{"write": {"{item_dir}/design.md": "# Design\n"}}],
            "create-plan": [{"write": {"{item_dir}/plan.md": "# Plan\n"}}],
            "create-tasks": [{"write": {"{item_dir}/tasks.md": "# Tasks\n- [ ] t1\n"}}],
            "implement": [{"write": {"app.py": "print('hi')\n"}}],
            "verify": [{"write": {"{item_dir}/verification.md": "# Verified\n"}}],
        },
        "*": {"*": [{"verdict": {"approved": True, "issues": [], "summary": "ok"}}]},
    }


def _repo(root: Path) -> Repo:
    root.mkdir(parents=True)
    (root / "README.md").write_text("# sample\n")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    repo = Repo(root)
    repo.new("item", mode="standard")
    return repo


def _violations(root: Path) -> list[dict[str, Any]]:
    lines = (root / ITEM / ".journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == "agent.violation"]


class PersonEditsTheSpec(ScriptedBackend):
    """The scripted agents; while the implement executor's first call runs, a person edits
    spec.md (the executor itself leaves it alone)."""

    def __init__(self) -> None:
        super().__init__(script=_script())
        self.edited = False

    def reply_for(self, request: AgentRequest) -> ScriptedReply | None:
        if (
            request.role == "executor"
            and request.labels.get("phase") == "implement"
            and not self.edited
        ):
            self.edited = True
            (Path(request.workdir) / ITEM / "spec.md").write_text(PERSONS_SPEC)
        return super().reply_for(request)


def test_a_persons_edit_of_an_artifact_during_another_phases_call_is_copied(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    repo = _repo(root)
    agents = PersonEditsTheSpec()
    repo.run("item", backends={"default": agents}, options=RunOptions(until="implement"))
    # Put back as it was before the call (the call failed and was made again) ...
    assert (root / ITEM / "spec.md").read_text() == SPEC
    executor_calls = [
        r for r in agents.requests if r.role == "executor" and r.labels["phase"] == "implement"
    ]
    assert len(executor_calls) == 2
    # ... and what it held, the person's edit, is kept, named in the journal.
    kept = root / ITEM / "put-back" / "spec-1.md"
    assert kept.read_text() == PERSONS_SPEC
    (violation,) = _violations(root)
    assert violation["role"] == "executor"
    assert violation["kept"] == [
        "another phase's artifact (docs/features/item/spec.md; what it held is copied to "
        "docs/features/item/put-back/spec-1.md), which its phase may not change"
    ]
    # The copy is no artifact nor implementation change: the final reviewer is shown the
    # work tree's changes without it, and the item goes on to its end as before.
    (final,) = [r for r in agents.requests if r.role == "final-reviewer"]
    assert "put-back" not in final.prompt_text()
    repo.run("item", backends={"default": agents})
    status = repo.status("item")
    assert status["status"] == "completed", status
    assert _violations(root) == [violation]
    assert kept.read_text() == PERSONS_SPEC
    assert sorted(os.listdir(root / ITEM / "put-back")) == ["spec-1.md"]
    meta = json.loads((root / ITEM / ".meta.json").read_text())
    assert "put-back" not in json.dumps(meta)


def test_an_agents_change_is_still_a_failed_call_and_each_copy_is_kept(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    repo = _repo(root)
    script = _script()
    script["executor"]["implement"] = [
        {"write": {"app.py": "print('hi')\n", "{item_dir}/spec.md": WEAK_SPEC}}
    ]
    agents = ScriptedBackend(script=script)
    with pytest.raises(AgentError) as failed:
        repo.run("item", backends={"default": agents}, options=RunOptions(until="implement"))
    assert "docs/features/item/put-back/spec-2.md" in str(failed.value)
    assert (root / ITEM / "spec.md").read_text() == SPEC
    found = _violations(root)
    assert [v["kept"] for v in found] == [
        [
            "another phase's artifact (docs/features/item/spec.md; what it held is copied to "
            f"docs/features/item/put-back/spec-{n}.md), which its phase may not change"
        ]
        for n in (1, 2)
    ]
    assert all(v["role"] == "executor" and v["reverted"] is True for v in found)
    # Each attempt's copy is its own: the second did not overwrite the first.
    assert sorted(os.listdir(root / ITEM / "put-back")) == ["spec-1.md", "spec-2.md"]
    assert (root / ITEM / "put-back" / "spec-1.md").read_text() == WEAK_SPEC
    assert (root / ITEM / "put-back" / "spec-2.md").read_text() == WEAK_SPEC
    # No reviewer judged the work against a weakened spec.
    assert [r for r in agents.requests if r.role == "final-reviewer"] == []


def test_a_put_back_folder_that_is_a_link_is_not_written_through(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    repo = _repo(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = _script()
    script["executor"]["implement"] = [
        {"write": {"app.py": "print('hi')\n", "{item_dir}/spec.md": WEAK_SPEC}}
    ]
    agents = ScriptedBackend(script=script)
    repo.run("item", backends={"default": agents}, options=RunOptions(until="create-tasks"))
    (root / ITEM / "put-back").symlink_to(elsewhere)
    with pytest.raises(AgentError):
        repo.run("item", backends={"default": agents}, options=RunOptions(until="implement"))
    assert (root / ITEM / "spec.md").read_text() == SPEC
    assert os.listdir(elsewhere) == []
    assert [v["kept"] for v in _violations(root)] == [
        ["another phase's artifact (docs/features/item/spec.md), which its phase may not change"]
    ] * 2
