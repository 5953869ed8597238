"""A workflow is data validated on load: every bad definition is refused with a
message naming the file, the line (where there is one) and the field.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from phasegate.errors import ExitCode, WorkflowError
from phasegate.workflow.loader import WorkflowProblems, load_workflow

#: A phase inserted before ``finish`` that needs polish's final.md (a hard prerequisite).
PUBLISH_THEN_FINISH = """\
  - name: publish
    artifact: release.md
    prerequisites: {hard: [final.md]}
    executor: executor
  - name: finish"""
PUBLISH_TEMPLATES = {
    "draft.md": "Draft {{ item }}.\n",
    "polish.md": "Polish {{ item }}.\n",
    "publish.md": "Publish {{ item }}.\n",
    "reviewer.md": "Review {{ phase }}.\n",
}

Edit = Callable[[str, str, str], str]
LineOf = Callable[..., int]


def cli(argv: list[str]) -> int:
    """Run the real CLI in-process (imported here so a broken CLI fails only these tests)."""
    from phasegate.cli import main

    return main(argv)


def problems_of(path: Path) -> list[str]:
    """Every problem ``load_workflow`` reports for ``path`` (fails if it loads)."""
    with pytest.raises(WorkflowError) as caught:
        load_workflow(path)
    error = caught.value
    return list(error.problems) if isinstance(error, WorkflowProblems) else [str(error)]


def only_problem(path: Path) -> str:
    problems = problems_of(path)
    assert len(problems) == 1, problems
    return problems[0]


def test_the_demo_workflow_is_valid(write_workflow, demo_yaml: str) -> None:
    """The fixture every other test breaks in one place is itself valid."""
    loaded = load_workflow(write_workflow(demo_yaml))
    assert loaded.workflow.label_names == ["draft", "polish", "finish"]


def test_unknown_phase_in_next_names_file_line_and_field(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """Every transition names a known phase."""
    text = edit_text(
        demo_yaml, "    artifact: draft.md\n", "    artifact: draft.md\n    next: [ship]\n"
    )
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(f"{path}:{line_number(text, 'next: [ship]')}: phases[0].next[0]: ")
    assert "unknown phase 'ship'" in problem


def test_unreachable_phase_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """Every phase is reachable from the first one."""
    text = edit_text(
        demo_yaml, "    artifact: draft.md\n", "    artifact: draft.md\n    next: finish\n"
    )
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(f"{path}:{line_number(text, 'name: polish')}: phases[1].name: ")
    assert "'polish' is unreachable" in problem


def test_cycle_without_exit_has_no_way_to_finish(write_workflow, line_number: LineOf) -> None:
    """Every phase can reach a final phase: a loop with no way out is refused."""
    text = """\
name: demo
modes: {standard: {max_iterations: 2}}
roles: {executor: {access: write}}
phases:
  - name: draft
    artifact: draft.md
    executor: executor
    next: [polish, finish]
  - name: polish
    artifact: final.md
    executor: executor
    next: [recheck]
  - name: recheck
    artifact: check.md
    executor: executor
    next: [polish]
  - name: finish
    kind: finish
"""
    templates = {"draft.md": "x\n", "polish.md": "x\n", "recheck.md": "x\n"}
    path = write_workflow(text, templates=templates)
    problems = problems_of(path)
    assert problems == [
        f"{path}:{line_number(text, 'next: [recheck]')}: phases[1].next: "
        "phase 'polish' has no way to finish (no final phase is reachable)",
        f"{path}:{line_number(text, 'next: [polish]')}: phases[2].next: "
        "phase 'recheck' has no way to finish (no final phase is reachable)",
    ]


def test_duplicate_phase_names_are_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """Phase names are unique (a transition must name one phase)."""
    text = edit_text(demo_yaml, "- name: polish", "- name: draft")
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(
        f"{path}:{line_number(text, '- name: draft', 2)}: phases[1].name: duplicate phase name"
    )
    assert "'draft'" in problem


def test_duplicate_yaml_key_is_refused_with_its_line(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """A key written twice is an error, not a silent last-one-wins."""
    text = edit_text(
        demo_yaml, "    artifact: draft.md\n", "    artifact: draft.md\n    artifact: other.md\n"
    )
    path = write_workflow(text)
    problem = only_problem(path)
    line = line_number(text, "artifact: other.md")
    assert problem.startswith(f"{path}:{line}:5: invalid YAML: ")
    assert 'duplicate key "artifact"' in problem
    assert "<unicode string>" not in problem


def test_invalid_yaml_names_file_and_line(write_workflow, demo_yaml: str) -> None:
    """Unparseable YAML is reported as one line naming the file and the line."""
    text = demo_yaml + "  - name: [unclosed\n"
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(f"{path}:")
    assert "invalid YAML" in problem
    assert "\n" not in problem


def test_top_level_must_be_a_mapping(write_workflow) -> None:
    path = write_workflow("- just\n- a list\n")
    assert only_problem(path) == (
        f"{path}:1: a workflow file must hold a mapping at the top level "
        "(name: ..., nodes: ...), not a list"
    )


def test_unknown_default_mode_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """default_mode names one of the workflow's modes."""
    text = edit_text(demo_yaml, "default_mode: standard", "default_mode: fast")
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(f"{path}:{line_number(text, 'default_mode')}: default_mode: ")
    assert "unknown mode 'fast'" in problem


def test_zero_max_iterations_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """Seed 000 TD3: every mode allows at least one review iteration."""
    text = edit_text(demo_yaml, "{max_iterations: 3}", "{max_iterations: 0}")
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(
        f"{path}:{line_number(text, 'standard:')}: modes.standard.max_iterations: "
    )
    assert problem.endswith("modes.standard.max_iterations: should be at least 1, not 0")


def test_mode_skipping_an_unknown_phase_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    text = edit_text(demo_yaml, "skip: [polish]", "skip: [polishing]")
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(f"{path}:{line_number(text, 'skip:')}: modes.quick.skip[0]: ")
    assert "unknown phase 'polishing'" in problem


def test_mode_cannot_skip_the_first_phase(write_workflow, demo_yaml: str, edit_text: Edit) -> None:
    path = write_workflow(edit_text(demo_yaml, "skip: [polish]", "skip: [draft]"))
    assert "modes.quick.skip[0]: a mode cannot skip the first phase" in only_problem(path)


def test_unknown_role_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    text = edit_text(
        demo_yaml,
        "    prerequisites: {soft: [draft.md]}\n    executor: executor\n",
        "    prerequisites: {soft: [draft.md]}\n    executor: author\n",
    )
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(
        f"{path}:{line_number(text, 'executor: author')}: phases[1].executor: "
    )
    assert "unknown role 'author'" in problem


def test_reviewer_role_with_write_access_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """Seed 000: the chain reviewer is read-only (least privilege)."""
    text = edit_text(demo_yaml, "reviewer: {access: read-only}", "reviewer: {access: write}")
    path = write_workflow(text)
    problems = problems_of(path)
    assert problems[0].startswith(
        f"{path}:{line_number(text, 'reviewer: reviewer')}: phases[0].reviewer: "
    )
    assert all("must be read-only" in p for p in problems)
    assert len(problems) == 2  # both phases using the role are named


def test_unknown_field_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """A misspelt key is an error, never silently ignored."""
    text = edit_text(
        demo_yaml, "    artifact: final.md\n", "    artifact: final.md\n    reveiwer: reviewer\n"
    )
    path = write_workflow(text)
    assert only_problem(path) == (
        f"{path}:{line_number(text, 'reveiwer')}: phases[1].reveiwer: unknown field; "
        "did you mean 'reviewer'?"
    )


def test_missing_required_field_is_named(write_workflow, demo_yaml: str, edit_text: Edit) -> None:
    path = write_workflow(
        edit_text(
            demo_yaml, "roles:\n  executor: {access: write}\n  reviewer: {access: read-only}\n", ""
        )
    )
    assert f"{path}:1: roles: required field is missing" in problems_of(path)


def test_prerequisite_no_phase_produces_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """Prerequisites name artifacts of the workflow (a typo would block forever)."""
    text = edit_text(demo_yaml, "{soft: [draft.md]}", "{hard: [spec.md]}")
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(
        f"{path}:{line_number(text, 'hard: [spec.md]')}: phases[1].prerequisites.hard[0]: "
    )
    assert "'spec.md' is not an artifact of any phase" in problem


def test_name_must_match_file_name(write_workflow, demo_yaml: str) -> None:
    path = write_workflow(demo_yaml, name="other")
    problems = problems_of(path)
    assert problems[0] == (
        f"{path}:1: name: name 'demo' must match the file name 'other' "
        "(rename the file to demo.yaml, or write name: other)"
    )


def test_missing_prompt_template_is_refused(
    write_workflow, demo_yaml: str, line_number: LineOf
) -> None:
    """Every agent phase's templates exist when the workflow loads, not mid-run."""
    templates = {"draft.md": "Draft.\n", "reviewer.md": "Review.\n"}
    path = write_workflow(demo_yaml, templates=templates)
    problem = only_problem(path)
    assert problem.startswith(
        f"{path}:{line_number(demo_yaml, '- name: polish')}: phases[1].executor_prompt: "
    )
    assert "prompt template 'polish.md' not found" in problem


def test_template_with_unknown_placeholder_is_refused(
    write_workflow, demo_yaml: str, line_number: LineOf
) -> None:
    templates = {
        "draft.md": "Draft {{ item }}.\n",
        "polish.md": "Polish {{ item }} for {{ customer }}.\n",
        "reviewer.md": "Review.\n",
    }
    path = write_workflow(demo_yaml, templates=templates)
    problem = only_problem(path)
    assert problem.startswith(
        f"{path}:{line_number(demo_yaml, '- name: polish')}: phases[1].executor_prompt: "
    )
    assert "polish.md:1:23: unknown placeholder 'customer' (known: " in problem


def test_every_problem_is_listed_not_just_the_first(
    write_workflow, demo_yaml: str, edit_text: Edit
) -> None:
    """One validation run reports all problems; the message counts the rest."""
    text = edit_text(demo_yaml, "default_mode: standard", "default_mode: fast")
    text = edit_text(text, "{soft: [draft.md]}", "{soft: [notes.md]}")
    path = write_workflow(text)
    with pytest.raises(WorkflowProblems) as caught:
        load_workflow(path)
    assert len(caught.value.problems) == 2
    assert str(caught.value).endswith(f"(and 1 more: phasegate validate {path} lists them)")


def test_cli_validate_exits_2_and_prints_each_problem(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf, capsys
) -> None:
    """`phasegate validate FILE` exits with BAD_INPUT (2) and names file, line and field."""
    text = edit_text(demo_yaml, "{max_iterations: 3}", "{max_iterations: 0}")
    path = write_workflow(text)
    code = cli(["validate", str(path)])
    stderr = capsys.readouterr().err
    assert code == ExitCode.BAD_INPUT == 2
    assert f"{path}:{line_number(text, 'standard:')}: modes.standard.max_iterations:" in stderr
    assert "Traceback" not in stderr


def test_cli_validate_accepts_a_valid_workflow(write_workflow, demo_yaml: str, capsys) -> None:
    path = write_workflow(demo_yaml)
    assert cli(["validate", str(path)]) == 0
    assert "ok: workflow 'demo', 3 phases" in capsys.readouterr().out


def test_cli_validate_of_a_missing_file_exits_2(tmp_path: Path, capsys) -> None:
    assert cli(["validate", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_cli_validate_of_a_directory_says_it_is_one(tmp_path: Path, capsys) -> None:
    """A directory is not reported as missing: it is there, but is not a workflow file."""
    assert cli(["validate", str(tmp_path)]) == ExitCode.BAD_INPUT
    stderr = capsys.readouterr().err
    assert f"{tmp_path}: is a directory, not a workflow file" in stderr
    assert "no such file" not in stderr


def test_bad_entries_are_not_also_reported_as_too_few_phases(
    write_workflow, line_number: LineOf
) -> None:
    """A list whose every entry has a problem reports those problems, not a short list."""
    text = """\
name: demo
description: Two phases, each with an unknown field.
default_mode: standard
modes:
  standard: {max_iterations: 3}
roles:
  executor: {access: write}
phases:
  - name: draft
    artifact: draft.md
    executor: executor
    colour: blue
  - name: finish
    kind: finish
    flavour: plain
"""
    path = write_workflow(text)
    assert problems_of(path) == [
        f"{path}:{line_number(text, 'colour: blue')}: phases[0].colour: unknown field",
        f"{path}:{line_number(text, 'flavour: plain')}: phases[1].flavour: unknown field",
    ]


def test_an_empty_phases_list_is_refused(
    write_workflow, demo_yaml: str, line_number: LineOf
) -> None:
    """Control for the test above: a list with no entries at all is still a problem."""
    start = demo_yaml.index("phases:\n")
    text = demo_yaml[:start] + "phases: []\n"
    path = write_workflow(text)
    problem = only_problem(path)
    assert problem.startswith(f"{path}:{line_number(text, 'phases: []')}: phases: ")
    assert problem.endswith("phases: needs at least 1 entry (it has 0)")


def test_mode_skipping_the_producer_of_a_hard_prerequisite_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, line_number: LineOf
) -> None:
    """No trap states: a mode that skips polish would block publish (needs final.md) forever."""
    text = edit_text(demo_yaml, "  - name: finish", PUBLISH_THEN_FINISH)
    path = write_workflow(text, templates=PUBLISH_TEMPLATES)
    problem = only_problem(path)
    assert problem.startswith(
        f"{path}:{line_number(text, 'skip: [polish]')}: modes.quick.skip[0]: "
    )
    assert "skips polish, which produces 'final.md', a hard prerequisite of 'publish'" in problem


def test_mode_may_skip_a_producer_together_with_its_dependents(
    write_workflow, demo_yaml: str, edit_text: Edit
) -> None:
    """Control for the test above: skipping publish as well leaves no trap."""
    text = edit_text(demo_yaml, "  - name: finish", PUBLISH_THEN_FINISH)
    text = edit_text(text, "skip: [polish]", "skip: [polish, publish]")
    assert load_workflow(write_workflow(text, templates=PUBLISH_TEMPLATES))


@pytest.mark.parametrize("artifact", ["../escape.md", "/etc/passwd"])
def test_artifact_outside_the_item_folder_is_refused(
    write_workflow, demo_yaml: str, edit_text: Edit, artifact: str
) -> None:
    text = edit_text(demo_yaml, "artifact: final.md", f"artifact: {artifact}")
    problem = only_problem(write_workflow(text))
    assert "phases[1].artifact: " in problem
    assert "must be a path inside the work item folder" in problem


def test_finish_phase_runs_no_agents(write_workflow, demo_yaml: str, edit_text: Edit) -> None:
    text = edit_text(demo_yaml, "    kind: finish\n", "    kind: finish\n    executor: executor\n")
    assert "phases[2]: a finish phase runs no agents" in only_problem(write_workflow(text))


def test_invalid_phase_name_is_refused(write_workflow, demo_yaml: str, edit_text: Edit) -> None:
    text = edit_text(demo_yaml, "- name: polish", "- name: Polish Up")
    problems = problems_of(write_workflow(text))
    assert any("phases[1].name: 'Polish Up' is not a valid name" in p for p in problems)


#: A gate (asked in every run), a command and a label: each text holds only known
#: placeholders. The tests below spoil one of them.
GATE_WORKFLOW = """\
name: gated
modes:
  standard: {max_iterations: 1}
roles:
  executor: {access: write}
labels:
  asking: {next: "phasegate run {{ item }}"}
commands:
  go:
    start: write
    runs_in: [asking]
    otherwise:
      "*": {message: "{{ item }} is at {{ label }}. Next: {{ next }}"}
nodes:
  - id: write
    executor: executor
    outputs: ["notes-{{ item }}.md"]
    on: {pass: ask}
  - id: ask
    label: asking
    kind: gate
    decision: "ask-{{ item }}"
    question: "Is {{ item }} ({{ description }}) done?"
    show: ["notes-{{ item }}.md"]
    choices:
      yes: {to: done, description: "{{ item }} is done"}
      no: {to: write, unavailable: "not now for {{ item }}"}
  - id: done
    kind: end
"""


def _gated(write_workflow, text: str = GATE_WORKFLOW) -> Path:
    return write_workflow(text, name="gated", templates={"write.md": "Write {{ item }}.\n"})


def test_a_gate_workflow_with_known_placeholders_is_valid(write_workflow) -> None:
    assert load_workflow(_gated(write_workflow)).name == "gated"


def test_unknown_placeholder_in_a_gate_question_is_refused(
    write_workflow, edit_text: Edit, line_number: LineOf
) -> None:
    """It would be asked empty (``q ?``): refused on load, as in a prompt template."""
    text = edit_text(GATE_WORKFLOW, "done?", "done {{ nosuch }}?")
    path = _gated(write_workflow, text)
    problem = only_problem(path)
    assert problem.startswith(
        f"{path}:{line_number(text, 'question:')}:55: nodes[1].question: "
        "unknown placeholder 'nosuch'"
    )


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('"ask-{{ item }}"', '"ask-{{ bogus }}"', "nodes[1].decision"),
        ('show: ["notes-{{ item }}.md"]', 'show: ["{{ bogus }}.md"]', "nodes[1].show[0]"),
        ('"{{ item }} is done"', '"{{ bogus }}"', "nodes[1].choices.yes.description"),
        ('"not now for {{ item }}"', '"{{ bogus }}"', "nodes[1].choices.no.unavailable"),
        ("Next: {{ next }}", "{{ bogus }}", "commands.go.otherwise.*.message"),
        ('{next: "phasegate run {{ item }}"}', '{next: "{{ bogus }}"}', "labels.asking.next"),
        ('outputs: ["notes-{{ item }}.md"]', 'outputs: ["{{ bogus }}.md"]', "nodes[0].outputs[0]"),
        ("Is {{ item }}", "Is {{ detail }}", "nodes[1].question"),  # no detail predicate
    ],
)
def test_unknown_placeholder_in_any_filled_text_is_refused(
    write_workflow, edit_text: Edit, old: str, new: str, field: str
) -> None:
    text = edit_text(GATE_WORKFLOW, old, new)
    if field == "nodes[0].outputs[0]":
        text = edit_text(text, 'show: ["notes-{{ item }}.md"]', 'show: ["{{ item }}.md"]')
    problem = only_problem(_gated(write_workflow, text))
    assert f": {field}: unknown placeholder " in problem, problem
    assert "(known here: " in problem


def test_unknown_placeholder_in_a_gate_inside_a_foreach_is_located(write_workflow) -> None:
    text = GATE_WORKFLOW.replace(
        "  - id: done\n",
        """\
  - id: each
    kind: foreach
    items: {parser: markdown-tasks, file: "notes-{{ item }}.md"}
    body:
      - id: check
        kind: gate
        decision: "check-{{ task }}"
        question: "{{ task_title }} {{ typo }}?"
        choices: {ok: task-done}
      - id: task-done
        kind: end
    on: {done: done}
  - id: done
""",
    ).replace("yes: {to: done,", "yes: {to: each,")
    problems = problems_of(_gated(write_workflow, text))
    assert [p for p in problems if "nodes[2].body[0].question: unknown placeholder 'typo'" in p]


def test_gate_variables_are_what_a_gate_fills() -> None:
    """The names a gate's texts may use are the ones the engine gives them."""
    from types import SimpleNamespace

    from phasegate.engine.nodes.gate import gate_values
    from phasegate.workflow.prompts import GATE_VARIABLES

    state = SimpleNamespace(get=lambda key, default=None: default, mode="standard")
    run = SimpleNamespace(
        state=state,
        label=lambda path: path,
        item=SimpleNamespace(name="x", item_dir=Path("work/x")),
        workflow=SimpleNamespace(name="w"),
        rel=lambda path, folder: str(folder),
    )
    assert set(gate_values(run, "ask", None)) == GATE_VARIABLES  # type: ignore[arg-type]


def test_cli_validate_refuses_an_unknown_gate_placeholder(
    write_workflow, edit_text: Edit, capsys
) -> None:
    path = _gated(write_workflow, edit_text(GATE_WORKFLOW, "done?", "done {{ nosuch }}?"))
    assert cli(["validate", str(path)]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "nodes[1].question: unknown placeholder 'nosuch'" in err
