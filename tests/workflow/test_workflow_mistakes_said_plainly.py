"""Typical mistakes in a workflow of one's own: `phasegate validate` says each as one line
naming the file, the line and the field, in the YAML's words (never pydantic's union
members such as `.int` or `literal['mode']`), with no second line following from the first,
and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: write
    label: writing
    executor: writer
    outputs: [notes.md]
  - id: ask
    kind: gate
    label: asking
    question: Go on?
    choices:
      again: {to: write, extend: 1}
      go: {to: test}
  - id: test
    kind: check
    run: [{name: t, run: "true"}]
    on: {fail: ask, pass: done}
  - id: done
    kind: end
    status: completed
"""


def problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, name: str = "wf"
) -> tuple[Path, list[str]]:
    """Validate WORKFLOW with ``old`` replaced by ``new``: its file and its problem lines."""
    assert old in WORKFLOW
    path = tmp_path / f"{name}.yaml"
    path.write_text(WORKFLOW.replace(old, new, 1))
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / "write.md").write_text("Write notes for {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    return path, [line for line in err.splitlines() if line.startswith(str(path))]


def line_of(text: str) -> int:
    return WORKFLOW.splitlines().index(text) + 1


def test_the_workflow_as_written_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Control: the workflow the other tests break validates."""
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    (tmp_path / "prompts" / "wf").mkdir(parents=True)
    (tmp_path / "prompts" / "wf" / "write.md").write_text("Write notes for {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    assert code == 0, err
    assert "ok: workflow 'wf'" in out


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("lots", "a string ('lots')"),
        ("1.5", "a number (1.5)"),
        ("[1]", "a list"),
    ],
)
def test_a_value_no_member_of_a_union_takes_is_one_line_without_member_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, said: str
) -> None:
    path, found = problems(tmp_path, capsys, "extend: 1}", f"extend: {value}}}")
    line = line_of("      again: {to: write, extend: 1}")
    assert found == [
        f"{path}:{line}: nodes[1].choices.again.extend: "
        f"should be a whole number or 'mode', not {said}"
    ]


def test_a_gate_timeout_of_the_wrong_type_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, found = problems(
        tmp_path,
        capsys,
        "    question: Go on?\n",
        "    question: Go on?\n    timeout: {minutes: [5], choice: go}\n",
    )
    assert found == [
        f"{path}:{line_of('    question: Go on?') + 1}: nodes[1].timeout.minutes: "
        "should be a number or a string, not a list"
    ]


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        (
            "    label: asking\n",
            "    label: asking\n    max_visits: ten\n",
            "nodes[1].max_visits",
            "should be a whole number, not a string ('ten')",
        ),
        (
            "status: completed",
            "status: complete",
            "nodes[3].status",
            "should be 'completed', 'blocked' or 'stopped', not a string ('complete')",
        ),
        (
            "go: {to: test}",
            "go: {to: 5}",
            "nodes[1].choices.go.to",
            "should be a string, not a number (5)",
        ),
        (
            "modes: {standard: {max_iterations: 2}}",
            "modes: {standard: {max_iterations: two}}",
            "modes.standard.max_iterations",
            "should be a whole number, not a string ('two')",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_said_in_the_yamls_words(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    field: str,
    message: str,
) -> None:
    _, found = problems(tmp_path, capsys, old, new)
    assert len(found) == 1, found
    assert found[0].split(": ", 1)[1] == f"{field}: {message}"


def test_an_empty_node_list_says_how_many_it_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, found = problems(tmp_path, capsys, WORKFLOW[WORKFLOW.index("nodes:") :], "nodes: []\n")
    assert found == [f"{path}:5: nodes: needs at least 1 entry (it has 0)"]


def test_the_last_nodes_unmapped_pass_says_there_is_no_next_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, found = problems(
        tmp_path,
        capsys,
        "    on: {fail: ask, pass: done}\n  - id: done\n    kind: end\n    status: completed\n",
        "    on: {fail: ask}\n",
    )
    assert found == [
        f"{path}:{line_of('    on: {fail: ask, pass: done}')}: nodes[2].on: outcome 'pass' of "
        "node 'test' is not mapped: it is the last node of its scope, so there is no next "
        "node to go on to (map it in on, or add an end node after it: {id: done, kind: end})"
    ]


def test_a_misspelt_blocked_target_names_blocked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, found = problems(tmp_path, capsys, "go: {to: test}", "go: {to: '@block'}")
    assert found == [
        f"{path}:{line_of('      go: {to: test}')}: nodes[1].choices.go: unknown node '@block' "
        "(nodes: write, ask, test, done; or @blocked)"
    ]


def test_a_name_that_is_not_the_files_is_the_one_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its templates are not also reported missing: they are looked for under the name."""
    path, found = problems(tmp_path, capsys, "name: wf", "name: wf2")
    assert found == [
        f"{path}:1: name: name 'wf2' must match the file name 'wf' "
        "(rename the file to wf2.yaml, or write name: wf)"
    ]


def test_a_duplicate_id_is_not_also_reported_as_an_unused_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second node's label is its own: `asking` is used, whatever its id."""
    labelled = "labels:\n  asking: {description: A person decides.}\nnodes:"
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.replace("nodes:", labelled, 1))
    (tmp_path / "prompts" / "wf").mkdir(parents=True)
    (tmp_path / "prompts" / "wf" / "write.md").write_text("Write notes for {{ item }}.\n")
    assert cli(capsys, "validate", str(path))[0] == 0  # control: the label is used
    path.write_text(
        WORKFLOW.replace("nodes:", labelled, 1).replace("  - id: ask\n", "  - id: write\n")
    )
    code, _, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT
    found = [line for line in err.splitlines() if line.startswith(str(path))]
    assert len(found) == 1, found
    assert "nodes[1].id: duplicate node id 'write'" in found[0]


def test_a_read_only_executor_of_a_node_with_outputs_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A role is read-only unless its access says write: forgetting it would leave every
    call of the node without its outputs (a read-only agent has no tool that writes)."""
    path, found = problems(
        tmp_path, capsys, "roles: {writer: {access: write}}", "roles: {writer: {}}"
    )
    assert found == [
        f"{path}:{line_of('    executor: writer')}: nodes[0].executor: role 'writer' is "
        "read-only (a role is, unless its access says write), so it cannot write the node's "
        "outputs (notes.md): set roles.writer.access: write"
    ]


def test_a_read_only_executor_of_a_phase_is_refused_at_the_phase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lin.yaml"
    path.write_text(
        "name: lin\n"
        "items_dir: linitems\n"
        "modes: {standard: {max_iterations: 2}}\n"
        "roles: {writer: {access: read-only}, judge: {}}\n"
        "phases:\n"
        "  - name: draft\n"
        "    artifact: draft.md\n"
        "    executor: writer\n"
        "    reviewer: judge\n"
    )
    (tmp_path / "prompts" / "lin").mkdir(parents=True)
    for name in ("draft", "judge"):
        (tmp_path / "prompts" / "lin" / f"{name}.md").write_text("Go.\n")
    code, _, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT
    found = [line for line in err.splitlines() if line.startswith(str(path))]
    assert found == [
        f"{path}:8: phases[0].executor: role 'writer' is read-only (a role is, unless its "
        "access says write), so it cannot write the node's outputs (draft.md): "
        "set roles.writer.access: write"
    ]
    path.write_text(path.read_text().replace("access: read-only", "access: write"))
    assert cli(capsys, "validate", str(path))[0] == 0  # control


LOOP = """\
name: lp
items_dir: lpitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: plan
    executor: writer
    outputs: [plan.md]
  - id: tasks
    kind: foreach
    items: {parser: markdown-tasks, file: plan.md}
    body:
      - id: work
        executor: writer
        outputs: ["{{ task }}.md"]
      - id: task-done
        kind: end
  - id: done
    kind: end
"""


def loop_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> list[str]:
    path = tmp_path / "lp.yaml"
    path.write_text(text)
    (tmp_path / "prompts" / "lp").mkdir(parents=True, exist_ok=True)
    for name in ("plan", "work"):
        (tmp_path / "prompts" / "lp" / f"{name}.md").write_text("Go.\n")
    code, out, err = cli(capsys, "validate", str(path))
    if code == 0:
        return []
    assert code == ExitCode.BAD_INPUT, out + err
    return [line.split(": ", 1)[1] for line in err.splitlines() if line.startswith(str(path))]


def test_a_target_in_another_scope_says_how_to_get_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert loop_problems(tmp_path, capsys, LOOP) == []  # control
    body_out = LOOP.replace('"{{ task }}.md"]\n', '"{{ task }}.md"]\n        on: {pass: done}\n')
    assert loop_problems(tmp_path, capsys, body_out) == [
        "nodes[1].body[0].on.pass: unknown node 'done' in this scope (work, task-done): "
        "'done' is outside this foreach body: to leave the body, end it at an end node with "
        "an outcome (kind: end, outcome: NAME) and map NAME in the foreach's on"
    ]
    into_body = LOOP.replace("outputs: [plan.md]\n", "outputs: [plan.md]\n    on: {pass: work}\n")
    assert loop_problems(tmp_path, capsys, into_body) == [
        "nodes[0].on.pass: unknown node 'work' in this scope (plan, tasks, done): 'work' is "
        "inside a foreach body, which only its foreach runs: lead to the foreach"
    ]


def test_a_number_out_of_range_says_the_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, found = problems(
        tmp_path,
        capsys,
        "modes: {standard: {max_iterations: 2}}",
        "modes: {standard: {max_iterations: 51}}",
    )
    assert found == [f"{path}:3: modes.standard.max_iterations: should be at most 50, not 51"]


def test_an_unknown_start_node_is_not_also_every_node_unreachable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, found = problems(tmp_path, capsys, "items_dir: wfitems", "items_dir: wfitems\nstart: go")
    assert found == [f"{path}:3: start: unknown node 'go' (write, ask, test, done)"]


def test_detail_in_a_question_without_a_detail_predicate_says_what_fills_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, found = problems(tmp_path, capsys, "question: Go on?", "question: '{{ detail }} Go on?'")
    assert found == [
        f"{path}:{line_of('    question: Go on?')}:16: nodes[1].question: unknown placeholder "
        "'detail' (known here: description, item, item_dir, label, mode, phase, workflow; "
        "'detail' only with the gate's detail: a predicate plug-in to fill it)"
    ]
