"""A prompt template that is not found says why when it can be told: a name without its `.md`
when that file is there, a path leaving the prompt folder, a folder of that name."""

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
    executor: writer
    prompt: PROMPT
    outputs: [notes.md]
  - id: done
    kind: end
"""


@pytest.mark.parametrize(
    ("prompt", "why"),
    [
        ("write", " (there is write.md: name it with its extension)"),
        ("../write.md", " (a template is named by its path inside a prompt folder: "),
        ("/etc/hosts", " (a template is named by its path inside a prompt folder: "),
        ("notes.md", " ({folder}/notes.md is a folder, not a file)"),
        ("other.md", ""),
    ],
)
def test_a_template_not_found_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], prompt: str, why: str
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW.replace("PROMPT", prompt))
    folder = tmp_path / "prompts" / "wf"
    (folder / "notes.md").mkdir(parents=True)
    (folder / "write.md").write_text("Write notes for {{ item }}.\n")
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    (line,) = [text for text in err.splitlines() if text.startswith(f"{path}:")]
    said = f"{path}:8: nodes[0].prompt: prompt template {prompt!r} not found in {folder}"
    assert line.startswith(said + why.format(folder=folder)), line
    if not why:
        assert line == said
