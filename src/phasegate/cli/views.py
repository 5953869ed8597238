"""How status and lists look in a terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

_MARKS = {
    "completed": "[green]✔[/]",
    "in-progress": "[yellow]…[/]",
    "pending": "·",
    "skipped": "[dim]-[/]",
}


def print_item_status(console: Console, status: dict[str, Any]) -> None:
    """The detailed status of one work item."""
    console.print(
        f"[bold]{escape(status['id'])}[/] ({status['workflow']}, mode {status['mode']}, "
        f"{status['status']})"
    )
    if status["description"]:
        console.print(f"  {escape(status['description'])}")
    progress = status["inProgress"]
    if status.get("currentState"):  # a workflow whose state file names its state (team)
        console.print(f"  State: [bold]{escape(str(status['currentState']))}[/]")
    if progress and status.get("pendingDecisions"):
        console.print(f"  Phase: [bold]{progress['phase']}[/], waiting for a decision")
    elif progress:
        console.print(
            f"  Phase: [bold]{progress['phase']}[/], in progress: iteration "
            f"{progress['iteration']} of {progress['maxIterations']} ({progress['stage']})"
        )
    elif status["status"] == "completed":
        console.print(f"  Complete: {escape(status['summary'] or '')}")
    else:
        console.print(
            f"  Phase: {status['currentPhase'] or '(not started)'}; next: {status['nextPhase']}"
        )
    if status["blocked"]:
        console.print(f"  [red]Blocked:[/] {escape(status['blocked'])}")
    if status["nextCommand"]:
        console.print(f"  Next: [bold]{escape(status['nextCommand'])}[/]")
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
            str(phase["iterations"] or ""),
            phase["review"] or "",
            str(tokens or ""),
        )
    console.print(table)
    if status["unresolvedConcerns"]:
        console.print("  [yellow]Unresolved reviewer concerns:[/]")
        for concern in status["unresolvedConcerns"]:
            first = concern["note"].splitlines()[0] if concern["note"] else ""
            console.print(f"    - {concern['phase']}: {escape(first)}")
    usage = status["usage"]
    cost = f", ${usage['costUsd']:.4f}" if usage.get("costUsd") else ""
    console.print(
        f"  Usage: {usage['calls']} agent calls, "
        f"{usage['inputTokens'] + usage['outputTokens']} tokens in and out"
        f"{_cached(usage)}{cost}"
    )
    if status.get("worktree"):
        console.print(f"  Worktree: {status['worktree']} (branch {status.get('branch') or '?'})")


def _cached(usage: dict[str, Any]) -> str:
    cached = int(usage.get("cacheReadTokens", 0)) + int(usage.get("cacheWriteTokens", 0))
    return f" (+{cached} cached)" if cached else ""


def print_item_table(console: Console, rows: list[dict[str, Any]]) -> None:
    """One line per work item."""
    table = Table(show_header=True, header_style="bold", box=None, padding=(0, 2))
    for column in ("item", "workflow", "status", "phase", "next"):
        # Names and commands must stay copy-pasteable: never wrap them.
        table.add_column(column, no_wrap=column in ("item", "next"))
    errors: list[str] = []
    for row in rows:
        if "error" in row:
            table.add_row(row["id"], row["workflow"], "[red]unreadable[/]", "", "(see below)")
            errors.append(row["error"])
            continue
        progress = row["inProgress"]
        phase = (
            f"{progress['phase']} ({progress['iteration']}/{progress['maxIterations']})"
            if progress
            else (row["currentPhase"] or "-")
        )
        table.add_row(
            row["id"], row["workflow"], row["status"], phase, escape(row["nextCommand"] or "")
        )
    console.print(table)
    for error in errors:
        console.print(f"[red]{escape(error)}[/]")
