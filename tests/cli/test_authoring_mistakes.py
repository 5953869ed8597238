"""Mistakes a workflow's author makes are reported, one line naming the file (and node),
with the documented exit code; they never crash a command or pass unnoticed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from phasegate.errors import ExitCode


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The real CLI, in this process: exit code, stdout, stderr."""
    from phasegate.cli import main

    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


MINI = """\
name: mini
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - {id: write, executor: writer, outputs: [notes.md]}
"""
END = "  - {id: done, kind: end}\n"


def make_repo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str = MINI + END, name: str = "mini"
) -> Path:
    """A git repository, initialised, holding workflow ``name`` (``text``), its prompt
    ``write.md`` and a scripted writer."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *who, "commit", "-q", "--allow-empty", "-m", "i"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "mini").mkdir(parents=True)
    (folder / "prompts" / "mini" / "write.md").write_text("Write notes for {{ item }}\n")
    (folder / f"{name}.yaml").write_text(text)
    (repo / ".phasegate" / "agents.yaml").write_text(
        'writer:\n  "*": [{write: {"{item_dir}/notes.md": "notes\\n"}}]\n'
    )
    return repo


def workflow_file(repo: Path, name: str = "mini") -> Path:
    return repo / ".phasegate" / "workflows" / f"{name}.yaml"


def prompt_file(repo: Path, name: str = "write.md") -> Path:
    return repo / ".phasegate" / "workflows" / "prompts" / "mini" / name


# -- 1. a prompt template that is not UTF-8 ----------------------------------------------


def test_a_prompt_template_that_is_not_utf8_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys)
    prompt_file(repo).write_bytes(b"Write notes for {{ item }} \xe9t\xe9\n")
    code, out, err = cli(capsys, "validate", str(workflow_file(repo)))
    assert code == ExitCode.BAD_INPUT, (out, err)
    assert str(prompt_file(repo)) in err and "UTF-8" in err, err
    assert "internal error" not in err, err
    code, _, err = cli(capsys, "new", "m1", "-w", "mini", "-d", "x", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT, err
    assert str(prompt_file(repo)) in err and "internal error" not in err, err


def test_other_workflows_keep_working_beside_a_prompt_that_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys)
    prompt_file(repo).write_bytes(b"Write notes for {{ item }} \xe9t\xe9\n")
    for argv in (("status",), ("workflows",), ("new", "f1", "-w", "feature", "-d", "x")):
        code, out, err = cli(capsys, *argv, "-C", str(repo))
        assert code == 0, (argv, out, err)
        assert "internal error" not in err, (argv, err)
    code, out, err = cli(capsys, "workflows", "-C", str(repo))
    assert "mini" in out + err and str(prompt_file(repo)) in out + err, (out, err)
    code, out, err = cli(capsys, "doctor", "-C", str(repo))
    assert "internal error" not in err, err


# -- 2. a check whose cwd folder does not exist -----------------------------------------

CHECK_IN_SRC = """\
  - id: tests
    kind: check
    run: [{name: unit, run: "true", cwd: src}]
    on: {fail: "@blocked"}
"""


def test_a_check_node_whose_cwd_is_missing_blocks_naming_the_check_and_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys, MINI + CHECK_IN_SRC + END)
    assert cli(capsys, "new", "m1", "-w", "mini", "-d", "x", "-C", str(repo))[0] == 0
    code, _, err = cli(capsys, "run", "m1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, err
    assert "internal error" not in err, err
    (line,) = [x for x in err.splitlines() if x.startswith("phasegate: error:")]
    assert "'unit'" in line and "'src'" in line and "does not exist" in line, line
    code, out, err = cli(capsys, "status", "m1", "-C", str(repo))
    assert code == 0 and "Blocked" in out, (out, err)
    # Once the folder is there, a retry runs the check and the item completes.
    (repo / "src").mkdir()
    code, _, err = cli(capsys, "run", "m1", "-C", str(repo))
    assert code == 0, err


def test_an_agent_nodes_check_whose_cwd_is_missing_fails_naming_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = '{name: unit, run: "true", cwd: src}'
    text = MINI.replace("outputs: [notes.md]}", f"outputs: [notes.md], checks: [{check}]}}")
    repo = make_repo(tmp_path, capsys, text + END)
    assert cli(capsys, "new", "m1", "-w", "mini", "-d", "x", "-C", str(repo))[0] == 0
    code, _, err = cli(capsys, "run", "m1", "-C", str(repo))
    assert "internal error" not in err, err
    assert code == ExitCode.BLOCKED, err
    assert "'unit'" in err and "'src'" in err and "does not exist" in err, err


# -- 3. a check node never passes without running a command -----------------------------


def test_a_check_node_whose_command_is_not_configured_blocks_naming_it_and_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = "  - id: tests\n    kind: check\n    run: [unit-tests]\n    on: {fail: '@blocked'}\n"
    repo = make_repo(tmp_path, capsys, MINI + nodes + END)
    assert cli(capsys, "new", "m1", "-w", "mini", "-d", "x", "-C", str(repo))[0] == 0
    code, _, err = cli(capsys, "run", "m1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, err
    (line,) = [x for x in err.splitlines() if x.startswith("phasegate: error:")]
    assert "'unit-tests'" in line and "commands.unit-tests" in line, line
    assert "config.yaml" in line, line


def test_an_agent_nodes_check_that_is_not_configured_is_still_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = MINI.replace("outputs: [notes.md]}", "outputs: [notes.md], checks: [unit-tests]}")
    repo = make_repo(tmp_path, capsys, text + END)
    assert cli(capsys, "new", "m1", "-w", "mini", "-d", "x", "-C", str(repo))[0] == 0
    code, _, err = cli(capsys, "run", "m1", "-C", str(repo))
    assert code == 0, err
    assert "check unit-tests skipped" in err, err


@pytest.mark.parametrize("where", ["check", "agent"])
def test_an_inline_check_with_an_empty_command_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    if where == "check":
        text = MINI + (
            '  - id: tests\n    kind: check\n    run: [{name: unit, run: ""}]\n'
            "    on: {fail: '@blocked'}\n"
        )
        field = "nodes[1].run[0].run"
    else:
        text = MINI.replace(
            "outputs: [notes.md]}", 'outputs: [notes.md], checks: [{name: unit, run: " "}]}'
        )
        field = "nodes[0].checks[0].run"
    repo = make_repo(tmp_path, capsys, text + END)
    code, out, err = cli(capsys, "validate", str(workflow_file(repo)))
    assert code == ExitCode.BAD_INPUT, (out, err)
    lines = [x for x in err.splitlines() if f": {field}: " in x]
    assert lines and "empty" in lines[0], err
    assert lines[0].startswith(f"{workflow_file(repo)}:"), lines[0]


# -- 4. the foreach item's names in a prompt outside a foreach body ---------------------


def refused(capsys: pytest.CaptureFixture[str], repo: Path, *words: str) -> str:
    """``validate`` of workflow ``mini`` fails (exit 2) with a line holding ``words``."""
    code, out, err = cli(capsys, "validate", str(workflow_file(repo)))
    assert code == ExitCode.BAD_INPUT, (out, err)
    lines = [x for x in err.splitlines() if all(w in x for w in words)]
    assert lines, err
    assert lines[0].startswith(f"{workflow_file(repo)}:"), lines[0]
    return lines[0]


@pytest.mark.parametrize("name", ["task", "task_title"])
def test_a_top_level_prompt_using_the_foreach_item_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    repo = make_repo(tmp_path, capsys)
    prompt_file(repo).write_text(f"Write notes for {{{{ {name} }}}}\n")
    line = refused(capsys, repo, str(prompt_file(repo)), repr(name))
    assert "foreach" in line and "nodes[0].prompt" in line, line


def test_a_prompt_using_the_foreach_item_inside_a_foreach_body_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = """\
name: mini
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - {id: plan, executor: writer, prompt: write.md, outputs: [notes.md]}
  - id: each
    kind: foreach
    items: {parser: markdown-tasks, file: notes.md}
    body:
      - {id: task, executor: writer, prompt: task.md, outputs: ["{{ task }}.md"]}
      - {id: fin, kind: end}
    on: {done: done}
  - {id: done, kind: end}
"""
    repo = make_repo(tmp_path, capsys, text)
    prompt_file(repo, "task.md").write_text("Do {{ task }}: {{ task_title }}\n")
    code, out, err = cli(capsys, "validate", str(workflow_file(repo)))
    assert code == 0, (out, err)


# -- 5. malformed placeholders ------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Go ahead with {{ item ?", "not closed"),
        ("Go ahead with {{ item | upper }}?", "'{{ item | upper }}'"),
    ],
)
def test_a_malformed_placeholder_in_a_gate_question_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], question: str, words: str
) -> None:
    gate = (
        f'  - {{id: ask, kind: gate, question: "{question}", '
        "choices: {yes: done, no: '@blocked'}}\n"
    )
    repo = make_repo(tmp_path, capsys, MINI + gate + END)
    refused(capsys, repo, "nodes[1].question", words)


def test_a_malformed_placeholder_in_a_prompt_file_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys)
    prompt_file(repo).write_text("Write notes\nfor {{ item | upper }}\nand {{ mode\n")
    line = refused(capsys, repo, f"{prompt_file(repo)}:2", "'{{ item | upper }}'")
    assert "nodes[0].prompt" in line, line
    refused(capsys, repo, f"{prompt_file(repo)}:3", "not closed")


def test_code_with_braces_in_a_prompt_file_is_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``{{`` that is no attempt at a placeholder (JSX, a template language's blocks) is
    shown as written: only ``{{ name`` with a filter or no ``}}`` on its line is refused."""
    repo = make_repo(tmp_path, capsys)
    prompt_file(repo).write_text(
        "Write notes for {{ item }}.\nKeep <div style={{color: 'red'}}> and {{#each rows}}.\n"
    )
    code, out, err = cli(capsys, "validate", str(workflow_file(repo)))
    assert code == 0, (out, err)


# -- 6. a workflow saved as .yml -----------------------------------------------------------


def test_validate_warns_that_a_yml_workflow_is_never_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys)
    yml = workflow_file(repo).with_name("mini2.yml")
    yml.write_text((MINI + END).replace("name: mini", "name: mini2\nitems_dir: mini2"))
    (yml.parent / "prompts" / "mini2").mkdir()
    (yml.parent / "prompts" / "mini2" / "write.md").write_text("Write {{ item }}\n")
    code, _, err = cli(capsys, "validate", str(yml))
    assert code == 0, err
    (line,) = [x for x in err.splitlines() if "warning" in x]
    assert str(yml) in line and "mini2.yaml" in line and "never loaded" in line, line
    code, _, err = cli(capsys, "new", "y", "-w", "mini2", "-d", "x", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT, err
    assert "mini2.yml" in err and "mini2.yaml" in err, err


# -- 8. decisions of a workflow that does not load ------------------------------------------

GATE = "  - {id: ask, kind: gate, question: Go ahead?, choices: {yes: done, no: '@blocked'}}\n"


@pytest.mark.parametrize("as_json", [False, True])
def test_decisions_warns_of_a_workflow_that_does_not_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    repo = make_repo(tmp_path, capsys, MINI + GATE + END)
    assert cli(capsys, "new", "g1", "-w", "mini", "-d", "x", "-C", str(repo))[0] == 0
    assert cli(capsys, "run", "g1", "-C", str(repo))[0] == ExitCode.WAITING
    code, out, _ = cli(capsys, "decisions", "-C", str(repo))
    assert code == 0 and "g1 ask" in out, out
    path = workflow_file(repo)
    path.write_text(path.read_text().replace("kind: gate", "kind: gat"))
    code, out, err = cli(capsys, "decisions", *(["--json"] if as_json else []), "-C", str(repo))
    assert code == 0, err
    (line,) = [x for x in err.splitlines() if "warning" in x]
    assert str(path) in line and "workflow 'mini'" in line and "not listed" in line, line
    if as_json:
        assert out.strip() == "[]", out
    else:
        assert "No decisions are waiting." not in out, out
        assert "workflow 'mini' does not load" in out, out


# -- 9. wrong types in the workflow's own words --------------------------------------------


def test_a_string_where_a_list_belongs_is_called_a_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = '  - {id: tests, kind: check, run: "echo hi", on: {fail: "@blocked"}}\n'
    repo = make_repo(tmp_path, capsys, MINI + nodes + END)
    line = refused(capsys, repo, "nodes[1].run: ")
    assert "should be a list" in line and "tuple" not in line, line


def test_a_number_where_a_mapping_belongs_is_called_a_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = MINI.replace("outputs: [notes.md]}", "outputs: [notes.md], budget: 3}")
    repo = make_repo(tmp_path, capsys, text + END)
    line = refused(capsys, repo, "nodes[0].budget: ")
    assert "should be a mapping" in line, line
    assert "dictionary" not in line and "Budget" not in line, line


def test_an_end_nodes_message_is_added_to_the_closing_line_of_a_completed_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path, capsys, MINI + "  - {id: done, kind: end, message: Mini done.}\n")
    assert cli(capsys, "new", "i2", "-w", "mini", "-d", "x", "-C", str(repo))[0] == 0
    code, _, err = cli(capsys, "run", "i2", "-C", str(repo))
    assert code == 0, err
    (line,) = [x for x in err.splitlines() if "i2 complete:" in x]
    assert line.endswith("Mini done."), line
