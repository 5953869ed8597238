"""An issue's ``location`` is "a line or section reference" (seed 000): a reviewer that
gives a line as a number (``"location": 42``) has its verdict read, not made unclear."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli


def _history(tmp_path: Path, reply: dict[str, object]) -> str:
    root = tmp_path / "r"
    root.mkdir()
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    for args in (("init",), ("new", "f", "--workflow", "feature", "--mode", "hotfix")):
        done = run_cli(root, *args)
        assert done.returncode == 0, done.stderr
    script = {
        "executor": {"*": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}]},
        "chain-reviewer": {"brainstorm": [reply]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script), encoding="utf-8")
    done = run_cli(root, "run", "f", "--until", "brainstorm")
    assert done.returncode == 0, done.stderr
    return (root / "docs" / "features" / "f" / ".review-history.md").read_text("utf-8")


ANSWER = {
    "approved": True,
    "summary": "Enough for the spec",
    "issues": [{"severity": "note", "description": "Name the users", "location": 42}],
}


@pytest.mark.parametrize(
    "reply",
    [{"verdict": ANSWER}, {"text": "```json\n" + json.dumps(ANSWER) + "\n```"}],
    ids=["structured", "json-text"],
)
def test_a_line_number_location_is_read(tmp_path: Path, reply: dict[str, object]) -> None:
    history = _history(tmp_path, reply)
    assert "**Verdict:** approved" in history, history
    assert "- [note] Name the users (at 42)" in history


def test_a_location_of_another_kind_is_still_unclear(tmp_path: Path) -> None:
    answer = {**ANSWER, "issues": [{**ANSWER["issues"][0], "location": ["a", "b"]}]}  # type: ignore[index, dict-item]
    history = _history(tmp_path, {"verdict": answer})
    assert "**Verdict:** unclear (not approved)" in history, history
