"""The progress ``phasegate status`` gives of a parallel foreach counts an item whose work
waits on a merge conflict as waiting, not done (docs/workflows.md, parallel foreach)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from parallel_helpers import ITEM, fan_repo, new_item, run
from test_parallel_conflict_stop import clashing

from phasegate.api import open_repo
from phasegate.errors import BlockedError, WaitingForHuman

#: Four tasks that wait for nothing; T1 and T2 write the same lines.
INDEPENDENT = """\
# Tasks

- [ ] T1: The bucket
- [ ] T2: The clock
- [ ] T3: The config
- [ ] T4: The docs
"""


def status(root: Path, *args: str) -> str:
    shown = subprocess.run(
        [sys.executable, "-m", "phasegate", "status", ITEM, *args],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def test_an_item_waiting_on_its_merge_conflict_is_not_counted_done(tmp_path: Path) -> None:
    """Every item finished, T2's merge stopped at a conflict: status says 3 of 4 items
    done and 1 waiting on a merge conflict (in --json too); resolved, all 4 are done."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = clashing(tasks=INDEPENDENT)
    with pytest.raises(WaitingForHuman, match="conflict-T2"):
        run(root, agents)
    open_repo(root).answer(ITEM, "conflict-T2", "stop")
    with pytest.raises(BlockedError, match="merging T2 stopped at a conflict"):
        run(root, agents)
    text = " ".join(status(root).split())
    assert "in progress: 3 of 4 items done, 1 waiting on a merge conflict" in text
    assert "4 of 4 items done" not in text
    progress = json.loads(status(root, "--json"))["inProgress"]
    assert (progress["itemsDone"], progress["items"], progress["itemsConflicted"]) == (3, 4, 1)
