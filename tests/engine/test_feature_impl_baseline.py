"""The feature workflow's code review shows the implementation, not a person's files: an
untracked file that was in the work tree before implement began is neither shown to the
final reviewer nor counted as the implementation (as the change workflow's impl does)."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import approving_script, calls, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.runner import RunOptions


def test_a_persons_untracked_file_is_not_shown_as_the_implementation(git_repo: Path) -> None:
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    (git_repo / "my-notes.txt").write_text("private plans, not the agent's work\n")
    backend = ScriptedBackend(script=approving_script())
    repo.run("item", backends={"default": backend}, options=RunOptions(until="implement"))
    (review,) = calls(backend, "final-reviewer", "implement")
    prompt = review.prompt_text()
    assert "app.py" in prompt  # the agent's work is shown
    assert "my-notes.txt" not in prompt
    assert "private plans" not in prompt


def test_without_changes_of_its_own_implement_is_not_taken_for_done(git_repo: Path) -> None:
    """The person's file alone is no implementation: the engine's blocker says so."""
    repo = make_repo(git_repo)
    repo.new("item", mode="hotfix")
    (git_repo / "my-notes.txt").write_text("private plans\n")
    script = approving_script()
    script["executor"]["implement"] = [{"text": "nothing to do"}]
    backend = ScriptedBackend(script=script)
    repo.run("item", backends={"default": backend}, options=RunOptions(until="implement"))
    assert calls(backend, "final-reviewer", "implement") == []
    events = (git_repo / "docs/features/item/.journal.jsonl").read_text()
    assert "No implementation changes were found in the work tree." in events
