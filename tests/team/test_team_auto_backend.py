"""The ``auto`` backend smoke-runs the ``team`` workflow without a model or a script."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_helpers import ITEM, cli, init_repo, status_json, write_config


@pytest.mark.parametrize(
    ("mode", "answers"),
    [
        (
            "full",
            ["--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch"],
        ),
        (
            "full",
            [
                "--answer",
                "UD-APPROVE-DESIGN=approved",
                "--answer",
                "UD-REVIEW-STRATEGY=single-final",
            ],
        ),
        ("lean", []),
    ],
)
def test_auto_backend_walks_team_to_done(tmp_path: Path, mode: str, answers: list[str]) -> None:
    """Every executor writes a valid example of its outputs (the parsers offer one), every
    review passes, the gates are answered with --answer: the session reaches DONE with the
    Definition of Done checked like any other."""
    repo = init_repo(tmp_path / "repo")
    write_config(repo, {})
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text().replace("backend: scripted", "backend: auto"))
    assert cli(repo, "new", ITEM, "-w", "team", "-m", mode, "-d", "Add a login").returncode == 0
    result = cli(repo, "run", ITEM, *answers)
    assert result.returncode == 0, result.stderr
    status = status_json(repo)
    assert status["current_state"] == "DONE"
    assert [t["status"] for t in status["tasks"]] == ["completed"]
    assert status["last_ci_result"] == "green"
