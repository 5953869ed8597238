"""The ``foreach`` node: a body of nodes run once per item a parser finds.

The items are read once, when the node starts, and kept in the state with
their order, so a resumed run goes over the same items in the same order;
each item has its own status and its own cursor in the body, so a run killed
inside item T3 resumes inside T3 (its finished items are not run again).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from phasegate.engine.plugin_api import ItemParser, Task, plugin
from phasegate.errors import BadInputError, BlockedError
from phasegate.workflow.model import ForeachNode

if TYPE_CHECKING:
    from pathlib import Path

    from phasegate.engine.run import Run
    from phasegate.engine.walk import Steps

DONE = "done"


def dependency_order(items: Sequence[Task], where: str) -> list[Task]:
    """``items`` with every item after the items it depends on (document order otherwise).

    A dependency on an unknown item is ignored; a cycle is an error naming its items.
    """
    by_key = {t.key: t for t in items}
    ordered: list[Task] = []
    state: dict[str, str] = {}

    def visit(task: Task, trail: list[str]) -> None:
        mark = state.get(task.key)
        if mark == "done":
            return
        if mark == "visiting":
            cycle = [*trail[trail.index(task.key) :], task.key]
            raise BadInputError(
                f"{where}: the items depend on each other in a cycle: {' -> '.join(cycle)}"
            )
        state[task.key] = "visiting"
        for dep in task.deps:
            if dep in by_key:
                visit(by_key[dep], [*trail, task.key])
        state[task.key] = "done"
        ordered.append(task)

    for task in items:
        visit(task, [])
    return ordered


def safe_key(key: str) -> str:
    """An item key usable in a node path (``tasks[T3]/code``)."""
    return key.replace("[", "(").replace("]", ")")


def missing_source(run: Run, path: str, source: str, file: Path) -> None:
    """A foreach's file that no node left (its producer completed with the reviewer's
    concerns, without it): the run stops blocked, naming the node that makes it and the
    command that runs that node again (running the item again alone would stop here
    again)."""
    if file.exists():
        return
    from phasegate.workflow.transitions import producers

    made_by = producers(run.workflow, source)
    name = run.item.name
    redo = (
        f"; {made_by[0]} completed without it: run it again with phasegate run {name} "
        f"--phase {made_by[0]} --yes, then phasegate run {name}"
        if made_by
        else ""
    )
    raise BlockedError(
        f"{run.item.relative(file, run.state)} does not exist, so the items of {path} "
        f"cannot be read{redo}"
    )


def read_items(run: Run, path: str, node: ForeachNode, task: Task | None) -> None:
    """Read the items once, in order, into the foreach's state.

    The items are journaled as read: a run killed before the state was committed
    takes them from the journal, not from the file, which the items' work may
    have changed since (a ticked task, a status written by an agent).
    """
    ns = run.state.node(path)
    items_key = f"{path}#{ns.visit}/items"
    found_before = run.item.recorded().items(items_key)
    if found_before is not None:
        ns["order"] = list(found_before["items"])
        ns["items"] = copy.deepcopy(dict(found_before["entries"]))
        ns["rule"] = found_before.get("rule")
        run.item.applied(items_key)
        run.save(lazy=True)
        return
    parser: ItemParser = plugin("parsers", node.items.parser)
    source = node.items.file
    if source and "{{" in source:
        from phasegate.engine.nodes.gate import gate_values
        from phasegate.workflow.prompts import render

        # Filled as an agent's ``outputs`` are: ``{{ item }}-list.md`` -> ``f1-list.md``.
        source = render(source, {**gate_values(run, path, task), "node": node.id})
    file = run.item.item_dir / source if source else None
    if file is not None and source and not any(c in source for c in "*?[{"):
        missing_source(run, path, node.items.file or source, file)
    parsed = parser.parse(run.context(path, node, task, node.items.with_), file)
    items = list(parsed.items)
    where = str(file) if file is not None else f"{node.items.parser} items"
    if node.order == "deps":
        items = dependency_order(items, where)
    keys: list[str] = []
    entries: dict[str, Any] = {}
    for found in items:
        key = safe_key(found.key)
        if key in entries:
            raise BadInputError(f"{where}: two items are both called {found.key!r}")
        keys.append(key)
        entries[key] = {"status": "pending", "at": None, **found.to_dict()}
    ns["order"] = keys
    ns["items"] = entries
    ns["rule"] = parsed.rule
    run.item.record(
        "foreach.items",
        key=items_key,
        node=path,
        parser=node.items.parser,
        rule=parsed.rule,
        order=node.order,
        items=keys,
        entries=entries,
        notes=list(parsed.notes),
    )
    run.save(lazy=True)


def parallel_jobs(run: Run, node: ForeachNode) -> int:
    """How many items of ``node`` run at once: its ``parallel``, unless ``run --jobs`` or
    ``concurrency.jobs`` in the config says otherwise (only for a foreach that declares
    ``parallel``; ``--jobs 1`` runs its items one at a time)."""
    if node.parallel <= 1:
        return 1
    override = run.options.jobs or run.item.config.concurrency.jobs
    return override if override is not None else node.parallel


def can_overlap(run: Run, path: str, node: ForeachNode) -> bool:
    """Whether two items of the loop at ``path`` still to run could run at once."""
    from phasegate.engine.nodes.overlap import items_can_overlap

    ns = run.state.node(path)
    return items_can_overlap(list(ns["order"]), dict(ns["items"]), node.skip_done)


def run_foreach(run: Run, path: str, node: ForeachNode, task: Task | None) -> Steps:
    from phasegate.engine.walk import ItemCursor, Outcome, definition_path

    ns = run.state.node(path)
    if run.over_visit_limit(path):
        return Outcome("exhausted")
    if ns.get("order") is None:
        read_items(run, path, node, task)
    jobs = parallel_jobs(run, node)
    if jobs > 1 and not ns.get("fanout") and not can_overlap(run, path, node):
        jobs = 1  # its items form a chain: one at a time, in the work tree
    if jobs > 1 or ns.get("fanout"):  # a fan-out under way goes on as one, whatever --jobs says
        from phasegate.engine.nodes.parallel import run_parallel

        outcome: Outcome = run_parallel(run, path, node, task, jobs)
        return outcome
    def_prefix = definition_path(path) + "/"
    start = node.body[0].id
    keys = list(run.state.node(path)["order"])
    if node.parallel > 1 and node.order != "deps":
        # A parallel loop run one at a time (--jobs 1, or its items form a chain) still
        # starts an item only after the items it depends on, as it does in parallel.
        entries = run.state.node(path)["items"]
        keys = [
            t.key for t in dependency_order([Task.from_dict(k, entries[k]) for k in keys], path)
        ]
    for key in keys:
        entry = run.state.node(path)["items"][key]
        if entry["status"] in (DONE, "skipped"):
            continue
        if node.skip_done and entry.get("done") and entry["status"] == "pending":
            entry["status"] = "skipped"
            run.item.record(
                "foreach.item",
                node=path,
                key=key,
                status="skipped",
                reason=entry.get("skip_reason") or "already done",
            )
            run.save(lazy=True)
            continue
        if entry["status"] != "running":
            entry["status"] = "running"
            run.item.record(
                "foreach.item", node=path, key=key, status="running", title=entry.get("title", "")
            )
            run.save(lazy=True)
        current = Task.from_dict(key, entry)
        end = yield from run.frame(
            def_prefix,
            f"{path}[{key}]/",
            tuple(node.body),
            ItemCursor(run.state, path, key),
            start,
            current,
        )
        entry = run.state.node(path)["items"][key]
        entry["status"] = DONE if end.outcome == DONE else end.outcome
        run.item.record("foreach.item", node=path, key=key, status=entry["status"])
        run.save(lazy=True)
        if end.outcome != DONE:
            return Outcome(end.outcome)
    return Outcome(DONE)
