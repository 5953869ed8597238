"""A user's workflow that cannot work is refused when it loads, one line per problem naming
the file, line and field (exit 2); and what the CLI says of such workflows' items is true:
the commands it names exist, an item that ended is not offered to run again, the
summary counts the steps that ran, and items of a workflow that does not load are not
called absent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from phasegate.errors import ExitCode
from phasegate.integrations.claude_code.guard import pre_tool_use


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The real CLI, in this process: exit code, stdout, stderr."""
    from phasegate.cli import main

    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def make_repo(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str) -> Path:
    """A git repository, initialised, holding workflow ``name`` and its prompt templates."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / name).mkdir(parents=True)
    for prompt in ("a", "b", "judge"):
        (folder / "prompts" / name / f"{prompt}.md").write_text("Do {{ node }} for {{ item }}\n")
    (folder / f"{name}.yaml").write_text(text)
    (repo / ".phasegate" / "agents.yaml").write_text(
        'writer: {"*": [{write: {"{item_dir}/{node}.md": "x\\n"}}]}\n'
        'judge: {"*": [{verdict: {approved: true, summary: ok, issues: []}}]}\n'
    )
    return repo


HEAD = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, judge: {}}
nodes:
"""

AGENT_THEN_END = """\
  - id: a
    executor: writer
    outputs: [a.md]
  - id: e
    kind: end
"""


def refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nodes: str, where: str, words: str
) -> str:
    """Validate a workflow made of ``nodes``: it is refused, naming ``where`` and ``words``."""
    repo = make_repo(tmp_path, capsys, "wf", HEAD + nodes)
    path = repo / ".phasegate" / "workflows" / "wf.yaml"
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, (out, err)
    lines = [line for line in err.splitlines() if f": {where}: " in line]
    assert lines, err
    assert lines[0].startswith(f"{path}:"), lines[0]
    assert words in lines[0], lines[0]
    return lines[0]


# -- refused on load --------------------------------------------------------------------


def test_a_placeholder_in_a_check_command_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check's command reaches the shell as written: `{{ item }}` would not be filled."""
    nodes = """\
  - id: t
    kind: check
    run: [{name: t, run: "test -f items/{{ item }}/a.md"}]
    on: {fail: "@blocked"}
  - id: e
    kind: end
"""
    line = refused(tmp_path, capsys, nodes, "nodes[0].run[0].run", "{{ item }}")
    assert "placeholders are not filled" in line


def test_a_placeholder_in_an_agent_nodes_check_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = AGENT_THEN_END.replace(
        "    outputs: [a.md]\n",
        '    outputs: [a.md]\n    checks: [{name: t, run: "ls {{item_dir}}"}]\n',
    )
    refused(tmp_path, capsys, nodes, "nodes[0].checks[0].run", "{{ item_dir }}")


def test_a_gate_without_choices_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = """\
  - id: g
    kind: gate
    question: pick?
    choices: {}
    on: {invalid: e}
  - id: e
    kind: end
"""
    refused(tmp_path, capsys, nodes, "nodes[0].choices", "at least one choice")


@pytest.mark.parametrize("budget", ["-3", "0"])
def test_a_budget_below_one_iteration_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], budget: str
) -> None:
    nodes = AGENT_THEN_END.replace(
        "    outputs: [a.md]\n",
        f"    outputs: [a.md]\n    reviewer: judge\n    budget: {{max: {budget}}}\n",
    )
    refused(tmp_path, capsys, nodes, "nodes[0].budget.max", "at least 1")


def test_a_negative_extend_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = (
        AGENT_THEN_END.replace("  - id: e\n", "")
        .replace("    kind: end\n", "")
        .replace("    outputs: [a.md]\n", "    outputs: [a.md]\n    reviewer: judge\n")
    ) + (
        "  - id: g\n    kind: gate\n    question: again?\n"
        "    choices: {more: {to: a, extend: -2}, done: e}\n  - id: e\n    kind: end\n"
    )
    refused(tmp_path, capsys, nodes, "nodes[1].choices.more.extend", "extend -2")


def test_a_foreach_item_name_outside_a_foreach_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`{{ task }}` is filled only inside a foreach body: at the top level it would be empty."""
    nodes = AGENT_THEN_END.replace("outputs: [a.md]", 'outputs: ["x-{{ task }}.md"]')
    line = refused(tmp_path, capsys, nodes, "nodes[0].outputs[0]", "unknown placeholder 'task'")
    assert "only inside a foreach body" in line


def test_a_foreach_item_name_inside_a_foreach_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = """\
  - id: a
    executor: writer
    outputs: [plan.md]
  - id: each
    kind: foreach
    items: {parser: markdown-tasks, file: plan.md}
    body:
      - id: b
        executor: writer
        outputs: ["out/{{ task }}.md"]
      - id: item-done
        kind: end
  - id: e
    kind: end
"""
    repo = make_repo(tmp_path, capsys, "wf", HEAD + nodes)
    code, out, err = cli(capsys, "validate", str(repo / ".phasegate/workflows/wf.yaml"))
    assert code == 0, err
    assert "ok: workflow 'wf'" in out


def test_a_foreach_over_a_file_no_node_writes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = """\
  - id: each
    kind: foreach
    items: {parser: markdown-tasks, file: nothere.md}
    body:
      - id: b
        executor: writer
        outputs: ["out/{{ task }}.md"]
      - id: item-done
        kind: end
  - id: e
    kind: end
"""
    refused(tmp_path, capsys, nodes, "nodes[0].items.file", "'nothere.md' is not an output")


def test_a_check_node_without_commands_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = """\
  - id: t
    kind: check
    on: {fail: "@blocked"}
  - id: e
    kind: end
"""
    refused(tmp_path, capsys, nodes, "nodes[0].run", "a check node needs commands")


def test_an_exhausted_outcome_leading_back_to_its_node_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Past its visit limit the node would be entered again at once, without end (a run
    wrote 97,000 journal lines in 20 seconds, calling no agent)."""
    nodes = """\
  - id: a
    executor: writer
    outputs: [a.md]
    on: {exhausted: a}
  - id: t
    kind: check
    run: [{name: t, run: "false"}]
    on: {pass: e, fail: a}
  - id: e
    kind: end
"""
    line = refused(tmp_path, capsys, nodes, "nodes[0].on.exhausted", "leads back to it")
    assert "(a -> a)" in line


def test_an_exhausted_chain_back_to_its_first_node_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = """\
  - id: a
    executor: writer
    outputs: [a.md]
    on: {exhausted: g}
  - id: g
    kind: gate
    question: Again?
    choices: {again: a, stop: e}
    on: {exhausted: a}
  - id: e
    kind: end
"""
    line = refused(tmp_path, capsys, nodes, "nodes[0].on.exhausted", "leads back to it")
    assert "(a -> g -> a)" in line


def test_an_exhausted_outcome_sent_forward_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = """\
  - id: a
    executor: writer
    outputs: [a.md]
    on: {exhausted: g}
  - id: g
    kind: gate
    question: Again?
    choices: {again: a, stop: e}
    on: {exhausted: e}
  - id: e
    kind: end
"""
    repo = make_repo(tmp_path, capsys, "wf", HEAD + nodes)
    code, out, err = cli(capsys, "validate", str(repo / ".phasegate/workflows/wf.yaml"))
    assert code == 0, (out, err)


# -- what the CLI says --------------------------------------------------------------------


def test_a_plain_run_of_a_workflow_with_commands_names_its_real_commands_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A repository workflow's commands are run with `run --command`: `phasegate plan` is
    the change workflow's, and `phasegate build` does not exist."""
    text = HEAD + "commands:\n  plan: {}\n  build: {}\n" + AGENT_THEN_END
    text = text.replace("nodes:\ncommands:", "commands:").replace(
        "  build: {}\n", "  build: {}\nnodes:\n"
    )
    repo = make_repo(tmp_path, capsys, "wf", text)
    code, _, err = cli(capsys, "new", "c1", "-w", "wf", "-C", str(repo))
    assert code == 0, err
    code, _, err = cli(capsys, "run", "c1", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT
    assert "phasegate run c1 --command NAME (NAME: plan or build)" in err, err
    assert "phasegate plan" not in err and "phasegate build" not in err, err
    assert err.count("plan") == 1, err
    # The state guard of Claude Code sessions points at the same commands.
    state_file = repo / "wfitems" / "c1" / ".engine.json"
    denied = pre_tool_use(
        {
            "hook_event_name": "PreToolUse",
            "cwd": str(repo),
            "tool_name": "Edit",
            "tool_input": {"file_path": str(state_file), "old_string": "a", "new_string": "b"},
        }
    )
    assert denied is not None
    why = denied["hookSpecificOutput"]["permissionDecisionReason"]
    assert "`phasegate run c1 --command plan`, `phasegate run c1 --command build`" in why, why
    assert "`phasegate plan c1`" not in why, why


COMMAND_WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, judge: {}}
labels: {drafting: {}, building: {}}
commands:
  draft: {runs_in: [drafting], stops_at: [building]}
  build: {runs_in: [building]}
nodes:
  - id: a
    label: drafting
    executor: writer
    outputs: [a.md]
  - id: b
    label: building
    executor: writer
    outputs: [b.md]
  - id: e
    kind: end
"""


def test_the_next_command_of_a_command_only_workflow_is_the_command_that_runs_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its items run only through its commands: "Next: phasegate run c1" was advised by the
    run, by status and by a refused command, and then refused itself."""
    repo = make_repo(tmp_path, capsys, "wf", COMMAND_WORKFLOW)
    assert cli(capsys, "new", "c1", "-w", "wf", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "c1", "--command", "build", "-C", str(repo))
    assert code == ExitCode.BLOCKED, err
    assert "c1 is in phase drafting. Next: phasegate run c1 --command draft" in err, err
    code, out, err = cli(capsys, "run", "c1", "--command", "draft", "-C", str(repo))
    assert code == 0, err
    assert "Next: phasegate run c1 --command build" in out + err, out + err
    code, out, err = cli(capsys, "status", "c1", "--json", "-C", str(repo))
    assert json.loads(out)["nextCommand"] == "phasegate run c1 --command build"


def test_an_item_at_a_node_the_workflow_no_longer_has_says_the_workflow_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gate renamed while an item waits at it: the state is not damaged, the workflow
    changed. The error (still exit 5: phasegate cannot tell the two apart) says so, names
    the workflow file and its nodes, and the state is left as it was."""
    nodes = """\
  - id: decide
    kind: gate
    question: Go?
    choices: {go: e}
  - id: e
    kind: end
"""
    repo = make_repo(tmp_path, capsys, "wf", HEAD + nodes)
    assert cli(capsys, "new", "e1", "-w", "wf", "-C", str(repo))[0] == 0
    assert cli(capsys, "run", "e1", "-C", str(repo))[0] == ExitCode.WAITING
    state = repo / "wfitems" / "e1" / ".engine.json"
    before = state.read_bytes()
    flow = repo / ".phasegate" / "workflows" / "wf.yaml"
    flow.write_text(flow.read_text().replace("id: decide", "id: decide2"))
    code, _, err = cli(capsys, "status", "e1", "-C", str(repo))
    assert code == ExitCode.STATE, err
    assert "unknown node 'decide' in workflow 'wf' (its nodes: decide2, e)" in err
    assert f"the workflow ({flow}) changed since, or the state was edited" in err
    assert "put node 'decide' back in the workflow" in err
    assert state.read_bytes() == before


def test_items_of_a_workflow_file_that_was_removed_are_not_called_absent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The workflow file moved away: `status` said "No work items yet" and `status NAME`
    offered `phasegate new NAME`. Both name the missing workflow; putting it back lists
    the item again."""
    repo = make_repo(tmp_path, capsys, "wf", HEAD + AGENT_THEN_END)
    assert cli(capsys, "new", "rj", "-w", "wf", "-C", str(repo))[0] == 0
    flow = repo / ".phasegate" / "workflows" / "wf.yaml"
    kept = flow.read_text()
    flow.unlink()
    code, out, err = cli(capsys, "status", "-C", str(repo))
    assert code == 0
    assert "No work items yet" not in out
    assert "last saw 1 item in workflow 'wf', which is not found" in err and ": rj;" in err
    code, out, err = cli(capsys, "status", "rj", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT
    assert "last saw it in workflow 'wf', which is not found" in err
    assert "phasegate new" not in err
    flow.write_text(kept)
    code, out, err = cli(capsys, "status", "-C", str(repo))
    assert code == 0 and "rj" in out and "not found" not in err


def test_status_does_not_call_the_items_of_a_workflow_that_does_not_load_absent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys, "wf", HEAD + AGENT_THEN_END)
    code, _, err = cli(capsys, "new", "g1", "-w", "wf", "-C", str(repo))
    assert code == 0, err
    (repo / ".phasegate" / "workflows" / "wf.yaml").write_text("nodes: [\n")
    code, out, err = cli(capsys, "status", "-C", str(repo))
    assert code == 0
    assert "No work items yet" not in out, out
    assert "workflow 'wf' does not load" in out, out
    assert "(the items of workflow 'wf' are not listed)" in err, err


def test_an_item_that_stopped_is_not_offered_to_run_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = """\
  - id: g
    kind: gate
    question: go?
    choices: {yes: done, no: dropped, halt: halted}
  - id: dropped
    kind: end
    status: stopped
  - id: halted
    kind: end
    status: blocked
    message: halted
  - id: done
    kind: end
"""
    repo = make_repo(tmp_path, capsys, "wf", HEAD + nodes)
    ran = {}
    for item, answer in (("s1", "g=no"), ("b1", "g=halt")):
        assert cli(capsys, "new", item, "-w", "wf", "-C", str(repo))[0] == 0
        ran[item] = cli(capsys, "run", item, "-a", answer, "-C", str(repo))
    # The run that ends at the stopped end says so; it is not announced as complete.
    code, _, err = ran["s1"]
    assert code == 0 and "s1 stopped:" in err and "complete:" not in err, err
    stopped = json.loads(cli(capsys, "status", "s1", "--json", "-C", str(repo))[1])
    assert stopped["status"] == "stopped"
    assert stopped["nextCommand"] is None
    code, out, _ = cli(capsys, "status", "s1", "-C", str(repo))
    assert code == 0 and "Next:" not in out, out
    halted = json.loads(cli(capsys, "status", "b1", "--json", "-C", str(repo))[1])
    assert halted["status"] == "blocked"
    assert halted["nextCommand"] is None


def test_the_summary_counts_agent_steps_without_reviewers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A node without reviewers completes after its executor's call: a phase completed,
    with no review iterations."""
    nodes = AGENT_THEN_END.replace(
        "  - id: e\n",
        "  - id: b\n    executor: writer\n    outputs: [b.md]\n    reviewer: judge\n  - id: e\n",
    )
    repo = make_repo(tmp_path, capsys, "wf", HEAD + nodes)
    assert cli(capsys, "new", "c1", "-w", "wf", "-C", str(repo))[0] == 0
    code, _, err = cli(capsys, "run", "c1", "-C", str(repo))
    assert code == 0, err
    status = json.loads(cli(capsys, "status", "c1", "--json", "-C", str(repo))[1])
    assert status["summary"] == "2 phases completed in 1 review iteration."


def test_the_summary_of_steps_never_reviewed_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys, "wf", HEAD + AGENT_THEN_END)
    assert cli(capsys, "new", "c1", "-w", "wf", "-C", str(repo))[0] == 0
    code, _, err = cli(capsys, "run", "c1", "-C", str(repo))
    assert code == 0, err
    status = json.loads(cli(capsys, "status", "c1", "--json", "-C", str(repo))[1])
    assert status["summary"] == "1 phase completed without review."


def test_a_failing_check_that_blocks_says_so_in_one_clean_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check node whose fail is @blocked: the error line names the failed command without
    a dangling colon; the command's output is shown with the block, above it."""
    nodes = """\
  - id: c
    kind: check
    run: [{name: lint, run: "echo 'E501 line too long'; exit 3"}]
    on: {fail: "@blocked"}
  - id: e
    kind: end
"""
    repo = make_repo(tmp_path, capsys, "wf", HEAD + nodes)
    assert cli(capsys, "new", "k1", "-w", "wf", "-C", str(repo))[0] == 0
    code, _, err = cli(capsys, "run", "k1", "-C", str(repo))
    assert code == 4, err
    (line,) = [x for x in err.splitlines() if x.startswith("phasegate: error:")]
    assert "exit code 3. Fix it" in line and ":." not in line, line
    assert "E501 line too long" in err
