"""``phasegate plan``: WF-R2 (planning verdicts), WF-R3 (sequential planning), scenario 1."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from change_helpers import (
    APPROVED,
    MINOR_REVISION,
    NEEDS_REVISION,
    REJECTED,
    ChangeAgents,
    changes,
    plan_approved,
    step_of,
)

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.change import PlanOptions
from phasegate.change.frontmatter import split_frontmatter
from phasegate.errors import AgentError, BadInputError, BlockedError

FOLDER = Path("changes/add-oauth")


def plan(repo: Path, agents: ChangeAgents, **options: object) -> object:
    opts = PlanOptions(description="Add OAuth login", **options)  # type: ignore[arg-type]
    return changes(repo).plan("add-oauth", backends={"default": agents.backend()}, options=opts)


def phase(repo: Path) -> str:
    return changes(repo).state("add-oauth").phase.value


def test_plan_writes_proposal_then_specs_then_tasks_then_challenges(repo: Path) -> None:
    """Scenario "Sequential Generation with Metadata", WF-R3 steps 1-4 in strict order."""
    agents = plan_approved(repo)
    assert agents.steps == [
        ("proposal-author", "proposal"),
        ("proposal-author", "spec:session.md"),
        ("proposal-author", "spec:oauth-login.md"),
        ("proposal-author", "tasks"),
        ("challenger", "challenge"),
    ]
    for name in ("proposal.md", "specs/session.md", "specs/oauth-login.md", "tasks.md"):
        assert (repo / FOLDER / name).is_file(), name


def test_tasks_md_frontmatter_carries_the_change_id(repo: Path) -> None:
    """Scenario "Sequential Generation with Metadata": change_id in tasks.md's frontmatter."""
    plan_approved(repo)
    front, _, _ = split_frontmatter((repo / FOLDER / "tasks.md").read_text())
    assert front == {"change_id": "add-oauth"}


def test_tasks_md_without_frontmatter_gets_the_change_id_from_code(repo: Path) -> None:
    """WF-R3 step 3: an author that leaves out change_id does not leave it out of tasks.md."""
    plain = "# Tasks\n\n## 1. Data Layer\n- [ ] 1.1 Token model\n"
    plan_approved(repo, tasks=plain)
    text = (repo / FOLDER / "tasks.md").read_text()
    front, body, _ = split_frontmatter(text)
    assert front == {"change_id": "add-oauth"}
    assert body == plain


def test_specs_are_written_dependencies_first_each_seeing_the_earlier(repo: Path) -> None:
    """WF-R3 step 2: specs in dependency order (oauth-login depends on session)."""
    agents = ChangeAgents(repo)
    backend = agents.backend()
    changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": backend})
    (oauth,) = [r for r in backend.requests if step_of(r) == "spec:oauth-login.md"]
    text = oauth.prompt_text()
    assert "Change spec: changes/add-oauth/specs/session.md" in text
    assert "First requirement of session" in text
    assert "Living spec now: specs/oauth-login.md" in text


def test_approved_challenge_moves_the_change_to_challenged(repo: Path) -> None:
    """WF-R2: APPROVED -> challenged."""
    plan_approved(repo)
    state = changes(repo).state("add-oauth")
    assert state.phase.value == "challenged"
    assert [(h.from_phase, h.to) for h in state.history][-1] == ("proposed", "challenged")


def test_challenge_verdict_is_appended_to_proposal_md_as_a_review_block(repo: Path) -> None:
    """WF-R2 note: planning review content is a review block in proposal.md."""
    plan(repo, ChangeAgents(repo, challenges=[NEEDS_REVISION, APPROVED]))
    text = (repo / FOLDER / "proposal.md").read_text()
    assert text.startswith("---\nchange_id: add-oauth\n")
    first = text.index("## Challenge review 1: NEEDS_REVISION")
    second = text.index("## Challenge review 2: APPROVED")
    assert first < second
    assert "- **high**: No error handling task (at tasks.md)" in text


def test_needs_revision_stays_proposed_then_reproposal_and_rechallenge(repo: Path) -> None:
    """WF-R2/WF-R3 step 5: NEEDS_REVISION -> proposed, reproposal, challenge again."""
    agents = ChangeAgents(repo, challenges=[NEEDS_REVISION, APPROVED])
    backend = agents.backend()
    changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": backend})
    assert [s for _, s in agents.steps][-3:] == ["challenge", "reproposal", "challenge"]
    (reproposal,) = [r for r in backend.requests if step_of(r) == "reproposal"]
    assert "[high] No error handling task (at tasks.md)" in reproposal.prompt_text()
    history = [(h.from_phase, h.to) for h in changes(repo).state("add-oauth").history]
    assert ("proposed", "proposed") in history
    assert phase(repo) == "challenged"


def test_revision_rounds_stop_at_planning_iterations(repo: Path) -> None:
    """WF-R3 step 5: reproposal up to planning_iterations (quick mode: 1), then ask."""
    agents = ChangeAgents(repo, challenges=[NEEDS_REVISION])
    outcome = plan(repo, agents, mode="quick")
    assert outcome.action == "waiting"  # type: ignore[attr-defined]
    assert [s for _, s in agents.steps].count("challenge") == 1
    assert "reproposal" not in [s for _, s in agents.steps]
    state = changes(repo).state("add-oauth")
    assert state.phase.value == "proposed" and state.plan is not None
    assert state.plan.question is not None and "high-severity issues" in state.plan.question


def test_limit_with_minor_issues_waits_for_a_human_without_a_terminal(repo: Path) -> None:
    """Plan flow "AskUserQuestion: Implement / View / Continue": no terminal, no flag -> wait."""
    outcome = plan(repo, ChangeAgents(repo, challenges=[MINOR_REVISION]), mode="quick")
    assert outcome.action == "waiting"  # type: ignore[attr-defined]
    assert "--on-limit implement or --on-limit continue" in outcome.message  # type: ignore[attr-defined]
    journal = (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    needed = [json.loads(line) for line in journal if '"decision.needed"' in line]
    assert needed and "Implement it as it is" in needed[-1]["question"]


def test_on_limit_implement_with_minor_issues_moves_to_challenged(repo: Path) -> None:
    """WF-R1: challenged also means "iteration limit reached with minor issues"."""
    agents = ChangeAgents(repo, challenges=[MINOR_REVISION])
    outcome = plan(repo, agents, mode="quick", on_limit="implement")
    assert outcome.action == "challenged"  # type: ignore[attr-defined]
    state = changes(repo).state("add-oauth")
    assert state.history[-1].cause == "iteration limit reached with minor issues; implement chosen"


def test_on_limit_implement_is_refused_while_high_severity_issues_remain(repo: Path) -> None:
    """Only minor issues may be accepted at the limit."""
    with pytest.raises(BlockedError, match="high-severity issues"):
        plan(
            repo,
            ChangeAgents(repo, challenges=[NEEDS_REVISION]),
            mode="quick",
            on_limit="implement",
        )
    assert phase(repo) == "proposed"


def test_on_limit_continue_grants_more_revision_rounds(repo: Path) -> None:
    """Plan flow "Continue": more reproposal rounds after the limit."""
    agents = ChangeAgents(repo, challenges=[MINOR_REVISION, APPROVED])
    outcome = plan(repo, agents, mode="quick", on_limit="continue")
    assert outcome.action == "challenged"  # type: ignore[attr-defined]
    assert [s for _, s in agents.steps][-3:] == ["challenge", "reproposal", "challenge"]
    assert changes(repo).state("add-oauth").planning_iterations == 2


class ScriptedPerson:
    """A person at a terminal who answers from a list and remembers what was asked."""

    interactive = True

    def __init__(self, answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, tuple[str, ...]]] = []

    def choose(self, question: str, choices: Sequence[str], default: str) -> str:
        self.asked.append((question, tuple(choices)))
        return self.answers.pop(0)

    def confirm(self, question: str, default: bool) -> bool:
        raise AssertionError("not asked in this workflow")


def test_person_at_the_limit_can_view_then_implement(repo: Path) -> None:
    """Plan flow: AskUserQuestion Implement / View / Continue, answered at a terminal."""
    person = ScriptedPerson(["view", "implement"])
    shown: list[str] = []
    agents = ChangeAgents(repo, challenges=[MINOR_REVISION])
    outcome = changes(repo).plan(
        "add-oauth",
        "Add OAuth login",
        backends={"default": agents.backend()},
        asker=person,
        options=PlanOptions(mode="quick", viewer=shown.append),
    )
    assert [choices for _, choices in person.asked] == [
        ("implement", "continue", "view", "rechallenge"),
        ("implement", "continue", "rechallenge"),
    ]
    assert "## Challenge review 1: NEEDS_REVISION" in shown[0]
    assert outcome.action == "challenged"


def test_rejected_challenge_moves_to_rejected_and_plan_then_stops(repo: Path) -> None:
    """WF-R2: REJECTED -> rejected; plan flow: rejected -> review proposal.md."""
    agents = ChangeAgents(repo, challenges=[REJECTED])
    first = plan(repo, agents)
    assert first.action == "rejected" and phase(repo) == "rejected"  # type: ignore[attr-defined]
    calls = len(agents.steps)
    again = plan(repo, agents)
    assert again.action == "rejected"  # type: ignore[attr-defined]
    assert "--rechallenge" in again.message  # type: ignore[attr-defined]
    assert len(agents.steps) == calls


def test_rechallenge_after_a_manual_edit_returns_to_proposed(repo: Path) -> None:
    """State diagram: rejected -> proposed (manual edit + re-challenge)."""
    plan(repo, ChangeAgents(repo, challenges=[REJECTED]))
    proposal = repo / FOLDER / "proposal.md"
    proposal.write_text(proposal.read_text() + "\nUse SSO as well.\n")
    agents = ChangeAgents(repo, challenges=[APPROVED])
    outcome = plan(repo, agents, rechallenge=True)
    assert outcome.action == "challenged"  # type: ignore[attr-defined]
    assert agents.steps == [("challenger", "challenge")]
    moves = [(h.from_phase, h.to) for h in changes(repo).state("add-oauth").history]
    assert moves[-2:] == [("rejected", "proposed"), ("proposed", "challenged")]


def test_unclear_challenger_answer_is_never_approved(repo: Path) -> None:
    """Architecture principle 2: unclear never means approved."""
    outcome = plan(repo, ChangeAgents(repo, challenges=["The plan reads nicely."]), mode="quick")
    assert outcome.action == "waiting"  # type: ignore[attr-defined]
    state = changes(repo).state("add-oauth")
    assert state.plan is not None and state.plan.verdict == "NEEDS_REVISION"
    assert "could not be read as a verdict" in state.plan.issues[0].description


def test_approval_listing_a_high_severity_issue_is_not_approval(repo: Path) -> None:
    """Code, not the challenger, decides: APPROVED with a high issue needs revision."""
    contradictory = {**APPROVED, "issues": NEEDS_REVISION["issues"]}
    plan(repo, ChangeAgents(repo, challenges=[contradictory]), mode="quick")
    assert phase(repo) == "proposed"


def test_author_that_writes_no_proposal_is_retried_then_reported(repo: Path) -> None:
    """An agent that "succeeds" without its file is a failure naming the file."""
    lazy = ScriptedBackend(handler=lambda request: ScriptedReply(text="done!"))
    with pytest.raises(AgentError, match=r"without writing changes/add-oauth/proposal\.md"):
        changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": lazy})
    assert len(lazy.requests) == 2  # retries.agent defaults to 1
    assert phase(repo) == "proposed"


def test_new_change_needs_a_description(repo: Path) -> None:
    """plan_workflow(change_id, description): the description creates the proposal."""
    with pytest.raises(BadInputError, match="give a description"):
        changes(repo).plan("add-oauth", backends={"default": ChangeAgents(repo).backend()})
    assert not (repo / FOLDER).exists()


def test_prompts_come_from_overridable_templates(repo: Path) -> None:
    """Prompts ship as templates; .phasegate/prompts/change/ overrides them file by file."""
    override = repo / ".phasegate/prompts/change/proposal.md"
    override.parent.mkdir(parents=True)
    override.write_text("HOUSE RULES for {{ item }}: {{ description }}\n")
    seen: list[AgentRequest] = []
    agents = ChangeAgents(repo)

    def handler(request: AgentRequest) -> ScriptedReply | None:
        seen.append(request)
        return agents(request)

    changes(repo).plan(
        "add-oauth", "Add OAuth login", backends={"default": ScriptedBackend(handler=handler)}
    )
    assert seen[0].instructions.startswith("HOUSE RULES for add-oauth: Add OAuth login")
    assert "Write `changes/add-oauth/specs/" in seen[1].instructions


def test_a_needs_revision_with_only_a_summary_is_the_feedback_of_the_reproposal(
    repo: Path,
) -> None:
    """Feedback reaches the executor: a challenge asking for revision that names no issue gives
    the proposal author its summary, and the next challenger is shown it to check."""
    summary_only = {"verdict": "NEEDS_REVISION", "summary": "Split the data layer", "issues": []}
    agents = ChangeAgents(repo, challenges=[summary_only, APPROVED])
    backend = agents.backend()
    changes(repo).plan("add-oauth", "Add OAuth login", backends={"default": backend})
    (reproposal,) = [r for r in backend.requests if step_of(r) == "reproposal"]
    assert "Split the data layer" in reproposal.prompt_text()
    second = [r for r in backend.requests if step_of(r) == "challenge"][1]
    previous = second.prompt_text().split("Issues raised in the previous iteration", 1)
    assert len(previous) == 2 and "Split the data layer" in previous[1]
