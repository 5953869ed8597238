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

if TYPE_CHECKING:  # imported where used: --help starts without the verdict models
    from pathlib import Path

    from phasegate.dashboard.events import EventEntry, EventReader
    from phasegate.engine.item import WorkItem


def format_entry(entry: "EventEntry") -> str:
    """One readable line (rich markup): time, node, role and backend, what happened, spend."""
    when = entry.time.replace("T", " ")
    who = entry.role + (f" ({entry.backend})" if entry.backend else "")
    what = escape(entry.what)
    if entry.ok is False:
        what = f"[red]{what}[/]"
    elif entry.ok and entry.kind in ("verdict", "phase", "item"):
        what = f"[green]{what}[/]"
    line = f"[dim]{when}[/]  {escape(entry.node):<14} {escape(who):<28} {what}"
    if entry.spend:
        line += f"  [dim]({escape(entry.spend)})[/]"
    for issue in entry.issues:
        severity = escape(f"[{issue.get('severity')}]") if issue.get("severity") else "-"
        first = str(issue.get("description") or "").strip().splitlines()[:1]
        line += f"\n      {severity} {escape(''.join(first))}"
    return line


def _show(events: list[dict[str, Any]], reader: "EventReader", as_json: bool) -> None:
    if as_json:
        for event in events:
            sys.stdout.write(json_line(event) + "\n")
        sys.stdout.flush()
        return
    for event in events:
        entry = reader.read(event)
        if entry is not None:
            out.print(format_entry(entry), highlight=False)
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
    events, offset = read_journal(journal, 0)
    _show(events, reader, as_json)
    if not follow:
        return
    try:
        while ended is None:
            time.sleep(FOLLOW_INTERVAL)
            ended = _ended(item)
            events, offset = read_journal(journal, offset)
            _show(events, reader, as_json)
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
