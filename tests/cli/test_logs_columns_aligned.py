"""``phasegate logs`` keeps its columns aligned when a loop item's node
(``tasks[T1]/implement``) is longer than the node column's least width: the role column
starts at the same place on every line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_status_parallel_loop_faults import _repo

from cli_process import cli_in_process as cli


def test_role_column_starts_at_one_place_on_every_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path, {"*": [{"write": {"src/{task}.py": "z\n"}}]})
    # the body's node named ``implement``: ``tasks[T1]/implement`` is wider than the column
    flow = repo / ".phasegate" / "workflows" / "fan.yaml"
    flow.write_text(flow.read_text().replace("{id: code,", "{id: implement,"))
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "fan"
    (prompts / "code.md").rename(prompts / "implement.md")
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", *who, "commit", "-qm", "implement"], cwd=repo, check=True)
    assert cli(capsys, "new", "f1", "-w", "fan", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == 0, out + err
    code, logs, err = cli(capsys, "logs", "f1", "-C", str(repo))
    assert code == 0, err
    lines = [line for line in logs.splitlines() if line[:1].isdigit()]
    item_lines = [line for line in lines if "tasks[T1]/implement " in line and " coder " in line]
    other_lines = [line for line in lines if line.split()[2] == "tasks"]
    assert item_lines and other_lines, logs
    # "coder" follows the item's node; the loop's own lines have their role at that column
    column = item_lines[0].index(" coder ") + 1
    with_role = [line for line in lines if " (scripted) " in line]
    assert len(with_role) > len(item_lines), logs
    for line in with_role:
        assert line[column:].startswith(("coder ", "planner ")), (column, logs)
