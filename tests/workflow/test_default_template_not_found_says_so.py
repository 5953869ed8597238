"""A node that names no template uses a default one (`ID.md` for the executor, `ROLE.md` for a
reviewer). When that file is missing, `validate` pointed at a field the file never wrote
(`nodes[0].prompt: prompt template 'write.md' not found in ...`); it now says the name is the
default and what to write: the file, or the field naming another template. A template the
workflow names itself is said as before. One line each, naming the file and line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, checker: {}}
nodes:
  - id: write
    executor: writer
    outputs: [notes.md]
    reviewers:
      - {role: checker, on: {APPROVED: pass, REJECTED: revise, UNCLEAR: revise}}
  - id: polish
    executor: writer
    prompt: polishing.md
    outputs: [final.md]
  - id: done
    kind: end
"""


def test_a_missing_default_template_says_it_is_the_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    folder = tmp_path / "prompts" / "wf"
    folder.mkdir(parents=True)
    code, out, err = cli(capsys, "validate", str(path))
    assert code == ExitCode.BAD_INPUT, out + err
    assert [line for line in err.splitlines() if line.startswith(f"{path}:")] == [
        f"{path}:5: nodes[0].prompt: prompt template 'write.md' not found in {folder} (the "
        "default name: write that file, or name the template with prompt:)",
        f"{path}:9: nodes[0].reviewers[0].prompt: prompt template 'checker.md' not found in "
        f"{folder} (the default name: write that file, or name the template with prompt:)",
        f"{path}:12: nodes[1].prompt: prompt template 'polishing.md' not found in {folder}",
    ]
