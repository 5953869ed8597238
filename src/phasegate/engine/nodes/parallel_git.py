"""A parallel foreach's git side: where each item's worktree starts, and how the
items' work comes back (merged in plan order, then put into the work tree).

Each function takes the :class:`~phasegate.engine.nodes.parallel.FanOut` it
works for; a merge conflict goes to :mod:`phasegate.engine.nodes.parallel_conflicts`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from phasegate.engine.fanout_git import FanoutGit
from phasegate.engine.nodes.parallel_conflicts import resolve_conflict, slug_of
from phasegate.engine.plugin_api import Task
from phasegate.errors import BlockedError, PhasegateError
from phasegate.state.journal import utc_now

if TYPE_CHECKING:
    from phasegate.engine.nodes.parallel import FanOut

#: An item's status once its body ended ``done`` (its work is committed, to be merged).
DONE = "done"
#: Statuses of items that hold nothing back.
SETTLED = (DONE, "skipped")


def begin(fan: FanOut) -> None:
    """The loop starts (or resumes): its base commit is made once and recorded, before
    anything else is written."""
    from phasegate.engine.nodes.foreach import dependency_order

    entries = fan.entries()
    # Items wait for their dependencies whatever the order: a cycle would never start.
    dependency_order([Task.from_dict(k, entries[k]) for k in fan.order], fan.path)
    # Nothing is written to the state before the base is made: a loop that cannot
    # start (no commit to branch from) is not under way, and --jobs 1 can run it.
    before = dict(fan.run.state.node(fan.path).get("fanout") or {})
    started = str(before.get("started") or utc_now())
    date = str(before.get("date") or started.replace("Z", "+00:00"))
    base = before.get("base")
    if fan.node.isolation == "worktree":
        fan.git = make_git(fan, date)
        base = base or fan.git.snapshot()
    loop = fan.fan()
    if not loop.get("started"):
        loop["started"], loop["date"] = started, date
    if fan.git is not None and not loop.get("base"):
        loop["base"] = loop["merged"] = base
        loop["integrated"] = 0
    fan.journal(
        "fanout.started",
        jobs=fan.jobs,
        isolation=fan.node.isolation,
        items=[k for k in fan.order if fan.entries()[k]["status"] not in SETTLED],
    )
    fan.save(lazy=True)


def make_git(fan: FanOut, date: str) -> FanoutGit:
    workdir = fan.item.workdir(fan.run.state)
    exclude = [".phasegate"]
    rel = fan.run.rel("", fan.item.item_dir)
    if not rel.startswith("/"):
        exclude.append(rel)
    return FanoutGit(fan.item.repo, workdir, fan.item.name, fan.path, tuple(exclude), date)


def start_commit(fan: FanOut, key: str) -> str | None:
    """Where ``key``'s worktree starts: the base, or its dependencies' work merged into
    it in plan order (``None``: they conflict and the loop ends with merge-conflict)."""
    assert fan.git is not None
    entry = fan.entries()[key]
    if entry.get("start"):
        return str(entry["start"])
    wanted = set(entry.get("deps") or ())
    head = str(fan.fan()["base"])
    for dep in (d for d in fan.order if d in wanted and fan.entries()[d].get("commit")):
        commit = str(fan.entries()[dep]["commit"])
        merged = fan.git.merge(head, commit, f"phasegate: {dep}'s work, for {key}")
        if merged.commit is not None:
            head = merged.commit
            continue
        resolved = resolve_conflict(fan, key, f"deps:{dep}", head, commit, merged.conflicts)
        if resolved is None:
            return None  # waiting for that conflict, or the loop ends with merge-conflict
        head = resolved
    entry["start"] = head
    fan.save(lazy=True)
    return head


def integrate(fan: FanOut, *, past_unfinished: bool = False) -> None:
    """Merge finished items into the merged ref, strictly in plan order.

    An item still under way (or parked) holds back the items after it, so the
    merged history never depends on timing; ``past_unfinished`` (the loop is
    ending other than done) merges the finished ones past it.
    """
    if fan.git is None:
        return
    loop = fan.fan()
    while int(loop["integrated"]) < len(fan.order):
        key = fan.order[int(loop["integrated"])]
        if key in fan.parked:
            return
        entry = fan.entries()[key]
        status = entry["status"]
        if status == DONE and entry.get("commit"):
            ours, theirs = str(loop["merged"]), str(entry["commit"])
            merged = fan.git.merge(ours, theirs, f"phasegate: merge {key}")
            head = merged.commit
            if head is None:
                try:
                    head = resolve_conflict(fan, key, "merge", ours, theirs, merged.conflicts)
                except PhasegateError as exc:
                    fan.park(key, exc)
                    return
                if head is None:
                    return
            loop["merged"] = head
            fan.git.record_merged(head)
            fan.journal("foreach.merged", key=key, commit=head)
        elif status in ("pending", "running") and not past_unfinished:
            return
        loop["integrated"] = int(loop["integrated"]) + 1
        fan.save(lazy=True)


def land(fan: FanOut) -> None:
    """Put the merged work into the work tree, then remove the finished items' branches."""
    if fan.git is None:
        return
    loop = fan.fan()
    if not loop.get("landed"):
        pending = loop.get("landing")
        if pending is None:
            base, merged = str(loop["base"]), str(loop["merged"])

            def landed() -> dict[str, dict[str, Any]]:
                """The files a run killed while landing had merged (journaled first)."""
                found: dict[str, dict[str, Any]] = {}
                for event in fan.item.journal.events():
                    if (
                        event.get("event") == "fanout.landing-file"
                        and event.get("node") == fan.path
                        and (event.get("base"), event.get("merged")) == (base, merged)
                    ):
                        found[str(event.get("file"))] = event
                return found

            def landing(name: str, sha: str, conflict: bool) -> None:
                fan.journal(
                    "fanout.landing-file",
                    base=base,
                    merged=merged,
                    file=name,
                    sha=sha,
                    conflict=conflict,
                    sync_now=True,
                )

            conflicts = fan.git.apply(base, merged, landed, landing)
            if conflicts:
                loop["landing"] = pending = conflicts
                fan.journal("fanout.landing-conflict", files=sorted(conflicts))
                fan.save(durable=True)
        left = fan.git.unresolved(pending) if pending else []
        if left:
            raise BlockedError(
                f"{fan.item.name}: the work tree {fan.git.workdir} was changed while the "
                f"parallel items of {fan.path} ran, and their merged work conflicts with it "
                f"in {', '.join(left)} (the merged work is at {fan.git.ref_base}/merged): "
                "resolve the conflict markers (a file without markers: put in the version "
                "you want, or keep it as it is with git add or git rm), then run again: "
                f"phasegate run {fan.item.name}"
            )
        loop.pop("landing", None)
        loop["landed"] = utc_now()
        fan.journal("fanout.landed", base=loop["base"], merged=loop["merged"])
        fan.save(durable=True)
    fan.git.remove_all([k for k in fan.order if fan.entries()[k]["status"] == DONE])
    for pair, record in (loop.get("conflicts") or {}).items():
        if record.get("commit"):  # resolved; a crash may have come before its removal
            fan.git.remove_worktree(f"conflict-{slug_of(pair)}")
