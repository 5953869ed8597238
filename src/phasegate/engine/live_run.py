"""Whether a run of a work item is going on now, told without taking its run lock.

A run writes ``<workflow>--<item>.run.json`` next to its run lock while it holds
the lock (its pid, the process's start time, the host, when it started) and
removes it when it ends. A run killed with SIGKILL leaves the file behind: it is
taken as live only while a process with that pid and that start time exists on
this host, so a stale file (or a pid used again by another process) is ignored.

Standard library only: the ``status`` table reads these files without the engine.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from phasegate.repo_paths import CONFIG_DIR, LOCKS_DIR

TYPE_CHECKING = False  # typing is not imported at run time: the SessionStart hook reads this
if TYPE_CHECKING:
    from typing import Any

#: How the file next to a run lock ends (``<workflow>--<item>.run.json``).
SUFFIX = ".run.json"


def live_path(run_lock_path: Path) -> Path:
    """The file naming the live run of the item whose run lock is ``run_lock_path``."""
    return run_lock_path.with_name(run_lock_path.name.removesuffix(".run.lock") + SUFFIX)


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name, or ``None``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """When ``pid`` started, in clock ticks since boot (``None`` without ``/proc``)."""
    fields = _stat_fields(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def write_live(run_lock_path: Path, workflow: str, item: str) -> Path | None:
    """Say that this process runs ``item`` now (called with its run lock held); ``None``
    when the file cannot be written (the run goes on: ``status`` only cannot tell)."""
    import socket  # here: the commands that only read (status) never need it

    pid = os.getpid()
    data = {
        "workflow": workflow,
        "item": item,
        "pid": pid,
        "start": _start_time(pid),
        "boot": _boot_id(),
        "host": socket.gethostname(),
        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path = live_path(run_lock_path)
    temp = path.with_name(f".{path.name}.tmp-{pid}")
    try:
        temp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
        return None
    return path


def remove_live(path: Path) -> None:
    """The run ends: it is no longer live (only this process's own file is removed)."""
    found = _read(path)
    if found is not None and found.get("pid") == os.getpid():
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _alive(pid: int, start: Any, boot: Any) -> bool:
    """Whether the process ``pid`` that started at ``start`` (since boot ``boot``) runs."""
    fields = _stat_fields(pid)
    if fields is None:
        if Path("/proc/self/stat").exists():
            return False  # /proc is there and has no such process
        try:  # no /proc (not Linux): whether the pid exists at all
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True  # it exists, owned by another user
        return True
    if fields and fields[0] in ("Z", "X"):
        return False  # it died; its parent has not reaped it yet
    if start is not None and (len(fields) <= 19 or fields[19] != start):
        return False  # another process has the pid now
    return boot is None or boot == _boot_id()


def _read(path: Path) -> dict[str, Any] | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _verified(found: dict[str, Any]) -> dict[str, Any] | None:
    pid = found.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    import socket  # here: only a file a run left asks for it

    if found.get("host") != socket.gethostname():
        return None  # its pid cannot be checked from here
    if not _alive(pid, found.get("start"), found.get("boot")):
        return None
    return {"pid": pid, "host": found.get("host"), "since": found.get("since")}


def read_live(path: Path) -> dict[str, Any] | None:
    """The live run ``path`` names: ``{"pid", "host", "since"}``, or ``None`` when there is
    none (no file, a file left by a run that died, a run on another host)."""
    found = _read(path)
    return None if found is None else _verified(found)


def live_runs(root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Every live run in the repository at ``root``, by ``(workflow, item)``: one listing
    of the locks folder, and a look at ``/proc`` for each file found there."""
    folder = root / CONFIG_DIR / LOCKS_DIR
    try:
        names = [n for n in os.listdir(folder) if n.endswith(SUFFIX) and not n.startswith(".")]
    except OSError:
        return {}
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for name in names:
        found = _read(folder / name)
        live = None if found is None else _verified(found)
        if live is None or found is None:
            continue
        workflow, item = found.get("workflow"), found.get("item")
        if isinstance(workflow, str) and isinstance(item, str):
            runs[(workflow, item)] = live
    return runs


#: How much of the journal's end is read for its last event.
_TAIL_BYTES = 262144


def last_event(journal: Path) -> dict[str, Any] | None:
    """The last event of ``journal`` (``None``: none, or it cannot be read)."""
    try:
        with journal.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            # A few KiB hold the last event nearly always: more only when they do not.
            for length in (8192, _TAIL_BYTES):
                handle.seek(max(size - length, 0))
                tail = handle.read()
                if size <= length or len(tail.rstrip().splitlines()) > 1:
                    break
    except OSError:
        return None
    lines = [line for line in tail.splitlines() if line.strip()]
    if not lines or (size > _TAIL_BYTES and len(lines) < 2):
        return None  # the last line does not fit in what was read
    try:
        event = json.loads(lines[-1])
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def _tail_events(journal: Path) -> list[dict[str, Any]]:
    """The events of ``journal``'s last ``_TAIL_BYTES`` (a line cut by that edge dropped)."""
    try:
        with journal.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(size - _TAIL_BYTES, 0))
            tail = handle.read()
    except OSError:
        return []
    lines = tail.splitlines()
    if size > _TAIL_BYTES:
        lines = lines[1:]  # it may have begun before what was read
    events: list[dict[str, Any]] = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _event_path(event: dict[str, Any]) -> str:
    """The node path an event is about (a loop's item event: ``LOOP[KEY]``), or ``""``."""
    node = str(event.get("node") or "")
    name = str(event.get("event") or "")
    if name.startswith("foreach.") and name != "foreach.items" and event.get("key") is not None:
        return f"{node}[{event['key']}]"
    return node or str(event.get("key") or "").split("#", 1)[0]


def last_failure(journal: Path) -> dict[str, Any] | None:
    """The agent call the item's last run stopped on (see :func:`failure_of`), if it stopped
    on one: the journal's last event is that call's last attempt failing, or, when the call
    was a loop item's and the loop ran items at once, only the other items' events (the
    work they finished before the run stopped) and its own item's being set aside follow."""
    last = last_event(journal)
    if last is None:
        return None
    found = failure_of(last)
    if found is not None or "[" not in _event_path(last):
        return found
    events = _tail_events(journal)
    for index in range(len(events) - 1, -1, -1):
        found = failure_of(events[index])
        if found is None:
            continue
        path = _event_path(events[index])
        if "[" not in path or "]" not in path:
            return None  # not a loop item's call: another event followed it
        item = path[: path.rindex("]") + 1]  # LOOP[KEY]
        loop = item[: item.rindex("[") + 1]  # LOOP[
        for later in events[index + 1 :]:
            where = _event_path(later)
            if where.startswith(item):
                if later.get("event") != "foreach.item" or later.get("status") != "parked":
                    return None  # its item went on (a later run took it up again)
            elif not where.startswith(loop):
                return None  # not the loop's other items: a later run, or a person
        return found
    return None


def failure_of(event: dict[str, Any]) -> dict[str, Any] | None:
    """The agent call the item's last run stopped on, when ``event`` (its journal's last) is
    that call's last attempt failing: ``{role, node, iteration, attempts, error}``."""
    if event.get("event") != "agent.failed":
        return None
    tries, limit = event.get("tries"), event.get("of")
    if not isinstance(tries, int) or not isinstance(limit, int) or tries < limit:
        return None  # another attempt was to follow (the run was stopped meanwhile)
    node = str(event.get("key") or "").split("#", 1)[0] or event.get("phase")
    return {
        "role": event.get("role"),
        "node": node,
        "iteration": event.get("iteration"),
        "attempts": tries,
        "error": event.get("error"),
    }


def left_midway(brief: dict[str, Any], journal: Path | None) -> dict[str, Any] | None:
    """Whether the node an active item is at (``brief``: its index brief or status, no
    run going on for it) was left midway by its last run: ``None`` when it was not (it
    waits on a person: a decision, an answer a run acts on, a budget cap, a merge by
    hand; or it is blocked), ``{}`` when that run was killed or interrupted (Ctrl-C),
    else the agent call it stopped on (see :func:`failure_of`). ``journal``: the item's
    journal, whose last event tells (``None``: not read)."""
    cursor = brief.get("inProgress") or {}
    if not cursor or brief.get("blocked") or brief.get("decisions"):
        return None
    if brief.get("pendingDecisions"):
        return None
    if cursor.get("budget") or cursor.get("stage") in ("answered", "conflict"):
        return None
    if cursor.get("kind") == "gate":
        return None
    if cursor.get("kind") == "foreach":
        waiting = int(cursor.get("itemsDone") or 0) + int(cursor.get("itemsConflicted") or 0)
        if waiting >= int(cursor.get("items") or 0):
            return None  # no item of the loop was left running
    last = last_event(journal) if journal is not None else None
    if last is not None and last.get("event") == "decision.answered":
        return None  # answered since the last run: it waits for a run
    return (last_failure(journal) if journal is not None else None) or {}


def shown_status(data: dict[str, Any]) -> str:
    """The status an item's row shows: ``interrupted`` (or ``stopped``, on a failed agent
    call) for a node its last run left midway with no run going on, ``blocked`` for an
    active item the next run cannot go on with (``status NAME`` says why), else its
    status."""
    if (data.get("inProgress") or {}).get("interrupted") and not data.get("running"):
        return "stopped" if data.get("lastFailure") else "interrupted"
    if data.get("blocked") and data.get("status") == "active":
        return "blocked"
    return str(data.get("status"))


def budget_held(progress: dict[str, Any]) -> str:
    """What a budget cap holding the next call of the node an item is at (``progress``: its
    ``inProgress``, with ``budget``) did, and what its answer does: what ``status NAME``
    and the SessionStart hook say after the phase."""
    held = progress["budget"]
    ran = (
        f"; {progress.get('iteration')} of {progress.get('maxIterations')} iterations ran"
        if progress.get("kind", "agent") == "agent"
        else ""
    )
    cap = f"the budget cap {held.get('cap')}"
    if held.get("answer") == "stop" and held.get("nextRunStops"):
        return (
            f"stopped by {cap} (answered stop{ran}); the next run stops as answered "
            "(exit 4), and the run after it asks again"
        )
    if held.get("answer") == "stop":
        return f"stopped by {cap} (answered stop{ran}); the next run asks again"
    if held.get("answer") == "raise":
        return f"{cap} held its next call, raise answered{ran}; the next run raises it"
    return f"waiting on a decision: {cap} holds its next call{ran}"


def cap_raised(progress: dict[str, Any]) -> str:
    """What ``status NAME`` and the SessionStart hook say after the phase of a node whose
    budget question a cap raised in the config since made moot (``progress``: its
    ``inProgress``, with ``capRaised``), waiting or answered ``stop``."""
    if progress.get("capRaisedAfterStop"):
        return (
            f"the budget cap {progress['capRaised']} no longer holds its next call (changed "
            "in the config after the stop); the next run goes on without asking"
        )
    return (
        f"the budget cap {progress['capRaised']} no longer holds its next call (changed in "
        "the config); the next run goes on without an answer"
    )


def watch_command(item: str) -> str:
    """The command that shows a live run as it goes."""
    return f"phasegate logs {item} -f"


def with_live_run(data: dict[str, Any], live: dict[str, Any] | None) -> dict[str, Any]:
    """``data`` (an item's status, or a row of the status table) saying whether a run of
    the item is going on: ``running`` is that run (``pid``, ``host``, ``since``) or
    ``None``. While it runs, the next command watches it (a second run would be refused);
    once no run goes on, a loop's items its last run left running are ``interrupted``
    (the next run resumes them), or ``failed`` for the item whose agent call it stopped on
    (``lastFailure``: every attempt failed), as ``status`` says the item ``stopped``. An
    item that stopped at a gate is not: ``status`` shows it ``waiting`` (its decision is
    pending) or ``answered`` (the next run acts on it)."""
    data["running"] = live
    if live is not None:
        if data.get("nextCommand") and not data.get("pendingDecisions"):
            data["nextCommand"] = watch_command(str(data["id"]))
        return data
    failure = data.get("lastFailure") or {}
    for phase in data.get("phases") or []:
        for entry in phase.get("items") or []:
            if entry.get("status") != "running":
                continue
            inside = f"{phase.get('node')}[{entry.get('key')}]/"
            if failure and f"{failure.get('node')}/".startswith(inside):
                entry["status"] = "failed"
                tries = int(failure.get("attempts") or 1)
                error = (str(failure.get("error") or "").splitlines() or [""])[0][:300]
                entry["reason"] = (
                    f"{failure.get('role')} failed in {failure.get('node')} after {tries} "
                    f"attempt{'s' if tries != 1 else ''}: {error}"
                )
            else:
                entry["status"] = "interrupted"
    return data
