"""``phasegate logs ITEM [-f] [--json]``: a work item's journal, readable or as recorded."""

import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from phasegate.cli.app import RepoOption, WorkflowOption, _repo, app
from phasegate.cli.output import json_line, out

#: How often ``--follow`` looks for new events (seconds).
FOLLOW_INTERVAL = 0.25

if TYPE_CHECKING:  # imported where used: --help starts without the verdict models
    from phasegate.dashboard.events import EventEntry, EventReader


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


@app.command()
def logs(
    name: Annotated[str, typer.Argument(help="The work item (or change).")],
    follow: Annotated[
        bool,
        typer.Option(
            "--follow", "-f", help="Keep printing events as a run writes them (Ctrl-C stops)."
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
    journal = item.journal.path
    if not journal.is_file():
        # Nothing journaled yet is an empty log; a journal the state has lines of is gone.
        state = item.load(read_journal=False)
        item.journal.check_before(state.journal_offset, state.journal_lines)
    reader = EventReader()
    events, offset = read_journal(journal, 0)
    _show(events, reader, as_json)
    if not follow:
        return
    try:
        while True:
            time.sleep(FOLLOW_INTERVAL)
            events, offset = read_journal(journal, offset)
            _show(events, reader, as_json)
    except KeyboardInterrupt:
        from phasegate.interrupts import handled

        handled()  # the person stopped following: not an error
        return
