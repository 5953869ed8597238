"""The YAML layout mistakes a new user makes (a text holding ': ' left unquoted, a line
indented unlike its neighbours, a quote or bracket left open) are said in one line naming
the file and line, with what to write, the same in a workflow file (`phasegate validate`),
in `.phasegate/config.yaml` (`phasegate status`) and in a scripted agent's script; exit
code 2, no traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process, run_cli
from phasegate.agents.scripted import ScriptedBackend
from phasegate.errors import ConfigError, ExitCode

#: (broken YAML, line:column of the problem, what the message ends with)
MISTAKES = [
    (
        "roles:\n  default: {backend: auto}\ncommands:\n  test: echo a: b\n",
        "4:15",
        "mapping values are not allowed here; a text holding ': ' is written in quotes "
        '(test: "echo a: b")',
    ),
    (
        "commands:\n  test: pytest\n    extra: 1\n",
        "3:10",
        "mapping values are not allowed here; line 3 is indented as if it went on with the "
        "value above it: line its key up with the keys before it",
    ),
    (
        "roles:\n  default: {backend: auto}\n commands: {}\n",
        "3:2",
        "expected <block end>, but found '<block mapping start>' (while parsing a block "
        "mapping started on line 1); line 3 is indented unlike the lines before it: line "
        "each key up with the other keys of its mapping, each '-' with the others of its list",
    ),
    (
        'roles:\n  default: {backend: "auto}\n',
        "3:1",
        "found unexpected end of stream (while scanning a quoted scalar started on line 2); "
        "the quote opened on line 2 is not closed: end the text with it",
    ),
    (
        "roles:\n  default: {backend: auto\ncommands: {}\n",
        "3:9",
        "expected ',' or '}', but got ':' (while parsing a flow mapping started on line 2); "
        "close the '{' opened on line 2 with '}'",
    ),
    (
        "commands:\n  test: `pytest -q`\n",
        "2:9",
        "found character '`' that cannot start any token: a value that starts with '`' is "
        "written in quotes",
    ),
]
IDS = [
    "colon-in-text",
    "indented-too-far",
    "indented-too-little",
    "open-quote",
    "open-brace",
    "backquote",
]


@pytest.mark.parametrize(("text", "line", "said"), MISTAKES, ids=IDS)
def test_in_the_config(tmp_path: Path, text: str, line: str, said: str) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = tmp_path / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_text(text, encoding="utf-8")
    done = run_cli(tmp_path, "status")
    assert done.returncode == ExitCode.BAD_INPUT, done.stdout
    assert done.stderr.strip() == f"phasegate: error: {config}:{line}: invalid YAML: {said}"


@pytest.mark.parametrize(("text", "line", "said"), MISTAKES, ids=IDS)
def test_in_a_scripted_agents_script(tmp_path: Path, text: str, line: str, said: str) -> None:
    script = tmp_path / "agents.yaml"
    script.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        ScriptedBackend({"script": str(script)})
    assert str(refused.value) == f"{script}:{line}: invalid YAML: {said}"


@pytest.mark.parametrize(("text", "line", "said"), MISTAKES, ids=IDS)
def test_in_a_workflow_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: str, said: str
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(text, encoding="utf-8")
    code, out, err = cli_in_process(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert f"{path}:{line}: invalid YAML: {said}" in err.splitlines()
    assert "Traceback" not in err


def test_an_anchor_written_twice_is_taken_without_the_parsers_warning(tmp_path: Path) -> None:
    """YAML lets an anchor be written again (an alias names the latest): no several-line
    warning from the parser lands on stderr."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = tmp_path / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_text(
        "roles:\n  default: &r {backend: auto}\n  executor: &r {backend: auto}\n  reviewer: *r\n",
        encoding="utf-8",
    )
    done = run_cli(tmp_path, "status")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_a_second_document_says_which_line_to_delete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text("name: wf\n---\nnodes: []\n", encoding="utf-8")
    code, out, err = cli_in_process(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert err.splitlines()[0] == (
        f"{path}:2:1: invalid YAML: found a second YAML document, where the file holds one: "
        "delete the '---' or '...' line that ends the first"
    )
