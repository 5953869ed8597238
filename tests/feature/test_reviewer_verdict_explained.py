"""A chain reviewer whose verdict is not taken as given says why, in the review history and
in the feedback the executor revises from (seed 000: {approved, issues, summary})."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cli_process import run_cli


def _feature_repo(path: Path, reviews: list[dict[str, Any]]) -> Path:
    """A git repository with the feature item ``f``, whose brainstorm reviews are ``reviews``."""
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    for args in (("init",), ("new", "f", "--workflow", "feature", "--mode", "quick")):
        done = run_cli(path, *args)
        assert done.returncode == 0, done.stderr
    script = {
        "executor": {"*": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}]},
        "chain-reviewer": {"brainstorm": [{"verdict": v} for v in reviews]},
    }
    (path / ".phasegate" / "agents.yaml").write_text(json.dumps(script), encoding="utf-8")
    return path


def _run(root: Path) -> str:
    done = run_cli(root, "run", "f", "--until", "brainstorm")
    assert done.returncode == 0, done.stderr
    return (root / "docs" / "features" / "f" / ".review-history.md").read_text(encoding="utf-8")


def _first_iteration(history: str) -> str:
    return history.split("### Iteration 1 ")[1].split("### Iteration 2 ")[0]


def test_an_approval_naming_a_blocker_says_why_it_is_not_approved(tmp_path: Path) -> None:
    root = _feature_repo(
        tmp_path / "r",
        [
            {
                "approved": True,
                "summary": "Fine overall",
                "issues": [{"severity": "blocker", "description": "No problem statement"}],
            },
            {"approved": True, "summary": "ok", "issues": []},
        ],
    )
    first = _first_iteration(_run(root))
    assert "**Verdict:** not approved" in first
    assert "Fine overall" in first
    assert "approved, but named a blocker" in first
    assert "- [blocker] No problem statement" in first


def test_a_rejection_without_a_reason_says_so(tmp_path: Path) -> None:
    root = _feature_repo(
        tmp_path / "r",
        [
            {"approved": False, "summary": "", "issues": []},
            {"approved": True, "summary": "ok", "issues": []},
        ],
    )
    first = _first_iteration(_run(root))
    assert "**Verdict:** not approved" in first
    assert "- none" not in first
    assert "did not approve and gave no reason" in first
    # The executor's second iteration is told the same, not a bare "REJECTED".
    journal = (root / "docs" / "features" / "f" / ".journal.jsonl").read_text(encoding="utf-8")
    assert "did not approve and gave no reason" in journal


def test_an_unclear_answer_is_labelled_once(tmp_path: Path) -> None:
    root = _feature_repo(
        tmp_path / "r",
        [
            {"approved": "yes", "summary": "fine", "issues": []},
            {"approved": True, "summary": "ok", "issues": []},
        ],
    )
    first = _first_iteration(_run(root))
    assert "**Verdict:** unclear (not approved)\n" in first
    assert "(unclear) (unclear)" not in first
    assert "(not approved) (unclear)" not in first
