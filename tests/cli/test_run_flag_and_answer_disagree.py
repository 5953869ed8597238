"""`run --yes` with `--answer transition-warning=stop`, or `--partial X` with `--answer
partial-phase=Y`, answer one decision two ways: refused before anything is read or run
(exit 2, one line naming both), instead of one of them being ignored. The same answer
twice is no conflict."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import run_cli


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (
            ("--yes", "--answer", "transition-warning=stop"),
            "--yes and --answer transition-warning=stop answer decision transition-warning "
            "differently; give one of them",
        ),
        (
            ("--partial", "fresh", "--answer", "partial-phase=review"),
            "--partial fresh and --answer partial-phase=review answer decision partial-phase "
            "differently; give one of them",
        ),
    ],
)
def test_a_flag_and_an_answer_that_disagree_are_refused(
    tmp_path: Path, args: tuple[str, ...], named: str
) -> None:
    refused = run_cli(tmp_path, "run", "f1", *args)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip() == f"phasegate: error: {named}", refused.stderr


def test_a_flag_and_the_same_answer_are_not_refused(tmp_path: Path) -> None:
    ran = run_cli(tmp_path, "run", "f1", "--yes", "--answer", "transition-warning=proceed")
    assert "differently" not in ran.stderr, ran.stderr
