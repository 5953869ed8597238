"""User workflows: what `validate` accepts works when it runs, and what cannot work (or
would have no effect) is refused on load with one line naming the file, line and field."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

HEAD = """\
name: f
items_dir: fitems
modes: {standard: {max_iterations: 2}}
roles: {w: {access: write}}
nodes:
"""

LOOP = """\
  - id: mk
    executor: w
    outputs: [LIST]
  - id: each
    kind: foreach
    items: {parser: markdown-tasks, file: LIST}
    body:
      - id: b
        executor: w
        prompt: b.md
      - id: bend
        kind: end
  - id: fin
    kind: end
"""

AGENTS = """\
w:
  mk: [{write: {"{item_dir}/WRITTEN": "- [ ] T1 one\\n- [ ] T2 two\\n"}}]
  "*": [{write: {"{item_dir}/done-{task}.md": "x\\n"}}]
"""


def make_repo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nodes: str, written: str = "list.md"
) -> Path:
    """A git repository, initialised, holding workflow ``f`` made of ``nodes``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "f").mkdir(parents=True)
    for prompt in ("mk", "a", "b"):
        (folder / "prompts" / "f" / f"{prompt}.md").write_text("Do {{ node }}\n")
    (folder / "f.yaml").write_text(HEAD + nodes)
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS.replace("WRITTEN", written))
    return repo


def workflow_path(repo: Path) -> Path:
    return repo / ".phasegate" / "workflows" / "f.yaml"


def refused(capsys: pytest.CaptureFixture[str], repo: Path, field: str) -> str:
    """``validate`` refuses the workflow (exit 2) with a line naming its file and ``field``."""
    path = workflow_path(repo)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, (out, err)
    lines = [line for line in err.splitlines() if line.startswith(f"{path}:")]
    assert len(lines) == 1, err
    assert f": {field}: " in lines[0], lines[0]
    return lines[0]


# -- a foreach's items file ---------------------------------------------------------------


def test_an_items_file_named_after_the_item_is_filled_at_run_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``file: "{{ item }}-list.md"`` reads the file ``mk`` wrote as ``outputs`` names it."""
    nodes = LOOP.replace("LIST", '"{{ item }}-list.md"')
    repo = make_repo(tmp_path, capsys, nodes, written="{item}-list.md")
    assert cli(capsys, "validate", str(workflow_path(repo)))[0] == 0
    assert cli(capsys, "new", "f1", "-w", "f", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == 0, (out, err)
    item_dir = repo / "fitems" / "f1"
    assert (item_dir / "f1-list.md").exists()
    assert (item_dir / "done-T1.md").exists() and (item_dir / "done-T2.md").exists()


def test_an_unknown_name_in_an_items_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name that is never filled there would leave the braces in the file name."""
    repo = make_repo(tmp_path, capsys, LOOP.replace("file: LIST", 'file: "{{ feature }}.md"'))
    line = refused(capsys, repo, "nodes[1].items.file")
    assert "'feature'" in line and "item" in line


def test_the_item_of_a_loop_is_unknown_in_its_own_items_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``{{ task }}`` names an item of a loop: a top-level loop's file is read before any."""
    repo = make_repo(tmp_path, capsys, LOOP.replace("file: LIST", 'file: "{{ task }}.md"'))
    line = refused(capsys, repo, "nodes[1].items.file")
    assert "'task'" in line and "only inside a foreach body" in line


# -- a check node's commands ---------------------------------------------------------------

CHECKS = """\
  - id: t
    kind: check
    on: {pass: fin, fail: "@blocked"}
    run: ["python -m pytest -q", lint, {name: ok, run: "true"}]
  - id: fin
    kind: end
"""


def test_validate_warns_of_check_names_the_config_does_not_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bare name in a check's ``run`` is a key of ``commands:`` in the config: one the
    config lacks is named with its node, and a name with spaces is offered the inline form."""
    repo = make_repo(tmp_path, capsys, CHECKS)
    path = workflow_path(repo)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == 0, (out, err)
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 2, err
    spaced, lint = warnings
    assert f"{path}:" in spaced and "nodes[0].run[0]" in spaced and "'t'" in spaced
    assert "{name: " in spaced and 'run: "python -m pytest -q"}' in spaced
    assert "commands.python" not in spaced
    assert "nodes[0].run[1]" in lint and "commands.lint" in lint
    config = repo / ".phasegate" / "config.yaml"
    text = re.sub(r"(?m)^commands:\n(  \{\}\n)?", "commands:\n  lint: 'true'\n", config.read_text())
    config.write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == 0 and "runs 'lint'" not in err and "python -m pytest -q" in err, (out, err)


def test_a_run_names_the_inline_form_for_a_check_name_with_spaces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's message for ``python -m pytest -q`` does not ask for a config key with
    spaces: it shows how to write the command inline."""
    repo = make_repo(tmp_path, capsys, CHECKS)
    assert cli(capsys, "new", "f1", "-w", "f", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, (out, err)
    assert "commands.python -m pytest -q" not in out + err
    assert 'run: "python -m pytest -q"}' in err
    assert "commands.lint" in err


# -- end nodes: fields with no effect where written ----------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("status", "blocked", "only at the top level"),
        ("message", '"T failed"', "only at the top level"),
    ],
)
def test_an_end_node_in_a_body_refuses_what_only_a_top_level_one_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: str, words: str
) -> None:
    """``status`` and ``message`` end the whole item: in a body they would do nothing (the
    item's task ends ``done``)."""
    nodes = LOOP.replace("LIST", "list.md").replace(
        "      - id: bend\n        kind: end\n",
        f"      - id: bend\n        kind: end\n        {field}: {value}\n",
    )
    repo = make_repo(tmp_path, capsys, nodes)
    line = refused(capsys, repo, f"nodes[1].body[1].{field}")
    assert words in line and "'bend'" in line, line
    assert line.split(":")[1] == "18", line  # the line of the field


def test_a_top_level_end_node_refuses_an_outcome(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``outcome`` is what a foreach body's item ends with: a top-level end has none."""
    nodes = LOOP.replace("LIST", "list.md").replace(
        "  - id: fin\n    kind: end\n", "  - id: fin\n    kind: end\n    outcome: weird\n"
    )
    repo = make_repo(tmp_path, capsys, nodes)
    line = refused(capsys, repo, "nodes[2].outcome")
    assert "'fin'" in line and "inside a foreach body" in line, line


def test_an_end_node_with_fields_where_they_work_is_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``outcome`` in a body and ``status``/``message`` at the top level still load."""
    nodes = (
        LOOP.replace("LIST", "list.md")
        .replace("      - id: bend\n        kind: end\n", "      - id: bend\n        kind: end\n")
        .replace(
            "  - id: fin\n    kind: end\n",
            '  - id: fin\n    kind: end\n    status: stopped\n    message: "all done"\n',
        )
    )
    repo = make_repo(tmp_path, capsys, nodes)
    code, out, err = cli(capsys, "validate", str(workflow_path(repo)))
    assert code == 0, (out, err)


# -- run --phase ---------------------------------------------------------------------------

GATED = """\
  - id: a
    executor: w
    outputs: [list.md]
  - id: g
    kind: gate
    question: "Go?"
    choices: {go: {to: each}, no: {to: fin}}
  - id: each
    kind: foreach
    items: {parser: markdown-tasks, file: list.md}
    body:
      - id: b
        executor: w
        prompt: b.md
      - id: bend
        kind: end
  - id: fin
    kind: end
"""


def test_run_phase_refuses_an_end_node_it_does_not_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--phase fin`` names no phase: refused like an unknown one (exit 2, one line listing
    the phases), and the item does not end with nothing done."""
    repo = make_repo(tmp_path, capsys, GATED)
    assert cli(capsys, "new", "h1", "-w", "f", "-C", str(repo))[0] == 0
    for flags in ([], ["--yes"]):
        code, out, err = cli(capsys, "run", "h1", "--phase", "fin", *flags, "-C", str(repo))
        assert code == ExitCode.BAD_INPUT, (out, err)
        [line] = err.strip().splitlines()
        assert "'fin'" in line and "phases: a, g, each" in line, line
    code, out, err = cli(capsys, "status", "h1", "-C", str(repo))
    assert code == 0 and "completed" not in out, out
    code, out, err = cli(capsys, "run", "h1", "--until", "fin", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT and "phases: a, g, each" in err, (out, err)


def test_the_transition_warning_names_every_node_it_skips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Starting ``each`` first skips the agent ``a`` and the gate ``g``: both are named."""
    repo = make_repo(tmp_path, capsys, GATED)
    assert cli(capsys, "new", "h1", "-w", "f", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "h1", "--phase", "each", "-C", str(repo))
    assert code == ExitCode.WAITING, (out, err)
    assert "skipping a, g (not completed)" in err, err
