"""Whether a loop's node was left midway by a run that is gone is decided by one rule in
``status NAME`` (and ``--json``, the dashboard's item) and in the table and the hook: a
loop with an item not done (running, or not started yet: a run killed between two items)
was; one whose items are all done or wait on a merge by hand was not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from phasegate.engine.item_status import with_left_midway
from phasegate.engine.live_run import left_midway


def _loop(done: int, conflicted: int, statuses: list[str]) -> dict[str, Any]:
    items = [{"key": f"t{n}", "status": status} for n, status in enumerate(statuses)]
    return {
        "status": "active",
        "blocked": None,
        "pendingDecisions": [],
        "inProgress": {
            "kind": "foreach",
            "node": "tasks",
            "phase": "tasks",
            "stage": "items",
            "items": len(statuses),
            "itemsDone": done,
            "itemsConflicted": conflicted,
        },
        "phases": [{"node": "tasks", "items": items}],
    }


@pytest.mark.parametrize(
    ("done", "conflicted", "statuses", "midway"),
    [
        (3, 0, ["done", "done", "done", "pending"], True),  # killed between two items
        (2, 0, ["done", "done", "running", "pending"], True),  # killed in an item
        (3, 1, ["done", "done", "done", "conflict"], False),  # waits on a merge by hand
        (4, 0, ["done", "done", "done", "done"], False),
    ],
)
def test_status_and_the_table_agree_on_a_loop_left_midway(
    tmp_path: Path, done: int, conflicted: int, statuses: list[str], midway: bool
) -> None:
    journal = tmp_path / ".journal.jsonl"
    journal.write_text(json.dumps({"event": "foreach.item", "node": "tasks"}) + "\n")
    table = left_midway(_loop(done, conflicted, statuses), journal) is not None
    shown = with_left_midway(_loop(done, conflicted, statuses), None, journal)
    status = bool(shown["inProgress"].get("interrupted"))
    assert table == midway
    assert status == midway
