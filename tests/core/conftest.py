"""Shared fixtures of the core tests: small workflow files written into tmp_path."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

#: A small valid workflow: draft -> polish -> finish, one reviewer, two modes.
DEMO_WORKFLOW = """\
name: demo
description: A small workflow for tests.
default_mode: standard
modes:
  standard: {max_iterations: 3}
  quick:
    max_iterations: 1
    skip: [polish]
roles:
  executor: {access: write}
  reviewer: {access: read-only}
phases:
  - name: draft
    artifact: draft.md
    executor: executor
    reviewer: reviewer
  - name: polish
    artifact: final.md
    inputs: [draft.md]
    prerequisites: {soft: [draft.md]}
    executor: executor
    reviewer: reviewer
  - name: finish
    kind: finish
"""

#: Prompt templates the demo workflow needs (one per executor phase, one per reviewer role).
DEMO_TEMPLATES: Mapping[str, str] = {
    "draft.md": "Write the draft of {{ item }}: {{ description }}\n",
    "polish.md": "Polish {{ artifact_path }} (iteration {{ iteration }}).\n",
    "reviewer.md": "Review the {{ phase }} phase of {{ item }}.\n",
}

WriteWorkflow = Callable[..., Path]


@pytest.fixture
def demo_yaml() -> str:
    """The text of a valid workflow named ``demo``."""
    return DEMO_WORKFLOW


@pytest.fixture
def write_workflow(tmp_path: Path) -> WriteWorkflow:
    """Write a workflow file and its prompt templates; return the file's path.

    ``write_workflow(text, name="demo", templates=None, directory=None)``: the
    templates default to the demo ones and go to ``<directory>/prompts/<name>/``.
    """

    def write(
        text: str,
        name: str = "demo",
        templates: Mapping[str, str] | None = None,
        directory: Path | None = None,
    ) -> Path:
        folder = directory or tmp_path / "workflows"
        prompts = folder / "prompts" / name
        prompts.mkdir(parents=True, exist_ok=True)
        for file_name, body in (DEMO_TEMPLATES if templates is None else templates).items():
            (prompts / file_name).write_text(body, encoding="utf-8")
        path = folder / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


def edit(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` (which must occur exactly once) replaced by ``new``."""
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def line_of(text: str, snippet: str, occurrence: int = 1) -> int:
    """1-based number of the line holding the ``occurrence``-th match of ``snippet``."""
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if snippet in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{snippet!r} not found {occurrence} time(s)")


@pytest.fixture
def edit_text() -> Callable[[str, str, str], str]:
    """:func:`edit` as a fixture (test modules do not import conftest)."""
    return edit


@pytest.fixture
def line_number() -> Callable[..., int]:
    """:func:`line_of` as a fixture."""
    return line_of
