"""A prompt template holding a known placeholder's name in single braces (``{item}``) gets
it as written, never filled; an empty template gives the agent no instructions. Neither
is refused (a template may hold code with braces), but ``validate`` warns of each,
naming the workflow file's line and field, the template's file, line and column, and the
placeholder meant. ``${item}`` (a shell's or a script's own) and other words in braces
are code, not warned of."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli

WORKFLOW = """\
name: wf
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, critic: {access: read-only}}
nodes:
  - id: plan
    executor: writer
    prompt: plan.md
    reviewer: critic
    outputs: [tasks.md]
  - id: loop
    kind: foreach
    items: {parser: markdown-tasks, file: tasks.md}
    body:
      - id: do
        executor: writer
        outputs: ["reports/{{ task }}.md"]
      - id: fin
        kind: end
  - id: done
    kind: end
"""

GOOD = {
    "plan.md": "Plan {{ item }}.\n",
    "critic.md": "Review {{ artifact }}.\n",
    "do.md": "Do {{ task }}.\n",
}


def validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], templates: dict[str, str]
) -> tuple[int, str, str, Path]:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True, exist_ok=True)
    for name, text in {**GOOD, **templates}.items():
        (prompts / name).write_text(text)
    code, out, err = cli(capsys, "validate", str(path))
    return code, out, err, prompts


def warnings(err: str) -> list[str]:
    return [
        line.removeprefix("phasegate: warning: ")
        for line in err.splitlines()
        if line.startswith("phasegate: warning: ")
    ]


def test_single_braces_in_a_template_are_warned_of_with_the_placeholder_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err, prompts = validate(
        tmp_path, capsys, {"plan.md": "# Plan\n\nWrite the plan of {item} (see { task }).\n"}
    )
    assert code == 0, err
    assert "ok: workflow 'wf'" in out
    path = tmp_path / "wf.yaml"
    assert warnings(err) == [
        f"{path}:7: nodes[0].prompt: template {prompts / 'plan.md'}:3:19: '{{item}}' is "
        "never filled: a placeholder takes double braces ({{ item }})",
        f"{path}:7: nodes[0].prompt: template {prompts / 'plan.md'}:3:31: '{{ task }}' is "
        "never filled: a placeholder takes double braces ({{ task }})",
    ]


def test_an_empty_template_is_warned_of(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err, prompts = validate(tmp_path, capsys, {"critic.md": " \n\n", "do.md": ""})
    assert code == 0, err
    path = tmp_path / "wf.yaml"
    found = warnings(err)
    assert len(found) == 2, err
    assert found[0].startswith(
        f"{path}:5: nodes[0].reviewer_prompt: template {prompts / 'critic.md'} is empty"
    )
    assert found[1].startswith(f"{path}:14: nodes[1].body[0].prompt: template ")
    assert f"{prompts / 'do.md'} is empty" in found[1]
    assert all("no instructions" in line for line in found)


def test_the_warnings_are_in_validates_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "wf.yaml"
    path.write_text(WORKFLOW)
    prompts = tmp_path / "prompts" / "wf"
    prompts.mkdir(parents=True)
    for name, text in {**GOOD, "do.md": "Do {task_title}.\n"}.items():
        (prompts / name).write_text(text)
    code, out, err = cli(capsys, "validate", "--json", str(path))
    assert code == 0, err
    report = json.loads(out)
    assert report["valid"] is True
    assert len(report["warnings"]) == 1
    assert "'{task_title}' is never filled" in report["warnings"][0]


def test_code_with_braces_is_not_warned_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "Plan {{ item }}.\n\n```sh\nfor item in *; do echo ${item}; done\n```\n"
        "```js\nconst o = {json}; f({ x });\nstyle={{color: 'red'}}\n```\n"
    )
    code, _, err, _ = validate(tmp_path, capsys, {"plan.md": text})
    assert code == 0, err
    assert warnings(err) == []
