"""How status and lists look in a terminal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from phasegate.cli.output import printable

_MARKS = {
    "completed": "[green]✔[/]",
    "in-progress": "[yellow]…[/]",
    "pending": "·",
    "skipped": "[dim]-[/]",
    "failed": "[red]✗[/]",  # a check node whose commands failed
}


def print_item_status(console: Console, status: dict[str, Any]) -> None:
    """The detailed status of one work item."""
    from phasegate.engine.budget import budget_lines

    console.print(
        f"[bold]{escape(status['id'])}[/] ({status['workflow']}, mode {status['mode']}, "
        f"{status['status']})"
    )
    if status["description"]:
        console.print(f"  {escape(status['description'])}")
    if status.get("running"):
        live = status["running"]
        console.print(f"  Running now: pid {live['pid']} on {live['host']}, since {live['since']}")
    progress = status["inProgress"]
    if status.get("currentState"):  # a workflow whose state file names its state (team)
        console.print(f"  State: [bold]{escape(str(status['currentState']))}[/]")
    kind = progress.get("kind", "agent") if progress else None
    if progress and progress.get("stage") == "answered" and not status.get("pendingDecisions"):
        chosen = f" ({progress['answer']})" if progress.get("answer") else ""
        console.print(
            f"  Phase: [bold]{progress['phase']}[/], decision {escape(str(progress['decision']))} "
            f"answered{escape(chosen)}; the next run acts on it"
        )
    elif progress and progress.get("budget"):  # a budget cap holds the node's next call
        console.print(f"  Phase: [bold]{progress['phase']}[/], {escape(_budget_held(progress))}")
    elif progress and progress.get("capRaised") and not status.get("pendingDecisions"):
        # The budget question went unanswered and the cap was raised in the config.
        from phasegate.engine.live_run import cap_raised

        console.print(f"  Phase: [bold]{progress['phase']}[/], {escape(cap_raised(progress))}")
    elif progress and (kind == "gate" or status.get("pendingDecisions")):
        console.print(f"  Phase: [bold]{progress['phase']}[/], waiting on a decision")
    elif progress and kind == "foreach" and "itemsDone" in progress:
        console.print(
            f"  Phase: [bold]{progress['phase']}[/], {_going(status)}: {progress['itemsDone']} of "
            f"{progress['items']} items done"
            + (
                f", {progress['itemsConflicted']} waiting on a merge conflict"
                if progress.get("itemsConflicted")
                else ""
            )
            + _resumed(status)
        )
    elif progress and progress.get("stage") == "conflict":
        # An archive refused on a conflict: nothing runs until it is merged by hand.
        console.print(
            f"  Phase: [bold]{progress['phase']}[/], waiting on a merge by hand: "
            f"{escape('; '.join(progress.get('conflicts') or []))}"
        )
    elif progress and kind != "agent":  # a foreach's item, an action or a check: no iterations
        console.print(
            f"  Phase: [bold]{progress['phase']}[/], {_going(status)}: {progress['stage']}"
            f"{_resumed(status)}"
        )
    elif progress:
        console.print(
            f"  Phase: [bold]{progress['phase']}[/], {_going(status)}: iteration "
            f"{progress['iteration']} of {progress['maxIterations']} ({progress['stage']})"
            f"{_resumed(status)}"
        )
    elif status["status"] == "completed":
        console.print(f"  Complete: {escape(_ended(status))}")
    elif status["status"] == "stopped":
        console.print(f"  Stopped at {status['label']}: {escape(_ended(status))}")
    elif status["status"] == "blocked" and not status["at"] and not status["nextCommand"]:
        # It reached an end node with `status: blocked`: no run goes on from there.
        why = f": {status['endMessage']}" if status.get("endMessage") else ""
        console.print(f"  Ended blocked at {escape(str(status['label']) + why)}")
    elif status["blocked"] and status["at"]:  # the line below says why
        review = {p.get("node"): p.get("review") for p in status["phases"]}.get(status["at"])
        why = " (checks failed)" if review == "checks-failed" else ""
        console.print(f"  Phase: {status['currentPhase'] or status['label']}, blocked{why}")
    else:
        nxt = f"; next: {status['nextPhase']}" if status["nextPhase"] else ""
        console.print(f"  Phase: {status['currentPhase'] or '(not started)'}{nxt}")
    if status["blocked"]:
        console.print(f"  [red]Blocked:[/] {escape(status['blocked'])}")
    failure = status.get("lastFailure")
    if failure:  # the last run stopped on an agent call that failed every attempt
        tries = int(failure.get("attempts") or 1)
        console.print(
            f"  [red]Last run failed:[/] {escape(str(failure['role']))} failed in "
            f"{escape(str(failure['node']))} after {tries} attempt{'s' if tries != 1 else ''}: "
            f"{escape((str(failure.get('error') or '').splitlines() or [''])[0][:300])}"
        )
    if status["nextCommand"]:
        console.print(f"  Next: [bold]{escape(status['nextCommand'])}[/]")
    from phasegate.engine.status import phase_iterations  # as the dashboard shows it

    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    table.add_column("")
    table.add_column("phase")
    table.add_column("iterations", justify="right")
    table.add_column("review")
    table.add_column("tokens", justify="right")
    for phase in status["phases"]:
        usage = phase["usage"] or {}
        tokens = int(usage.get("inputTokens", 0)) + int(usage.get("outputTokens", 0))
        # Several nodes of a graph workflow share a label (a phase): name the node too.
        node = phase.get("node")
        name = phase["name"] if node in (None, phase["name"]) else f"{phase['name']} [dim]{node}[/]"
        table.add_row(
            _MARKS.get(phase["status"], "?"),
            name,
            phase_iterations(phase),
            phase["review"] or phase.get("outcome") or "",  # a gate's answer, a check's result
            str(tokens or ""),
        )
    console.print(table)
    for phase in status["phases"]:
        if phase.get("items"):
            _print_items(console, phase["name"], phase["items"])
    if status.get("tasks"):
        print_tasks(console, status["tasks"])
    if status["unresolvedConcerns"]:
        console.print("  [yellow]Unresolved reviewer concerns:[/]")
        for concern in status["unresolvedConcerns"]:
            # Clipped as run's progress clips an issue (the review history keeps it whole).
            note = " ".join(_first_line(concern["note"]).split())
            if len(note) > CONCERN_CHARS:
                note = note[: CONCERN_CHARS - 1].rstrip() + "…"
            console.print(f"    - {concern['phase']}: {escape(note)}")
    if status.get("knownIssues"):  # accepted by a person (team: "accept with known issues")
        console.print("  Known issues (accepted):")
        for issue in status["knownIssues"]:
            console.print(f"    - {escape((str(issue).splitlines() or [''])[0])}")
    usage = status["usage"]
    cost = f", ${usage['costUsd']:.4f}" if usage.get("costUsd") else ""
    console.print(
        f"  Usage: {usage['calls']} agent call{'' if usage['calls'] == 1 else 's'}"
        f"{_failed(usage)}, "
        f"{usage['inputTokens'] + usage['outputTokens']} tokens in and out"
        f"{_cached(usage)}{cost}"
    )
    for line in budget_lines(status.get("budget")):
        console.print(f"  {escape(line)}")
    if status.get("worktree"):
        console.print(f"  Worktree: {status['worktree']} (branch {status.get('branch') or '?'})")
    left = status.get("taskWorktrees")
    if left:
        where = ", ".join(left["paths"]) or f"{len(left['branches'])} branch(es)"
        console.print(
            f"  Left by its parallel items: {escape(where)} (remove them: "
            f"phasegate worktree remove {escape(status['id'])})"
        )


def _going(status: dict[str, Any]) -> str:
    """How the node the item is at goes: ``in progress`` while a run goes on (or before
    one started it), ``blocked`` (a loop one of whose items is: the Blocked line says why),
    else what ended its last run midway (``interrupted``: killed, Ctrl-C; ``stopped``: on
    the failed agent call said below)."""
    if status.get("blocked") and status.get("status") == "active" and not status.get("running"):
        checks = (status.get("blockedBy") or {}).get("by") == "checks"
        return "blocked (checks failed)" if checks else "blocked"
    if not (status.get("inProgress") or {}).get("interrupted"):
        return "in progress"
    return "stopped" if status.get("lastFailure") else "interrupted"


def _resumed(status: dict[str, Any]) -> str:
    """What follows the progress of a node its last run left midway (and where its journal
    says that run went on to, when it ended before its state file said so)."""
    progress = status.get("inProgress") or {}
    if not progress.get("interrupted"):
        return ""
    ahead = [str(node) for node in progress.get("journalAhead") or [] if not node.startswith("@")]
    if ahead:
        went = ", then ".join(ahead)
        return (
            f"; its journal records that the run went on to {escape(went)} before it ended "
            "(its state file was not saved since): the next run catches up there first, "
            "reusing the recorded results"
        )
    return "; no run is going on, the next run resumes it"


def _ended(status: dict[str, Any]) -> str:
    """The summary of an item that ended, with the message of the end node it reached."""
    return " ".join(filter(None, (status.get("summary"), status.get("endMessage"))))


def _budget_held(progress: dict[str, Any]) -> str:
    """What a budget cap holding the node's next call did, and what its answer does."""
    from phasegate.engine.live_run import budget_held

    return budget_held(progress)


#: How many characters of an unresolved concern the status shows (``status --json`` and the
#: review history keep it whole).
CONCERN_CHARS = 300


def _first_line(note: str | None) -> str:
    """A concern's first line; one that only introduces what follows (``checks failed:``)
    is shown with the first line after it."""
    lines = [line.strip() for line in (note or "").splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def _failed(usage: dict[str, Any]) -> str:
    """`` (N failed)`` after the call count when some calls failed (they count too:
    the budget pays for them)."""
    failed = int(usage.get("failedCalls", 0))
    return f" ({failed} failed)" if failed else ""


_TASK_MARKS = {
    "done": "[green]✔[/]",
    "accepted": "[yellow]✔[/]",
    "fixed by hand": "[green]✔[/]",
    "skipped": "[yellow]![/]",
    "implementing": "[yellow]…[/]",
    "in review": "[yellow]…[/]",
    "interrupted": "[yellow]![/]",
    "stopped": "[red]✗[/]",
    "escalated": "[red]?[/]",
    "unclear review": "[red]?[/]",
    "merge conflict": "[red]?[/]",
    "agent failed": "[red]?[/]",
    "agent blocked": "[red]?[/]",
    "review failed": "[red]?[/]",
    "pending": "·",
}


def task_state(task: dict[str, Any]) -> str:
    """One task's state as ``status`` shows it (cycle, reviewer and focus while in review)."""
    state = str(task.get("state", ""))
    if state in ("interrupted", "stopped") and task.get("was"):
        # What its agent was doing when the run ended: the next run resumes it there.
        state += f" ({task['was']}"
        if task.get("cycle"):
            state += f", cycle {task['cycle']}/{task.get('maxCycles', '?')}"
        if task.get("reviewer"):
            state += f", {task['reviewer']}"
        state += ")"
        failure = task.get("failure") or {}
        if state.startswith("stopped") and failure.get("role"):
            # The agent call it stopped on (every attempt of it failed).
            tries = failure.get("attempts")
            after = f" after {tries} attempt{'s' if tries != 1 else ''}" if tries else ""
            state += f": {failure['role']} failed{after}"
    elif state in ("in review", "implementing") and task.get("cycle"):
        state += f" (cycle {task['cycle']}/{task.get('maxCycles', '?')}"
        if task.get("reviewer"):
            state += f", {task['reviewer']}"
        if task.get("focus"):
            state += f", focus: {', '.join(task['focus'])}"
        state += ")"
    elif task.get("decision") and state in (
        "escalated",
        "unclear review",
        "merge conflict",
        "agent failed",
        "agent blocked",
        "review failed",
    ):
        state += f" (decision {task['decision']})"
    if state.startswith("merge conflict") and task.get("worktree"):
        state += f" in {task['worktree']}"
    return state


def print_tasks(console: Console, tasks: list[dict[str, Any]]) -> None:
    """The tasks of a workflow that has them (the implement workflow's plan)."""
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    table.add_column("")
    table.add_column("task")
    table.add_column("state")
    table.add_column("agent")
    for task in tasks:
        table.add_row(
            _TASK_MARKS.get(str(task.get("state")))
            or ("[green]…[/]" if str(task.get("state")).endswith("waiting to merge") else "·"),
            escape(str(task.get("title", ""))),
            escape(task_state(task)),
            escape(str(task.get("implementer") or "")),
        )
    console.print(table)


#: How many items of a loop are listed one by one (beyond: counts only).
ITEMS_LISTED = 30


#: The states of a loop's items, in the order their counts are listed (here and on the
#: dashboard's item page).
ITEM_STATES = (
    "done",
    "running",
    "interrupted",
    "waiting",
    "answered",
    "failed",
    "pending",
    "skipped",
)


def items_summary(items: Sequence[Mapping[str, Any]]) -> str:
    """A loop's items counted by status, in :data:`ITEM_STATES`' order (any other status
    after them): ``1 done, 2 running``."""
    counts: dict[str, int] = {}
    for item in items:
        counts[str(item.get("status"))] = counts.get(str(item.get("status")), 0) + 1
    known = [s for s in ITEM_STATES if counts.get(s)]
    known += sorted(s for s in counts if s not in ITEM_STATES)
    return ", ".join(f"{counts[s]} {s}" for s in known)


def _print_items(console: Console, name: str, items: list[dict[str, Any]]) -> None:
    """A loop's items: counts by status, then each item with where it stands."""
    console.print(f"  {escape(name)} items: {escape(items_summary(items))}")
    if len(items) > ITEMS_LISTED:
        return
    for item in items:
        detail = ""
        if item["status"] in ("running", "interrupted") and item.get("at"):
            detail = f" (at {item['at']})"
        elif item["status"] == "answered":
            chosen = f": {item['answer']}" if item.get("answer") else ""
            detail = f" (decision {item.get('decision')}{chosen}; the next run acts on it)"
        elif item["status"] == "pending" and item.get("deps"):
            detail = f" (after {', '.join(item['deps'])})"
        elif item["status"] in ("waiting", "failed"):
            reason = item.get("reason") or (
                item["outcome"] if item["outcome"] not in ("running",) else ""
            )
            detail = f": {reason}" if reason else ""
        if item.get("worktree") and item["status"] != "pending":
            detail += f" [worktree {item['worktree']}]"
        title = f" {item['title']}" if item.get("title") else ""
        console.print(
            f"    {_ITEM_MARKS.get(item['status'], '?')} {escape(item['key'])}"
            f"{escape(title)} — {item['status']}{escape(detail)}"
        )


_ITEM_MARKS = {
    "done": "✔",
    "running": "▶",
    "interrupted": "!",
    "waiting": "?",
    "answered": "…",
    "failed": "✗",
    "pending": "·",
    "skipped": "-",
}


def _cached(usage: dict[str, Any]) -> str:
    cached = int(usage.get("cacheReadTokens", 0)) + int(usage.get("cacheWriteTokens", 0))
    return f" (+{cached} cached)" if cached else ""


def print_item_table(console: Console, rows: list[dict[str, Any]]) -> None:
    """One line per work item.

    At a terminal the table fits its width: the next command wraps between its words. Into a
    pipe or a file each line is as long as it needs to be, so ``grep`` finds whole lines.
    A command for an item whose name another workflow has too names the item's workflow.

    Laid out here rather than by rich's table, which took most of ``status``'s time with
    a thousand items.
    """
    from phasegate.engine.live_run import shown_status
    from phasegate.suggested_commands import shared_names, status_with_workflow

    shared = shared_names((row["workflow"], row["id"]) for row in rows)
    lines: list[tuple[list[str], str]] = [(list(_ITEM_COLUMNS), "bold")]
    errors: list[str] = []
    for row in rows:
        if "error" in row:
            lines.append(([row["id"], row["workflow"], "unreadable", "", "(see below)"], "red"))
            errors.append(row["error"])
            continue
        if row["id"] in shared:
            row = status_with_workflow(row)
        progress = row["inProgress"]
        if progress and progress.get("kind", "agent") != "agent":
            phase = f"{progress['phase']} ({progress['stage']})"
        elif progress:
            phase = f"{progress['phase']} ({progress['iteration']}/{progress['maxIterations']})"
        else:
            phase = row["currentPhase"] or "-"
        running = row.get("running")
        shown = f"running (pid {running['pid']})" if running else shown_status(row)
        cells = [row["id"], row["workflow"], shown, phase, row["nextCommand"] or ""]
        lines.append(([printable(cell) for cell in cells], ""))
    console.print(_table_text(lines, console.width if _is_terminal(console) else None))
    for error in errors:
        console.print(f"[red]{escape(error)}[/]")


def _is_terminal(console: Console) -> bool:
    """Whether ``console`` writes to a terminal (a pipe is none, even with ``--color always``)."""
    try:
        return console.file.isatty()
    except ValueError:  # a closed file
        return False


_ITEM_COLUMNS = ("item", "workflow", "status", "phase", "next")
#: Spaces before the first column and between two columns.
_MARGIN, _GAP = 2, 4
#: The last column is not folded narrower than this (the terminal wraps the line).
_NARROWEST = 10


def _table_text(lines: list[tuple[list[str], str]], width: int | None) -> Text:
    """``lines`` (cells, and a style for the row's status cell or the header) laid out in
    columns: every column but the last as wide as its widest cell, the last folded
    between its words to fit ``width`` (``None``: never folded)."""
    from rich.cells import cell_len

    fixed = len(lines[0][0]) - 1
    widths = [max(cell_len(cells[i]) for cells, _ in lines) for i in range(fixed)]
    indent = _MARGIN + sum(widths) + _GAP * fixed
    # A terminal too narrow for the other columns wraps the lines itself.
    room = None if width is None or width - indent < _NARROWEST else width - indent
    text = Text(no_wrap=True, overflow="ignore")
    for row, (cells, style) in enumerate(lines):
        if row:
            text.append("\n")
        text.append(" " * _MARGIN)
        for i, cell in enumerate(cells[:fixed]):
            pad = " " * (widths[i] - cell_len(cell) + _GAP)
            # The header is bold; an unreadable item's status is red.
            text.append(cell, style if style == "bold" or (style and i == 2) else None)
            text.append(pad)
        last = _fold(cells[fixed], room)
        text.append(last[0], "bold" if style == "bold" else None)
        for more in last[1:]:
            text.append("\n" + " " * indent + more)
    return text


def _fold(cell: str, room: int | None) -> list[str]:
    """``cell`` in lines of at most ``room`` cells, broken between words (a word longer
    than ``room`` is cut)."""
    if room is None or len(cell) <= room:
        return [cell.rstrip()]
    folded: list[str] = []
    line = ""
    for word in cell.split():
        while len(word) > room:
            if line:
                folded.append(line)
                line = ""
            folded.append(word[:room])
            word = word[room:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= room:
            line += " " + word
        else:
            folded.append(line)
            line = word
    if line or not folded:
        folded.append(line)
    return folded
