"""Built-in and repository workflows, and the prompt templates they use."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from phasegate.errors import NotFoundError, WorkflowError
from phasegate.workflow.prompts import TEMPLATE_VARIABLES, render, unknown_placeholders
from phasegate.workflow.registry import BUILTIN_DIR, WorkflowRegistry

Edit = Callable[[str, str, str], str]

FEATURE_PHASES = [
    "brainstorm",
    "specify",
    "design",
    "create-plan",
    "create-tasks",
    "implement",
    "verify",
    "finish",
]


def test_builtin_feature_workflow_has_seed_000_phases_in_order() -> None:
    """Seed 000: brainstorm -> specify -> design -> create-plan -> create-tasks ->
    implement -> verify -> finish."""
    loaded = WorkflowRegistry().get("feature")
    assert loaded.source == "built-in"
    workflow = loaded.workflow
    assert workflow.label_names == FEATURE_PHASES
    finish, end = workflow.nodes[-2:]
    assert (finish.kind, getattr(finish, "action", None)) == ("action", "finish")
    assert end.kind == "end" and workflow.successors_of(finish.id) == [end.id]


def test_builtin_feature_modes_have_seed_000_iteration_limits() -> None:
    """Seed 000 TD3: Hotfix=1, Quick=2, Standard=3, Full=5; Standard is the default."""
    workflow = WorkflowRegistry().get("feature").workflow
    limits = {name: mode.max_iterations for name, mode in workflow.modes.items()}
    assert limits == {"hotfix": 1, "quick": 2, "standard": 3, "full": 5}
    assert workflow.default_mode == "standard"


def test_builtin_feature_hard_prerequisites_match_seed_000() -> None:
    """Seed 000 interface 1: implement needs spec.md, create-tasks needs plan.md."""
    workflow = WorkflowRegistry().get("feature").workflow
    assert "spec.md" in workflow.node("implement").prerequisites.hard
    assert "plan.md" in workflow.node("create-tasks").prerequisites.hard


def test_builtin_feature_reviewers_are_read_only() -> None:
    """Seed 000: chain reviewer on documents, final reviewer on code, both read-only."""
    workflow = WorkflowRegistry().get("feature").workflow
    reviewers = {n.id: getattr(n, "reviewer", None) for n in workflow.nodes if n.kind == "agent"}
    assert reviewers["specify"] == "chain-reviewer"
    assert reviewers["implement"] == "final-reviewer"
    assert {workflow.roles[r].access for r in reviewers.values() if r} == {"read-only"}


def test_feature_state_lives_in_meta_json_with_review_history() -> None:
    """Seed 000 TD2: `.meta.json` in the feature folder plus `.review-history.md`."""
    from phasegate.engine.plugin_api import view_files

    workflow = WorkflowRegistry().get("feature").workflow
    assert view_files(workflow) == [".meta.json", ".review-history.md"]


@pytest.mark.parametrize("name", sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml")))
def test_every_builtin_workflow_validates(name: str) -> None:
    """Shipped workflows pass the same validation as users' ones."""
    assert WorkflowRegistry().get(name).name == name


def test_unknown_workflow_names_the_available_ones(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=r"unknown workflow 'nope' \(available: .*feature"):
        WorkflowRegistry(tmp_path).get("nope")


def test_repo_workflow_is_found(tmp_path: Path, write_workflow, demo_yaml: str) -> None:
    """`.phasegate/workflows/*.yaml` of a repository are listed next to the built-ins."""
    write_workflow(demo_yaml, directory=tmp_path / ".phasegate" / "workflows")
    registry = WorkflowRegistry(tmp_path)
    assert {"demo", "feature"} <= set(registry.names())
    loaded = registry.get("demo")
    assert loaded.source == "repo"
    assert loaded.path == tmp_path / ".phasegate" / "workflows" / "demo.yaml"


def test_repo_workflow_overrides_builtin_of_same_name(
    tmp_path: Path, write_workflow, demo_yaml: str, edit_text: Edit
) -> None:
    """A repo workflow named like a built-in replaces it."""
    text = edit_text(demo_yaml, "name: demo", "name: feature")
    write_workflow(text, name="feature", directory=tmp_path / ".phasegate" / "workflows")
    loaded = WorkflowRegistry(tmp_path).get("feature")
    assert loaded.source == "repo"
    assert loaded.workflow.label_names == ["draft", "polish", "finish"]


def test_invalid_repo_workflow_fails_on_get(
    tmp_path: Path, write_workflow, demo_yaml: str, edit_text: Edit
) -> None:
    text = edit_text(demo_yaml, "{max_iterations: 3}", "{max_iterations: 0}")
    path = write_workflow(text, directory=tmp_path / ".phasegate" / "workflows")
    with pytest.raises(WorkflowError, match=str(path)):
        WorkflowRegistry(tmp_path).get("demo")


def test_repo_prompt_override_takes_precedence_over_builtin(tmp_path: Path) -> None:
    """`.phasegate/prompts/<workflow>/<template>` replaces the shipped template, file by file."""
    override = tmp_path / ".phasegate" / "prompts" / "feature" / "specify.md"
    override.parent.mkdir(parents=True)
    override.write_text("Our own specify prompt for {{ item }}.\n", encoding="utf-8")
    loaded = WorkflowRegistry(tmp_path).get("feature")
    assert loaded.template("specify.md") == override
    assert loaded.template("design.md") == BUILTIN_DIR / "prompts" / "feature" / "design.md"


def test_prompt_override_with_unknown_placeholder_is_refused(tmp_path: Path) -> None:
    """Overrides are validated like shipped templates."""
    override = tmp_path / ".phasegate" / "prompts" / "feature" / "specify.md"
    override.parent.mkdir(parents=True)
    override.write_text("Spec for {{ ticket }}.\n", encoding="utf-8")
    with pytest.raises(WorkflowError, match=r"nodes\[1\]\.prompt: .*ticket"):
        WorkflowRegistry(tmp_path).get("feature")


def test_render_fills_known_placeholders() -> None:
    text = "Phase {{ phase }} of {{item}}, iteration {{ iteration }}/{{ max_iterations }}."
    values = {"phase": "design", "item": "auth", "iteration": 2, "max_iterations": 3}
    assert render(text, values) == "Phase design of auth, iteration 2/3."


def test_unknown_placeholders_lists_only_unknown_names() -> None:
    text = "{{ item }} {{ colour }} {{ role }} {{ zeta }} {{ colour }}"
    assert unknown_placeholders(text) == ["colour", "zeta"]
    assert {"item", "role"} <= TEMPLATE_VARIABLES
