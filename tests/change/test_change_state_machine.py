"""Seed 002 WF-R1 and the state diagram: the phase alone decides what each command does."""

from __future__ import annotations

from pathlib import Path

import pytest
from change_helpers import ChangeAgents, changes
from ruamel.yaml import YAML

from phasegate.change import TRANSITIONS, ChangeNotReady, ChangePhase
from phasegate.change.phases import check_transition
from phasegate.errors import ExitCode, StateCorruptError

P = ChangePhase


def write_state(repo: Path, phase: str, change: str = "add-oauth", **extra: object) -> Path:
    """A STATE.yaml as a person could write it: the seed's fields and nothing else needed."""
    folder = repo / "changes" / change
    folder.mkdir(parents=True, exist_ok=True)
    state = {
        "change_id": change,
        "phase": phase,
        "description": "Add OAuth login",
        "mode": "standard",
        "planning_iterations": 3,
        "implementation_iterations": 3,
        "created": "2026-01-01T00:00:00Z",
        "updated": "2026-01-01T00:00:00Z",
        **extra,
    }
    path = folder / "STATE.yaml"
    with open(path, "w") as handle:
        YAML(typ="safe", pure=True).dump(state, handle)
    return path


def test_transitions_are_exactly_the_seed_state_diagram() -> None:
    """Seed 002 state diagram: eight edges, from proposed through archived, and no others."""
    assert set(TRANSITIONS) == {
        (P.PROPOSED, P.CHALLENGED),
        (P.PROPOSED, P.PROPOSED),
        (P.PROPOSED, P.REJECTED),
        (P.REJECTED, P.PROPOSED),
        (P.CHALLENGED, P.IMPLEMENTING),
        (P.IMPLEMENTING, P.IMPLEMENTING),
        (P.IMPLEMENTING, P.COMPLETE),
        (P.COMPLETE, P.ARCHIVED),
    }


def test_a_move_outside_the_diagram_is_refused() -> None:
    """Seed 002 state diagram: proposed cannot jump to complete."""
    with pytest.raises(AssertionError, match="no transition proposed -> complete"):
        check_transition(P.PROPOSED, P.COMPLETE)


@pytest.mark.parametrize(
    ("phase", "hint"),
    [
        ("proposed", "phasegate plan add-oauth"),
        ("rejected", "--rechallenge"),
        ("archived", "nothing: the change is archived"),
    ],
)
def test_impl_in_a_wrong_phase_names_the_phase_and_what_to_run(
    repo: Path, phase: str, hint: str
) -> None:
    """WF-R1 / impl flow: a phase other than challenged or implementing is ChangeNotReady."""
    write_state(repo, phase)
    agents = ChangeAgents(repo)
    with pytest.raises(ChangeNotReady) as caught:
        changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert f"is in phase {phase}" in str(caught.value) and hint in str(caught.value)
    assert caught.value.exit_code is ExitCode.BLOCKED
    assert agents.steps == []


@pytest.mark.parametrize("phase", ["proposed", "challenged", "implementing"])
def test_archive_before_complete_is_refused(repo: Path, phase: str) -> None:
    """WF-R1 / state diagram: only complete -> archived."""
    write_state(repo, phase)
    with pytest.raises(ChangeNotReady, match=f"phase {phase}; 'archive' acts only on complete"):
        changes(repo).archive("add-oauth")
    assert (repo / "changes/add-oauth/STATE.yaml").exists()


def test_plan_on_a_challenged_change_calls_no_agent_and_points_to_impl(repo: Path) -> None:
    """Plan flow: phase challenged -> planning complete, run impl."""
    write_state(repo, "challenged")
    agents = ChangeAgents(repo)
    outcome = changes(repo).plan("add-oauth", backends={"default": agents.backend()})
    assert outcome.action == "already-planned"
    assert "phasegate impl add-oauth" in outcome.message
    assert agents.steps == []


def test_plan_beyond_planning_says_so_and_what_to_run(repo: Path) -> None:
    """Plan flow: any later phase -> beyond planning."""
    write_state(repo, "complete")
    outcome = changes(repo).plan("add-oauth", backends={"default": ChangeAgents(repo).backend()})
    assert outcome.action == "beyond-planning"
    assert "phase complete" in outcome.message and "phasegate archive add-oauth" in outcome.message


def test_impl_acts_on_a_hand_written_challenged_state(repo: Path) -> None:
    """WF-R1: the phase field alone is enough; no bookkeeping from plan is needed."""
    write_state(repo, "challenged")
    (repo / "changes/add-oauth/tasks.md").write_text("## 1. Data Layer\n- [ ] make a model\n")
    agents = ChangeAgents(repo)
    outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert outcome.status == "complete"
    assert agents.steps == [("implementer", "implement:data"), ("reviewer", "review")]


def test_archive_acts_on_a_hand_written_complete_state(repo: Path) -> None:
    """WF-R1: complete is all archive looks at."""
    write_state(repo, "complete")
    outcome = changes(repo).archive("add-oauth")
    assert outcome.action == "archived"
    assert not (repo / "changes/add-oauth").exists()


def test_unknown_phase_is_a_corrupt_state_left_untouched(repo: Path) -> None:
    """WF-R1 names the valid phases; anything else is reported, never overwritten."""
    path = write_state(repo, "half-done")
    before = path.read_bytes()
    with pytest.raises(StateCorruptError, match=r"STATE\.yaml is invalid at phase"):
        changes(repo).impl("add-oauth", backends={"default": ChangeAgents(repo).backend()})
    assert path.read_bytes() == before


@pytest.mark.parametrize("phase", ["challenged", "complete"])
def test_a_state_file_of_only_change_id_and_phase_is_accepted(repo: Path, phase: str) -> None:
    """Seed 002 WF-R1 (the phase alone decides): a hand-written STATE.yaml holding nothing but
    change_id and phase is read with defaults for the rest, and the command for that phase
    acts on it."""
    folder = repo / "changes" / "add-oauth"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "STATE.yaml").write_text(f"change_id: add-oauth\nphase: {phase}\n")
    if phase == "challenged":
        (folder / "tasks.md").write_text("## 1. Data Layer\n- [ ] make a model\n")
        agents = ChangeAgents(repo)
        outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
        assert outcome.status == "complete"
        assert changes(repo).state("add-oauth").phase is P.COMPLETE
    else:
        assert changes(repo).archive("add-oauth").action == "archived"


def test_keys_a_person_adds_to_state_yaml_are_kept_where_they_were(repo: Path) -> None:
    """STATE.yaml: keys a person adds survive the runs that rewrite the file, in place."""
    from change_helpers import plan_approved

    plan_approved(repo)
    path = repo / "changes/add-oauth/STATE.yaml"
    text = path.read_text()
    path.write_text(
        text.replace("description: Add OAuth login\n", "description: Add OAuth login\nowner: me\n")
    )
    agents = ChangeAgents(repo)
    outcome = changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    assert outcome.status == "complete"
    data = YAML(typ="safe", pure=True).load(path.read_text())
    assert data["owner"] == "me"
    assert data["phase"] == "complete"
    keys = list(data)
    assert keys[keys.index("description") + 1] == "owner"


def test_a_hand_written_state_keeps_its_own_keys(repo: Path) -> None:
    write_state(repo, "challenged", team="payments")
    (repo / "changes/add-oauth/tasks.md").write_text("## 1. Data Layer\n- [ ] make a model\n")
    agents = ChangeAgents(repo)
    changes(repo).impl("add-oauth", backends={"default": agents.backend()})
    data = YAML(typ="safe", pure=True).load((repo / "changes/add-oauth/STATE.yaml").read_text())
    assert (data["phase"], data["team"]) == ("complete", "payments")


def test_history_starts_with_the_creation_by_plan(repo: Path) -> None:
    """Seed 002's ``[*] --> proposed: plan (init)`` is the first entry of the history."""
    from change_helpers import plan_approved

    plan_approved(repo)
    history = changes(repo).state("add-oauth").history
    assert [(h.from_phase, h.to, h.cause) for h in history[:2]] == [
        (None, P.PROPOSED, "plan (init)"),
        (P.PROPOSED, P.CHALLENGED, "challenger 1 APPROVED"),
    ]
    assert history[0].at


def test_a_hand_written_state_gets_no_invented_creation_entry(repo: Path) -> None:
    write_state(repo, "challenged")
    (repo / "changes/add-oauth/tasks.md").write_text("## 1. Data Layer\n- [ ] make a model\n")
    changes(repo).impl("add-oauth", backends={"default": ChangeAgents(repo).backend()})
    history = changes(repo).state("add-oauth").history
    assert history and all(h.cause != "plan (init)" for h in history)
