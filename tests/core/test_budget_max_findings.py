"""An agent node's ``budget``: a ``max`` that is a typo (``tree``, ``true``, ``"0"``, ``2.5``)
or ``max`` together with ``revisions`` is refused by ``validate`` with one line naming the
file, the line and the field, and saying what is allowed; the legal forms still load.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.errors import ExitCode, WorkflowError
from phasegate.workflow.loader import WorkflowProblems, load_workflow
from phasegate.workflow.registry import WorkflowRegistry

TEMPLATES = {"write.md": "Write {{ item }}.\n", "critic.md": "Review {{ item }}.\n"}


def budgeted(budget: str, view: str = "") -> str:
    return f"""\
name: budgeted
modes:
  standard: {{max_iterations: 2}}
roles:
  executor: {{access: write}}
  critic: {{access: read-only}}
{view}nodes:
  - id: write
    executor: executor
    outputs: [notes.md]
    reviewers:
      - {{role: critic, reader: words, on: {{APPROVED: pass, FIX: revise, UNCLEAR: revise}}}}
    budget: {budget}
    on: {{pass: done}}
  - id: done
    kind: end
"""


def write(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "workflows"
    prompts = folder / "prompts" / "budgeted"
    prompts.mkdir(parents=True, exist_ok=True)
    for name, body in TEMPLATES.items():
        (prompts / name).write_text(body, encoding="utf-8")
    path = folder / "budgeted.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(WorkflowError) as caught:
        load_workflow(path)
    error = caught.value
    return list(error.problems) if isinstance(error, WorkflowProblems) else [str(error)]


@pytest.mark.parametrize(
    "budget",
    [
        "{max: 3}",
        "{max: mode}",
        "{revisions: 0}",
        "{revisions: 2, on_exhausted: complete}",
        "{}",
    ],
)
def test_legal_budgets_load(tmp_path: Path, budget: str) -> None:
    assert load_workflow(write(tmp_path, budgeted(budget))).name == "budgeted"


def test_a_name_the_view_reads_back_loads(tmp_path: Path) -> None:
    """The implement view puts ``max_cycles`` in the item's data: a budget may name it."""
    text = budgeted("{max: max_cycles}", view="view: implement\n")
    assert load_workflow(write(tmp_path, text)).name == "budgeted"


def test_the_built_in_workflows_naming_view_numbers_still_load(tmp_path: Path) -> None:
    registry = WorkflowRegistry(tmp_path)
    for name in ("change", "implement", "team", "feature"):
        assert registry.get(name).workflow.name == name


@pytest.mark.parametrize(
    ("budget", "words"),
    [
        ("{max: tree}", ["'tree'", "'mode'", "reads back no number"]),
        ("{max: true}", ["true", "whole number"]),
        ("{max: false}", ["false", "whole number"]),
        ('{max: "0"}', ["'0'", "without quotes"]),
        ('{max: "3"}', ["'3'", "without quotes"]),
        ("{max: 2.5}", ["2.5", "whole number"]),
        ("{max: 0}", ["at least 1"]),
        ("{max: 2, revisions: 3}", ["'max' or 'revisions'", "not both"]),
        ("{revisions: true}", ["true", "whole number"]),
        ("{revisions: 1.5}", ["1.5", "whole number"]),
        ("{max: [3]}", ["whole number"]),
    ],
)
def test_a_bad_budget_is_one_clear_problem(tmp_path: Path, budget: str, words: list[str]) -> None:
    text = budgeted(budget)
    path = write(tmp_path, text)
    problems = problems_of(path)
    assert len(problems) == 1, problems
    line = text.splitlines().index(f"    budget: {budget}") + 1
    assert problems[0].startswith(f"{path}:{line}: nodes[0].budget"), problems[0]
    for word in words:
        assert word in problems[0], problems[0]


def test_a_name_of_another_view_is_refused_naming_the_views_names(tmp_path: Path) -> None:
    text = budgeted("{max: tree}", view="view: implement\n")
    (problem,) = problems_of(write(tmp_path, text))
    assert "nodes[0].budget.max" in problem and "max_cycles" in problem and "'mode'" in problem


def test_cli_validate_refuses_a_typo_with_exit_2(tmp_path: Path, capsys) -> None:
    from phasegate.cli import main

    path = write(tmp_path, budgeted("{max: tree}"))
    assert main(["validate", str(path)]) == ExitCode.BAD_INPUT == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "nodes[0]" in line]
    assert len(lines) == 1 and "nodes[0].budget.max:" in lines[0], err
    assert "Traceback" not in err
