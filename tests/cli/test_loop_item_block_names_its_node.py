"""A loop item that blocks names the item and its node (``tasks[T1]/code``), not only the
loop: in the run's error line, in ``status NAME``'s ``Blocked:`` line and in the item's
reason. The phase stays the loop's label (``Phase: tasks``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_status_parallel_loop_faults import _repo, _status

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode


def test_a_blocked_loop_item_names_its_item_and_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    coder = {"*": [{"sleep": 0.2, "write": {"src/{task}.py": "z\n"}}]}
    # T1's check fails in T1's worktree until its coder's visit limit is reached.
    config = 'commands:\n  unit-tests: "test ! -f src/T1.py"\n'
    repo = _repo(tmp_path, coder, check=True, config=config)
    assert cli(capsys, "new", "f1", "-w", "fan", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    said = "f1: tasks[T1]/code ended exhausted: it reached its visit limit (max_visits 2)"
    assert f"phasegate: error: {said}" in err, err
    assert "f1: tasks ended" not in out + err, out + err

    shown, data, row = _status(capsys, repo)
    assert f"Blocked: {said}" in shown, shown
    assert "Phase: tasks, blocked: 1 of 2 items done" in shown, shown
    reasons = {i["key"]: i.get("reason") or "" for i in data["phases"][1]["items"]}
    assert said in reasons["T1"], reasons
    assert row.split()[2] == "blocked", row
