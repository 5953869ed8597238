"""``phasegate logs`` of a loop running its items at once names each item's node
(``tasks[T1]/code``) on its agent lines, so the calls of items running side by side are
told apart; the loop's own lines keep the loop's name."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_status_parallel_loop_faults import _repo

from cli_process import cli_in_process as cli


def test_the_calls_of_parallel_items_name_their_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path, {"*": [{"sleep": 0.2, "write": {"src/{task}.py": "z\n"}}]})
    assert cli(capsys, "new", "f1", "-w", "fan", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == 0, out + err
    code, logs, err = cli(capsys, "logs", "f1", "-C", str(repo))
    assert code == 0, err
    lines = [" ".join(line.split()[2:]) for line in logs.splitlines()]
    for task in ("T1", "T2"):
        assert f"tasks[{task}]/code coder (scripted) dispatched (iteration 1, execute)" in lines
        finished = [t for t in lines if t.startswith(f"tasks[{task}]/code coder (scripted) fin")]
        assert len(finished) == 1, logs
        assert f"tasks item {task} done" in lines, logs
    assert not [t for t in lines if t.startswith("tasks coder")], logs
