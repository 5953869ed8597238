"""Whether two items of a parallel ``foreach`` could ever run at the same time.

A parallel foreach whose items still to run each wait for the one before it
(a chain, such as a plan phase marked sequential) gains nothing from running
them in worktrees: they run one at a time in the work tree, exactly as a plain
foreach runs them. Only a loop with two independent items fans out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SETTLED = ("done", "skipped")


def to_run(entry: Mapping[str, Any], skip_done: bool) -> bool:
    """Whether the item of ``entry`` still has work to do (an item already done in its
    source, not started, is skipped)."""
    status = entry.get("status")
    if status in SETTLED:
        return False
    return not (skip_done and entry.get("done") and status == "pending")


def _waits_for(key: str, entries: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Every item ``key`` waits for, directly or through others (a cycle ends the walk)."""
    found: set[str] = set()
    todo = list(entries[key].get("deps") or ())
    while todo:
        dep = todo.pop()
        if dep in found or dep not in entries:
            continue
        found.add(dep)
        todo.extend(entries[dep].get("deps") or ())
    return found


def items_can_overlap(
    order: Sequence[str], entries: Mapping[str, Mapping[str, Any]], skip_done: bool
) -> bool:
    """Whether two of the items still to run are independent: neither waits, directly or
    through other items, for the other."""
    pending = [k for k in order if k in entries and to_run(entries[k], skip_done)]
    if len(pending) < 2:
        return False
    waits = {key: _waits_for(key, entries) for key in pending}
    for index, first in enumerate(pending):
        for second in pending[index + 1 :]:
            if second not in waits[first] and first not in waits[second]:
                return True
    return False
