"""PLAN.md problems name ``file:line:column:`` where a column means something: the
metadata a task has written wrong, the ``agent`` a task names that is not known here."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import PLAN, cli
from test_implement_cli import APPROVING, ONE_TASK, scripted_repo

LINE = "- [ ] **Sign outgoing payloads** [`agent: the-developer`] [`review_focus: security`]"


def test_a_bad_metadata_value_names_its_column(tmp_path: Path) -> None:
    plan = ONE_TASK.replace(LINE, LINE + " [`parallel: maybe`]")
    root = scripted_repo(tmp_path, APPROVING, plan=plan)
    ran = cli(root, "implement", "006")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    column = LINE.index("[`review_focus") + len("[`review_focus: security`] ") + 1
    assert ran.stderr.strip().splitlines()[-1] == (
        f"phasegate: error: {PLAN}:5:{column}: `parallel: maybe` must be true or false"
    ), ran.stderr


def test_an_unknown_agent_names_the_column_of_its_metadata(tmp_path: Path) -> None:
    root = scripted_repo(tmp_path, APPROVING, plan=ONE_TASK.replace("the-developer", "the-wiz"))
    ran = cli(root, "implement", "006")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    column = LINE.index("[`agent") + 1
    assert (
        f"phasegate: error: {PLAN}:5:{column}: task 'Sign outgoing payloads' names agent 'the-wiz'"
    ) in ran.stderr, ran.stderr
