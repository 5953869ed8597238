"""The shipped ``change`` workflow: seed 002's roles, limits and prompt templates."""

from __future__ import annotations

import pytest

from phasegate.workflow.prompts import find_template, unknown_placeholders
from phasegate.workflow.registry import WorkflowRegistry

#: Every template the change workflow's code renders.
TEMPLATES = (
    "proposal.md",
    "spec.md",
    "tasks.md",
    "challenger.md",
    "reproposal.md",
    "implement.md",
    "fix.md",
    "reviewer.md",
)


def test_the_four_seed_roles_are_separate_with_least_privilege() -> None:
    """Seed 002: proposal author, challenger, implementer, reviewer; judges are read-only."""
    workflow = WorkflowRegistry().get("change").workflow
    access = {name: role.access for name, role in workflow.roles.items()}
    assert access == {
        "proposal-author": "write",
        "challenger": "read-only",
        "implementer": "write",
        "reviewer": "read-only",
    }


def test_change_items_live_in_changes_with_state_yaml() -> None:
    """Seed 002: STATE.yaml per change; run by plan/impl/archive, not the generic runner."""
    workflow = WorkflowRegistry().get("change").workflow
    from phasegate.engine.plugin_api import view_files

    assert (workflow.items_dir, view_files(workflow)) == ("changes", ["STATE.yaml"])
    assert tuple(workflow.commands) == ("plan", "impl", "archive")


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_the_code_renders_is_shipped_and_valid(name: str) -> None:
    """Prompts are shipped templates with only known placeholders (checked, not found mid-run)."""
    loaded = WorkflowRegistry().get("change")
    found = find_template(name, loaded.prompt_path)
    assert found is not None
    assert unknown_placeholders(found.read_text()) == []
