"""``impl`` stops with the real cause and a command that works for change items: no
changes to review, tasks.md missing, ``--review-only`` with nothing implemented."""

from __future__ import annotations

from pathlib import Path

import pytest
from change_helpers import ChangeAgents, changes, plan_approved, review

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.change import ImplOptions
from phasegate.errors import BlockedError, ExitCode

FOLDER = Path("changes/add-oauth")


def test_an_implementer_that_changes_nothing_is_named_as_the_cause(repo: Path) -> None:
    """No reviewer ran (there was nothing to review): the stop says the implementer changed
    no files, not that a review still says NEEDS_FIX, and names what to do."""
    plan_approved(repo)
    agents = ChangeAgents(repo)

    def idle(request: AgentRequest) -> object:
        reply = agents(request)
        if request.role == "implementer":
            return ScriptedReply(text="done, nothing to change")
        return reply

    outcome = changes(repo).impl(
        "add-oauth",
        backends={"default": ScriptedBackend(handler=idle)},  # type: ignore[arg-type]
    )
    assert outcome.status == "stopped"
    assert "reviewer" not in [role for role, _ in agents.steps]
    message = outcome.message
    assert "\n" not in message
    assert "the implementer changed no files in 3 round(s)" in message
    assert "NEEDS_FIX" not in message and "REVIEW.md" not in message
    assert "changes/add-oauth/tasks.md" in message
    assert message.endswith("phasegate impl add-oauth --review-only")
    state = changes(repo).state("add-oauth")
    assert state.impl is not None and state.impl.stop_reason is not None
    assert state.impl.stop_reason.startswith("the implementer changed no files in 3 round(s)")


def test_impl_without_tasks_md_does_not_start_and_says_how_to_go_on(repo: Path) -> None:
    """tasks.md missing: refused before anything runs (the phase stays challenged), with
    advice a change item can follow."""
    agents = plan_approved(repo)
    (repo / FOLDER / "tasks.md").unlink()
    with pytest.raises(BlockedError) as caught:
        changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    message = str(caught.value)
    assert caught.value.exit_code is ExitCode.BLOCKED
    assert "changes/add-oauth/tasks.md does not exist" in message
    assert "phasegate run" not in message and "--phase" not in message
    assert message.endswith("then run phasegate impl add-oauth")
    state = changes(repo).state("add-oauth")
    assert state.phase.value == "challenged"
    assert [h.to.value for h in state.history] == ["proposed", "challenged"]
    # Written again, impl goes on from challenged.
    (repo / FOLDER / "tasks.md").write_text("## 1. Data Layer\n- [ ] 1.1 Token table\n")
    outcome = changes(repo).impl("add-oauth", backends={"default": ChangeAgents(repo).backend()})
    assert outcome.status == "complete"


def test_review_only_before_anything_was_implemented_is_refused(repo: Path) -> None:
    """--review-only skips implementing: with nothing implemented yet it is refused in one
    line, and no agent runs."""
    plan_approved(repo)
    agents = ChangeAgents(repo, reviews=[review("APPROVED")])
    with pytest.raises(BlockedError) as caught:
        changes(repo).impl(
            "add-oauth",
            backends={"default": agents.backend()},
            options=ImplOptions(review_only=True),
        )
    message = str(caught.value)
    assert "\n" not in message and "nothing to review yet" in message
    assert message.endswith("run phasegate impl add-oauth to implement it")
    assert agents.steps == []
    assert changes(repo).state("add-oauth").phase.value == "challenged"


def test_state_yaml_records_what_the_docs_show(repo: Path) -> None:
    """challenged -> implementing is caused by impl; the review round is impl.round (no
    top-level epoch)."""
    from ruamel.yaml import YAML

    agents = plan_approved(repo)
    changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    document = YAML(typ="safe", pure=True).load((repo / FOLDER / "STATE.yaml").read_text())
    moves = [(h["from"], h["to"], h["cause"]) for h in document["history"]]
    assert ("challenged", "implementing", "impl") in moves
    assert "epoch" not in document and document["impl"]["round"] == "1.1"
