"""Seed 000 interface 1, validateTransition: proceed, warning, or blocked."""

from __future__ import annotations

from itertools import pairwise

import pytest

from phasegate.workflow.loader import load_workflow
from phasegate.workflow.model import Workflow
from phasegate.workflow.registry import WorkflowRegistry
from phasegate.workflow.transitions import expected_next, validate_transition

ALL_DOCUMENTS = ("brainstorm.md", "spec.md", "design.md", "plan.md", "tasks.md")


@pytest.fixture(scope="module")
def feature() -> Workflow:
    return WorkflowRegistry().get("feature").workflow


def present(*files: str) -> dict[str, bool]:
    return dict.fromkeys(files, True)


def completed_before(workflow: Workflow, phase: str) -> set[str]:
    names = workflow.label_names
    return set(names[: names.index(phase)])


def test_first_phase_proceeds_on_a_new_item(feature: Workflow) -> None:
    """Proceed: correct order, starting from no phase."""
    result = validate_transition(feature, None, "brainstorm", {})
    assert (result.type, result.allowed, result.message) == ("proceed", True, None)


@pytest.mark.parametrize(
    ("current", "target"),
    list(pairwise(["brainstorm", "specify", "design", "create-plan", "create-tasks", "implement"])),
)
def test_next_phase_in_order_proceeds(feature: Workflow, current: str, target: str) -> None:
    """Proceed: correct order, with every earlier phase complete and its artifact present."""
    result = validate_transition(
        feature,
        current,
        target,
        present(*ALL_DOCUMENTS),
        completed=completed_before(feature, target),
    )
    assert result.type == "proceed", result.message


def test_implement_without_spec_is_hard_blocked(feature: Workflow) -> None:
    """Hard block: /implement without spec.md, even in the right order."""
    result = validate_transition(
        feature,
        "create-tasks",
        "implement",
        present("brainstorm.md", "design.md", "plan.md", "tasks.md"),
        completed=completed_before(feature, "implement"),
    )
    assert (result.type, result.allowed) == ("blocked", False)
    assert result.message is not None
    assert "spec.md" in result.message
    assert "specify" in result.message  # says which phase produces it


def test_create_tasks_without_plan_is_hard_blocked(feature: Workflow) -> None:
    """Hard block: /create-tasks without plan.md."""
    result = validate_transition(
        feature,
        "create-plan",
        "create-tasks",
        present("brainstorm.md", "spec.md", "design.md"),
        completed=completed_before(feature, "create-tasks"),
    )
    assert (result.type, result.allowed) == ("blocked", False)
    assert result.message is not None
    assert "plan.md" in result.message


def test_hard_block_outranks_a_warning(feature: Workflow) -> None:
    """Skipping straight to implement with no spec.md is blocked, not merely warned."""
    result = validate_transition(
        feature, "brainstorm", "implement", present("brainstorm.md"), completed={"brainstorm"}
    )
    assert result.type == "blocked"


def test_skipping_phases_warns(feature: Workflow) -> None:
    """Warning: skipping phases (brainstorm -> design)."""
    result = validate_transition(
        feature,
        "brainstorm",
        "design",
        present("brainstorm.md", "spec.md"),
        completed={"brainstorm"},
    )
    assert (result.type, result.allowed) == ("warning", True)
    assert result.message == "skipping specify (not completed)"


def test_missing_soft_prerequisite_warns(feature: Workflow) -> None:
    """A missing soft prerequisite warns but allows: design without spec.md, specify never
    run (a spec.md the completed specify made and that is gone since blocks instead)."""
    result = validate_transition(
        feature,
        "brainstorm",
        "design",
        present("brainstorm.md"),
        completed={"brainstorm"},
    )
    assert (result.type, result.allowed) == ("warning", True)
    assert result.message == "skipping specify (not completed); spec.md missing (soft prerequisite)"


def test_rerunning_a_completed_phase_warns(feature: Workflow) -> None:
    result = validate_transition(
        feature,
        "design",
        "specify",
        present("brainstorm.md", "spec.md", "design.md"),
        completed={"brainstorm", "specify", "design"},
    )
    assert (result.type, result.allowed) == ("warning", True)
    assert result.message == "specify is already complete; it will run again"


def test_mode_skipped_phase_does_not_warn(write_workflow, demo_yaml: str) -> None:
    """Passing over a phase the mode skips is the normal order, not a skip."""
    workflow = load_workflow(write_workflow(demo_yaml)).workflow
    result = validate_transition(
        workflow, "draft", "finish", present("draft.md"), completed={"draft"}, skipped=("polish",)
    )
    assert result.type == "proceed", result.message


def test_same_jump_without_the_mode_skip_warns(write_workflow, demo_yaml: str) -> None:
    """Control for the test above: without the mode skip the same jump is a skip."""
    workflow = load_workflow(write_workflow(demo_yaml)).workflow
    result = validate_transition(
        workflow, "draft", "finish", present("draft.md"), completed={"draft"}
    )
    assert result.type == "warning"
    assert result.message == "skipping polish (not completed)"


def test_artifact_of_a_mode_skipped_phase_is_not_a_missing_soft_prerequisite(
    feature: Workflow,
) -> None:
    """When the mode skips design, create-plan does not warn that design.md is missing."""
    result = validate_transition(
        feature,
        "specify",
        "create-plan",
        present("brainstorm.md", "spec.md"),
        completed={"brainstorm", "specify"},
        skipped=("design",),
    )
    assert result.type == "proceed", result.message


def test_expected_next_follows_mode_skips(feature: Workflow) -> None:
    assert expected_next(feature, "specify", {"brainstorm", "specify"}, ("design",)) == [
        "create-plan"
    ]


def test_expected_next_of_an_unfinished_phase_is_that_phase(feature: Workflow) -> None:
    """A phase started but not completed is resumed before anything else."""
    assert expected_next(feature, "design", {"brainstorm", "specify"}, ()) == ["design"]
