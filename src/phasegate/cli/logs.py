"""``phasegate logs ITEM [-f] [--json]``: a work item's journal, readable or as recorded."""

import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from phasegate.cli.app import RepoOption, WorkflowOption, _repo, app
from phasegate.cli.output import err, json_line, out

#: How often ``--follow`` looks for new events (seconds).
FOLLOW_INTERVAL = 0.25
#: The node column's least width; a longer node (a loop item's ``tasks[T1]/code``)
#: widens it for every line shown after it is seen.
NODE_WIDTH = 14

if TYPE_CHECKING:  # imported where used: --help starts without the verdict models
    from pathlib import Path

    from phasegate.dashboard.events import EventEntry, EventReader
    from phasegate.engine.item import WorkItem


def format_entry(entry: "EventEntry", width: int = NODE_WIDTH) -> str:
    """One readable line (rich markup): time, node (in a column ``width`` wide), role and
    backend, what happened, spend."""
    when = entry.time.replace("T", " ")
    who = entry.role + (f" ({entry.backend})" if entry.backend else "")
    what = escape(entry.what)
    if entry.ok is False:
        what = f"[red]{what}[/]"
    elif entry.ok and entry.kind in ("verdict", "phase", "item"):
        what = f"[green]{what}[/]"
    node, who = escape(f"{entry.node:<{width}}"), escape(f"{who:<28}")
    line = f"[dim]{when}[/]  {node} {who} {what}"
    if entry.spend:
        line += f"  [dim]({escape(entry.spend)})[/]"
    for issue in entry.issues:
        severity = escape(f"[{issue.get('severity')}]") if issue.get("severity") else "-"
        first = str(issue.get("description") or "").strip().splitlines()[:1]
        line += f"\n      {severity} {escape(''.join(first))}"
    return line


#: Events a resumed run journals as it replays the interrupted run's last events: new
#: lines, no repeats (a recorded result reused, a decision such as ``partial-phase``).
_ADDED_ON_RESUME = frozenset({"agent.recovered", "check.reused", "decision"})
#: Events whose results a resumed run reuses instead of journaling them again.
_REUSED = ("agent.", "check.", "checks.", "action.", "decision.", "foreach.items")
#: Events a run stops with: a person's next run may journal the same line again.
_RUN_ENDS = frozenset({"transition.blocked", "item.blocked", "budget.stopped"})


class Replays:
    """Finds the events a resumed run journaled again.

    A run interrupted (killed, the machine down) after its last state commit is resumed
    from that commit: the resumed run walks again through what the interrupted one
    journaled since (reusing its agents' results) and journals those events again. Such
    a replay starts where the resumed run starts and repeats, in order, the journal's
    lines just before it (from a point on), results aside; its lines are shown once.
    """

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._sigs: list[str] = []
        self._seen: dict[str, list[int]] = {}
        #: Replayed events -> the first event of their replay.
        self.replayed: dict[int, int] = {}
        self.counts: dict[int, int] = {}
        #: How many events are decided (the first ones): the rest may be a replay yet.
        self.decided = 0
        #: The node column's width so far (see :data:`NODE_WIDTH`).
        self.width = NODE_WIDTH

    def add(self, events: list[dict[str, Any]]) -> None:
        import json

        for event in events:
            self.events.append(event)
            rest = {k: v for k, v in event.items() if k != "ts"}
            self._sigs.append(json.dumps(rest, sort_keys=True, default=str))

    def decide(self, final: bool) -> int:
        """Decide which events are replays; returns how many events are decided. Events
        that repeat the lines before them only so far wait for more (a replay still being
        journaled), unless ``final``: then they are no replay, as a run's first lines that
        happen to match lines before them are not."""
        i = self.decided
        while i < len(self.events):
            found = self._replay_at(i) if i not in self.replayed else None
            if found is not None:
                matched, complete = found
                if not complete and not final:
                    break  # decided when more is journaled
                if complete:
                    for q in matched:
                        self.replayed[q] = matched[0]
                    self.counts[matched[0]] = len(matched)
            self._seen.setdefault(self._sigs[i], []).append(i)
            i += 1
        self.decided = i
        return i

    def _kind(self, index: int) -> str:
        return str(self.events[index].get("event", ""))

    def _replay_at(self, i: int) -> tuple[list[int], bool] | None:
        kind = self._kind(i)
        if kind in _ADDED_ON_RESUME or kind in _RUN_ENDS or kind.startswith(_REUSED):
            return None
        sigs, count = self._sigs, len(self.events)
        for k in reversed(self._seen.get(sigs[i], ())):
            if k in self.replayed:
                continue  # the line first journaled is the one repeated
            end = i  # where the resumed run started: its own new lines before i aside,
            while end - 1 > k and (  # and those of a resumed run interrupted in turn
                self._kind(end - 1) in _ADDED_ON_RESUME or end - 1 in self.replayed
            ):
                end -= 1
            p, q, matched = k, i, list[int]()
            while p < end:
                if q >= count:
                    return matched, False
                if sigs[q] == sigs[p] and q not in self.replayed:
                    matched.append(q)
                    p, q = p + 1, q + 1
                elif self._kind(q) in _ADDED_ON_RESUME or self._kind(q).startswith(_REUSED):
                    q += 1  # a line of its own, or a result (the replayed ones are reused)
                elif self._kind(p) in _ADDED_ON_RESUME or self._kind(p).startswith(_REUSED):
                    p += 1
                elif matched and self._restarts(q, {sigs[m] for m in matched}):
                    return matched, True  # itself interrupted: the next run replays again
                elif matched and self._kind(p) == "node.started":
                    # The node the interrupted run had moved to and started: the replay
                    # stops there, and the resumed run goes on with it its own way (a
                    # half-done phase continued, or started afresh).
                    return matched, True
                else:
                    break
            else:
                return matched, True
        return None

    def _restarts(self, q: int, firsts: set[str]) -> bool:
        """Whether a run resumed again starts at ``q``: its first line repeated is one of
        ``firsts``, the lines the interrupted replay repeated (it committed as it replayed,
        so the next run may start later than it did)."""
        while q < len(self.events) and self._sigs[q] not in firsts:
            kind = self._kind(q)
            if kind not in _ADDED_ON_RESUME and not kind.startswith(_REUSED):
                return False
            q += 1
        return q < len(self.events)


def _show(
    events: list[dict[str, Any]],
    reader: "EventReader",
    as_json: bool,
    replays: Replays | None = None,
    final: bool = True,
) -> None:
    """Print ``events``; readable, a resumed run's replayed lines are shown once (held back
    while a replay may still be under way, unless ``final``)."""
    if as_json:
        for event in events:
            sys.stdout.write(json_line(event) + "\n")
        sys.stdout.flush()
        return
    replays = replays if replays is not None else Replays()
    start = replays.decided
    replays.add(events)
    decided = replays.decide(final)
    entries = {index: reader.read(replays.events[index]) for index in range(start, decided)}
    nodes = [len(entry.node) for entry in entries.values() if entry is not None]
    replays.width = max([replays.width, *nodes])
    width = replays.width
    for index in range(start, decided):
        entry = entries[index]
        first = replays.replayed.get(index)
        if first == index:
            count = replays.counts[index]
            when = escape(str(replays.events[index].get("ts", "")).replace("T", " "))
            lines = "event" if count == 1 else "events"
            out.print(
                f"[dim]{when}  {'':<{width}} {'':<28} resumed: {count} {lines} of the interrupted"
                " run replayed (shown once above)[/]",
                highlight=False,
            )
        if entry is not None and first is None:
            out.print(format_entry(entry, width), highlight=False)
    out.file.flush()  # a follower reading a pipe sees each batch at once


def check_folder(item: "WorkItem") -> None:
    """Refuse (exit 5) a folder renamed or copied by hand: its journal is another item's.

    The state file says whose folder it is, as for every other command; when it cannot
    be read (``logs`` does not need it) the journal's first event does.
    """
    from phasegate.engine.state import EngineState
    from phasegate.engine.state_encoding import parse_state
    from phasegate.errors import StateCorruptError

    try:
        data = parse_state(item.engine_path.read_bytes(), item.engine_path)
    except (OSError, StateCorruptError):
        data = None
    if data is not None:
        item.check_name(EngineState(data))
        return
    recorded = _journaled_item(item.journal.path)
    if recorded is not None and recorded != item.name:
        raise item.held_by_other(recorded, item.journal.path.name)


def _ended(item: "WorkItem") -> str | None:
    """How ``item`` ended (``completed``, ``stopped``) when it has and no run of it goes
    on: nothing more is journaled, so ``--follow`` ends. ``None`` while a run goes on, or
    the item waits for a person or for a run (its state file unreadable counts as so)."""
    import json

    from phasegate.engine.live_run import live_path, read_live

    if read_live(live_path(item.run_lock_path)) is not None:
        return None
    try:
        data = json.loads(item.engine_path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    status = data.get("status")
    if status in ("completed", "stopped"):
        return str(status)
    return str(status or "at its end") if data.get("at") == "@end" else None


def _journaled_item(path: "Path") -> str | None:
    """The item the journal's first event names (``None``: no journal, or no name)."""
    import json

    try:
        with open(path, "rb") as handle:
            first = handle.readline()
        event = json.loads(first.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # read again below, where a corrupt journal is named
    recorded = event.get("item") if isinstance(event, dict) else None
    return recorded if isinstance(recorded, str) else None


@app.command()
def logs(
    name: Annotated[str, typer.Argument(help="The work item (or change).")],
    follow: Annotated[
        bool,
        typer.Option(
            "--follow",
            "-f",
            help=(
                "Keep printing events as a run writes them, until the item has ended and"
                " no run goes on (Ctrl-C stops: exit code 130)."
            ),
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="The events as recorded, one JSON object a line.")
    ] = False,
    workflow: WorkflowOption = None,
    repo: RepoOption = None,
) -> None:
    """Show a work item's journal: time, phase, role and backend, what happened, tokens and cost."""
    from phasegate.config import load_config
    from phasegate.dashboard.data import read_journal
    from phasegate.dashboard.events import EventReader
    from phasegate.engine.items import locate_item
    from phasegate.workflow.registry import WorkflowRegistry

    root = _repo(repo)
    item = locate_item(
        root, name, WorkflowRegistry(root), load_config(root), workflow, command="logs"
    )
    check_folder(item)
    journal = item.journal.path
    if not journal.is_file():
        # Nothing journaled yet is an empty log; a journal the state has lines of is gone.
        state = item.load(read_journal=False)
        item.journal.check_before(state.journal_offset, state.journal_lines)
    reader = EventReader()
    ended = _ended(item) if follow else None  # told before the read: no last event is missed
    replays = Replays()
    events, offset = read_journal(journal, 0)
    _show(events, reader, as_json, replays, final=ended is not None or not follow)
    if not follow:
        return
    try:
        while ended is None:
            time.sleep(FOLLOW_INTERVAL)
            ended = _ended(item)
            events, offset = read_journal(journal, offset)
            # A replay is journaled at once (no agent is called): lines held back as a
            # possible one are shown when a poll finds nothing more.
            _show(events, reader, as_json, replays, final=ended is not None or not events)
        err.print(f"phasegate: {name} has ended ({ended}); no run goes on", markup=False)
    except KeyboardInterrupt as exc:
        import signal

        from phasegate.errors import Interrupted
        from phasegate.interrupts import handled

        # Stopped by a signal, as every command is: 128 + the signal (130 for Ctrl-C), as
        # `tail -f` ends. Quietly: nothing was started, nothing is there to resume.
        handled()
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        raise typer.Exit(128 + int(signum)) from None
