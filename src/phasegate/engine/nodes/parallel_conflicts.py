"""A parallel ``foreach``'s merge conflicts: repaired by an agent, then asked about.

Conflicts are kept in the fan-out's state by the pair of commits being merged,
so a run killed during a repair or while a person decides resumes the same
conflict: a repair call already journaled is not made again, and a person's
answer is acted on once. A conflict a person stops (unless the loop maps
``merge-conflict``) blocks its item and is kept: the next run merges it once it
is resolved in its worktree, or asks again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate.agents.base import Access
from phasegate.engine.answers import Question
from phasegate.engine.call_results import usage_of
from phasegate.engine.calls import CallSpec, call_agent
from phasegate.engine.fanout_git import _MARKER
from phasegate.engine.gates import ask
from phasegate.errors import BlockedError
from phasegate.faults import crash_point
from phasegate.workflow.model import AgentNode
from phasegate.workflow.parts import BLOCKED_TARGET

if TYPE_CHECKING:
    from phasegate.engine.nodes.parallel import FanOut


class ConflictStopped(BlockedError):
    """A merge conflict a person stopped (or ``then: outcome`` ended): the item waits for
    it to be resolved by hand, or answered anew (exit code 4)."""


def resolve_conflict(
    fan: FanOut, key: str, stage: str, ours: str, theirs: str, conflicts: tuple[str, ...]
) -> str | None:
    """Repair a conflict merging ``theirs`` into ``ours``: agent repairs, then a person.

    Conflicts are kept by the pair of commits, so the same merge met again (an
    item's integration, then a dependent's start) is resolved once. Returns the
    resolved merge commit; ``None`` when ``key`` must wait (the pair waits for a
    person through another item) or the loop ends with merge-conflict. Raises
    WaitingForHuman when a person must answer and cannot now.
    """
    assert fan.git is not None
    pair = f"{ours}+{theirs}"
    known = fan.fan().setdefault("conflicts", {})
    record = known.get(pair)
    if record is not None and record.get("commit"):
        return str(record["commit"])
    if record is not None and record["owner"] != key and record["owner"] in fan.parked:
        return None  # being asked through its owner: wait for that answer
    name = f"conflict-{slug_of(pair)}"
    where, files = fan.git.conflict_worktree(name, ours, theirs)
    if record is None:
        files = files or list(conflicts)
        record = known[pair] = {
            "owner": key,
            "stage": stage,
            "files": files,
            "worktree": str(where),
            "repairs": 0,
            "acted": 0,
            "fingerprints": fan.git.fingerprints(where, files),
        }
        fan.journal("foreach.conflict", key=key, stage=stage, files=files, worktree=str(where))
        fan.save()
    record["owner"] = key
    files = list(record["files"])
    aborted = False
    while True:
        done = fan.git.resolved_merge(where, ours, theirs)
        if not done and not fan.git.merging(where, theirs):
            # Aborted there (git merge --abort, a reset): what is left is not the merge, and
            # committing it would lose the other side's work. The merge is started again.
            where, _ = fan.git.conflict_worktree(name, ours, theirs)
            aborted = True
            fan.journal("foreach.conflict_restarted", key=key, worktree=str(where))
        left = [] if done else fan.git.still_conflicted(where, files, record["fingerprints"])
        if not left:
            message = f"phasegate: merge for {key}, conflict resolved"
            record["commit"] = done or fan.git.finish_merge(where, message)
            # It no longer waits for this conflict: a mark from an earlier run goes.
            fan.entries()[key].pop("parked", None)
            fan.journal("foreach.conflict_resolved", key=key, commit=record["commit"])
            fan.save()
            crash_point("fanout.conflict_resolved")
            fan.git.remove_worktree(name)
            return str(record["commit"])
        retries = int(record.get("retries", 0))
        # After a person's retry the agent is asked again (once, with attempts: 0).
        allowed = max(fan.node.conflicts.attempts, 1 if retries else 0)
        if int(record["repairs"]) < allowed:
            # Counted once the call has returned: a run killed before or during it
            # makes (or reuses the journaled answer of) that same call, never skips it.
            attempt = int(record["repairs"]) + 1
            repair(fan, key, name, where, left, attempt, retries)
            record["repairs"] = attempt
            fan.save()
            continue
        if fan.node.conflicts.then == "outcome":
            choice = "stop"
        else:
            choice = ask_person(fan, key, record, where, left, aborted=aborted)
            aborted = False
        if choice == "retry":
            # A new round of calls, keyed apart from the earlier ones (whose journaled
            # answers would otherwise be reused: the agent never asked again).
            record["repairs"] = 0
            record["retries"] = int(record.get("retries", 0)) + 1
            fan.save()
            continue
        if choice == "stop":
            fan.entries()[key].pop("parked", None)
            if blocks(fan):
                # The item is blocked, the loop kept as it is: what finished stays finished,
                # and the next run takes this conflict up again in the same worktree.
                fan.journal("foreach.conflict_stopped", key=key, files=left, worktree=str(where))
                fan.save()
                raise ConflictStopped(stopped(fan, key, where, left))
            fan.entries()[key]["status"] = "merge-conflict"
            fan.halted = True
            fan.journal("foreach.item", key=key, status="merge-conflict", files=left)
            fan.save()
            return None
        # "resolved": a person resolved it in the worktree; checked on the next turn.


def repair(
    fan: FanOut, key: str, name: str, where: Path, files: list[str], attempt: int, retries: int
) -> None:
    """One agent call to resolve the conflicts left in ``where`` (``retries``: how many
    times a person answered retry before it)."""
    from phasegate.agents.base import PromptPart

    role = fan.node.conflicts.role or next(
        n.executor for n in fan.node.body if isinstance(n, AgentNode) and n.executor
    )
    listing = "\n".join(f"- {file}" for file in files)
    text = (
        f"Two pieces of work on {fan.item.name} done in parallel changed the same lines "
        f"(merging item {key}), and git could not merge them. The merge is under way in "
        f"this work tree; the conflicts are marked with <<<<<<<, ======= and >>>>>>> "
        f"in:\n\n{listing}\n\nResolve every conflict so that the intent of both "
        "changes is kept, remove every marker, and leave the files ready to commit. "
        "Do not commit, and do not abort the merge."
    )
    visit = fan.run.state.node(fan.path).visit
    spec = CallSpec(
        key=f"{fan.path}#{visit}/{name}/{attempt}" + (f"-retry{retries}" if retries else ""),
        role=str(role),
        path=f"{fan.prefix(key)}merge",
        label=fan.run.label(fan.path),
        iteration=attempt,
        stage="repair",
        access=Access.WRITE,
        output_schema=None,
        build_prompt=lambda: ("Resolve the merge conflict.", (PromptPart("Conflict", text),)),
        task=key,
        workdir=where,
    )
    result = call_agent(fan.item, fan.run.state, fan.run.backends, spec)
    fan.run.state.add_usage(fan.path, str(role), usage_of(result))
    fan.save()


def ask_person(
    fan: FanOut,
    key: str,
    record: dict[str, Any],
    where: Path,
    files: list[str],
    *,
    aborted: bool = False,
) -> str:
    """The person's choice after the repairs: retry, resolved (by hand) or stop
    (``aborted``: the merge was aborted in ``where`` and started again).

    An answer is acted on once: one given before a crash is used, not asked again.
    """
    decision = f"conflict-{key}"
    found = fan.run.state.decisions.get(decision)
    visit = int(found.get("visit", 0)) if found else 0
    if found is not None and found.get("status") == "answered" and visit > record["acted"]:
        record["acted"] = visit
        return str((found.get("answer") or {}).get("choice"))
    if found is None or found.get("status") != "pending":
        visit += 1
    last = (found.get("answer") or {}).get("choice") if found is not None else None
    asked_before = bool(record["repairs"] or record.get("retries"))
    again = (
        " The merge there was aborted (git merge --abort, or a reset), which would have "
        "lost one side's work: it was started again."
        if aborted
        else ""
    )
    if last == "resolved":
        why = "; ".join(unresolved(fan, where, files))
        text = (
            f"Merging {key} conflicts with the work merged before it, and the answer "
            f"'resolved' was not accepted: {why}.{again} The merge is in {where}."
        )
    else:
        tried = (
            "the agent did not resolve it"
            if asked_before
            else "no agent was asked to resolve it, conflicts.attempts being 0"
        )
        text = (
            f"Merging {key} conflicts with the work merged before it, and {tried} "
            f"(still conflicted: {', '.join(files)}).{again} The merge is in {where}."
        )
    question = Question(
        id=decision,
        question=text,
        choices={
            "retry": "ask the agent to resolve it" + (" again" if asked_before else ""),
            "resolved": (
                f"resolved by hand in {where}: fix each file there and git add (or git rm) "
                "it, no commit needed"
            ),
            "stop": (
                "stop the run blocked until it is resolved there (the next run asks again)"
                if blocks(fan)
                else "end the loop with outcome merge-conflict"
            ),
        },
        visit=visit,
        context=fan.path,
    )
    choice = ask(fan.run, question).choice
    record["acted"] = visit
    return choice


def blocks(fan: FanOut) -> bool:
    """Whether the loop's ``merge-conflict`` outcome is unmapped (it would block the item)."""
    return fan.node.on.get("merge-conflict", BLOCKED_TARGET) == BLOCKED_TARGET


def unresolved(fan: FanOut, where: Path, files: list[str]) -> list[str]:
    """Why each of ``files`` is not taken as resolved in ``where``."""
    assert fan.git is not None
    unmerged = set(fan.git.unmerged(where))
    reasons = []
    for name in files:
        try:
            marked = bool(_MARKER.search((where / name).read_bytes()))
        except (FileNotFoundError, IsADirectoryError):
            marked = False
        if marked:
            reasons.append(f"{name} still holds conflict markers")
        elif name in unmerged:
            reasons.append(
                f"{name} is still unmerged and unchanged (git add or git rm it in {where})"
            )
        else:
            reasons.append(f"{name} is still conflicted")
    return reasons


def stopped(fan: FanOut, key: str, where: Path, files: list[str]) -> str:
    """The line a merge conflict stopped by a person (or by ``then: outcome``) ends the run
    with: what to fix, where, and how the next run goes on."""
    from phasegate.engine.status import again_command

    again = again_command(fan.run.workflow, fan.item.name, fan.run.label(fan.path))
    anew = "" if fan.node.conflicts.then == "outcome" else f" (or to answer conflict-{key} anew)"
    return (
        f"{fan.item.name}: merging {key} stopped at a conflict in {', '.join(files)}; the "
        f"parallel items' work reaches the work tree once it is resolved. Resolve it in "
        f"{where} (keep both changes, remove every conflict marker, then git add or git rm "
        f"each file; do not commit), then run again{anew}: {again}"
    )


def slug_of(text: str) -> str:
    """A short, stable name for ``text`` (a pair of commits) to name a worktree by."""
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()[:10]
