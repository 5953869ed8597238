"""Two tasks of a plan with the same title are told apart only by their order (the second
one's key is its title's with ``#2``): the run says so at the second one's line, as a
warning, so a person knows that moving or removing one makes the other take its place."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import PLAN, cli
from test_implement_cli import APPROVING, scripted_repo

TWICE = """# Plan: Signing

## Phase 1: Signing

- [ ] **Write tests** [`agent: the-developer`]
- [ ] **Sign outgoing payloads** [`agent: the-developer`]

## Phase 2: Docs

- [ ] **Write tests** [`agent: the-developer`]
"""


def test_a_second_task_with_the_same_title_is_warned_of(tmp_path: Path) -> None:
    root = scripted_repo(tmp_path, APPROVING, plan=TWICE)
    ran = cli(root, "implement", "006")
    said = ran.stdout + ran.stderr
    assert ran.returncode == 0, said
    assert (
        f"! {PLAN}:10: task 'Write tests' has the title of the task at line 5: a task is "
        "known by its title"
    ) in said, said
    assert "Sign outgoing payloads' has the title" not in said
