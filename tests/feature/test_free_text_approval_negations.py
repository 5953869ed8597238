"""A reviewer answering in free text (its backend not made to answer in the schema) whose
first line approves and whose rest says there is no problem, in the ways people say it,
is an approval; one that names a problem after approving still is not."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli


def _first_verdict(tmp_path: Path, answer: str) -> str:
    root = tmp_path / "r"
    root.mkdir()
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    for args in (("init",), ("new", "f", "--workflow", "feature", "--mode", "hotfix")):
        done = run_cli(root, *args)
        assert done.returncode == 0, done.stderr
    config = root / ".phasegate" / "config.yaml"
    text = config.read_text(encoding="utf-8")
    assert "    script: .phasegate/agents.yaml\n" in text
    config.write_text(
        text.replace(
            "    script: .phasegate/agents.yaml\n",
            "    script: .phasegate/agents.yaml\n    structured_output: false\n",
        ),
        encoding="utf-8",
    )
    script = {
        "executor": {"*": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}]},
        "chain-reviewer": {"brainstorm": [{"text": answer}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script), encoding="utf-8")
    done = run_cli(root, "run", "f", "--until", "brainstorm")
    assert done.returncode == 0, done.stderr
    history = (root / "docs" / "features" / "f" / ".review-history.md").read_text("utf-8")
    return history.split("**Verdict:** ")[1].split("\n")[0]


@pytest.mark.parametrize(
    "answer",
    [
        "APPROVED\nNo issues or blockers found.",
        "APPROVED\nIssues: none",
        "APPROVED\nNothing is missing for the spec.",
        "LGTM\nNo blockers, no issues.",
    ],
)
def test_an_approval_saying_there_is_no_problem_approves(tmp_path: Path, answer: str) -> None:
    assert _first_verdict(tmp_path, answer).startswith("approved"), answer


@pytest.mark.parametrize(
    "answer",
    [
        "APPROVED\nOne issue: the options are not compared.",
        "APPROVED\nNo tests, and a blocker: the problem statement is missing.",
        "APPROVED\nIssues: the user intent is missing.",
    ],
)
def test_an_approval_naming_a_problem_does_not(tmp_path: Path, answer: str) -> None:
    assert not _first_verdict(tmp_path, answer).startswith("approved"), answer
