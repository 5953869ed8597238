"""A merge conflict of parallel tasks answered ``stop`` ends `phasegate implement` (exit 4)
with a line whose way on is `phasegate implement ID`, the implement workflow's command,
not `phasegate run ID`."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import cli
from test_parallel_tasks_conflict import B, clashing_repo


def test_a_stopped_conflict_says_phasegate_implement(tmp_path: Path) -> None:
    root = clashing_repo(tmp_path)
    assert cli(root, "implement", "006").returncode == 3
    assert cli(root, "answer", "006", f"conflict-{B}", "stop").returncode == 0
    stopped = cli(root, "implement", "006")
    assert stopped.returncode == 4, stopped.stderr
    line = stopped.stderr.strip().splitlines()[-1]
    assert line.endswith(
        f"then run again (or to answer conflict-{B} anew): phasegate implement 006"
    )
