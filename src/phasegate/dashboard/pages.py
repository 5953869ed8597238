"""The dashboard's HTML, built from escaped strings (no template engine, no build step).

Every value that comes from a work item is escaped here; Markdown is
rendered with raw HTML disabled, so nothing an agent wrote can run in the page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt

from phasegate.dashboard.data import MAX_NOTE_CHARS
from phasegate.dashboard.events import EventEntry
from phasegate.engine.budget import budget_lines
from phasegate.engine.status import phase_iterations
from phasegate.suggested_commands import shared_names

#: How many timeline entries an item's page shows at most (its latest ones).
TIMELINE_SHOWN = 1000

_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def render_markdown(text: str) -> str:
    """``text`` as HTML; raw HTML in it is shown as text, never passed through."""
    return str(_MARKDOWN.render(text))


def item_url(item: str, *rest: str, workflow: str | None = None) -> str:
    """The page of ``item`` (or a path below it); with ``workflow``, of its item of that
    name (which a name two workflows have needs)."""
    path = "/".join(["/items", quote(item, safe=""), *(quote(p, safe="/") for p in rest)])
    return path + (f"?workflow={quote(workflow, safe='')}" if workflow else "")


def layout(title: str, body: str, *, repo: str) -> str:
    """A whole page around ``body``."""
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · phasegate</title>"
        '<link rel="stylesheet" href="/static/dashboard.css">'
        '<script src="/static/dashboard.js" defer></script>'
        "</head><body>"
        '<header class="top"><a class="brand" href="/">phasegate</a>'
        f'<span class="repo" title="{escape(repo)}">{escape(PurePath(repo).name)}</span></header>'
        f"<main>{body}</main></body></html>\n"
    )


def _money(value: Any) -> str:
    return f"${float(value or 0):.4f}" if value else "-"


def _status_badge(status: object) -> str:
    text = str(status or "-")
    return f'<span class="badge status-{escape(text)}">{escape(text)}</span>'


def _shown(row: Mapping[str, Any]) -> object:
    """The status an item's row shows, as ``phasegate status``'s table shows it
    (``interrupted``, ``stopped``, ``blocked`` for an active item; see ``shownStatus``)."""
    return row.get("shownStatus") or row.get("status")


def _running(row: Mapping[str, Any]) -> str:
    """`` running (pid N)`` while a run of the item goes on, as ``phasegate status`` says."""
    live = row.get("running")
    if not isinstance(live, Mapping):
        return ""
    pid = escape(str(live.get("pid")))
    return f' <span class="badge status-running">running (pid {pid})</span>'


def _waiting(row: Mapping[str, Any], url: str) -> str:
    """A link to the decisions of an item that waits for a person (answerable there)."""
    count = int(row.get("decisions") or 0)
    if not count:
        return ""
    text = f"{count} decision{'s' if count > 1 else ''} waiting"
    return f' <a class="badge waiting" href="{escape(url)}#decisions">{text}</a>'


# -- the item list ------------------------------------------------------------------


def items_page(items: Sequence[Mapping[str, Any]], repo: str) -> str:
    """Every work item, one row each."""
    if not items:
        body = (
            '<section id="items"><h1>Work items</h1><p class=empty>No work items yet. Create '
            "one with <code>phasegate new NAME --description '...'</code>.</p></section>"
        )
        return layout("Work items", body, repo=repo)
    # A name two workflows have: its links say which workflow's item they open.
    shared = shared_names((str(row["workflow"]), str(row["id"])) for row in items)
    rows: list[str] = []
    for row in items:
        name = str(row["id"])
        url = item_url(name, workflow=str(row["workflow"]) if name in shared else None)
        link = f'<a href="{escape(url)}">{escape(name)}</a>'
        if "error" in row:
            rows.append(
                f'<tr class="unreadable"><td data-label="item">{link}</td>'
                f'<td data-label="workflow">{escape(str(row["workflow"]))}</td>'
                f'<td data-label="error" colspan="6">{escape(str(row["error"]))}</td></tr>'
            )
            continue
        rows.append(
            f'<tr><td data-label="item">{link}</td>'
            f'<td data-label="workflow">{escape(str(row["workflow"]))}</td>'
            f'<td data-label="node">{escape(str(row["node"]))}</td>'
            f'<td data-label="status">{_status_badge(_shown(row))}{_running(row)}'
            f"{_waiting(row, url)}</td>"
            f'<td data-label="iterations" class="num">{row["iterations"]}</td>'
            f'<td data-label="tokens" class="num">{row["tokens"]}</td>'
            f'<td data-label="cost" class="num">{_money(row["costUsd"])}</td>'
            f'<td data-label="next"><code>{escape(str(row.get("nextCommand") or ""))}</code></td>'
            "</tr>"
        )
    header = "".join(
        f"<th>{h}</th>"
        for h in ("item", "workflow", "phase / node", "status", "iterations", "tokens", "cost")
    )
    # The page's script reads the list again every few seconds (a run that starts or ends).
    body = (
        f'<section id="items"><h1>Work items</h1><table class=items><thead><tr>{header}'
        f"<th>next</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )
    return layout("Work items", body, repo=repo)


# -- one item ---------------------------------------------------------------------------


def summary_html(detail: Mapping[str, Any]) -> str:
    """The head of an item's page: status, where it is, what it spent."""
    facts = [
        ("workflow", escape(str(detail.get("workflow")))),
        ("phase / node", escape(str(detail.get("node")))),
        ("iterations", str(detail.get("iterations", 0))),
        ("agent calls", str(detail.get("calls", 0))),
        ("tokens", str(detail.get("tokens", 0))),
        ("cost", _money(detail.get("costUsd"))),
    ]
    for line in budget_lines(detail.get("budget"))[1:]:
        who, _, text = line.strip().partition(": ")
        facts.append((f"budget, {escape(who)}", escape(text)))
    if detail.get("blocked"):  # what holds it, as `phasegate status` says on its Blocked line
        facts.append(("blocked", escape(str(detail["blocked"]))))
    ended = " ".join(str(detail.get(k)) for k in ("summary", "endMessage") if detail.get(k))
    if ended and detail.get("status") in ("completed", "stopped", "blocked"):
        facts.append(("ended", escape(ended)))
    failure = detail.get("lastFailure")
    if isinstance(failure, Mapping):  # what the run that left the node midway stopped on
        error = (str(failure.get("error") or "").splitlines() or [""])[0]
        facts.append(
            (
                "last run failed",
                escape(
                    f"{failure.get('role')} failed in {failure.get('node')} after "
                    f"{failure.get('attempts')} attempt(s): {error}"
                ),
            )
        )
    if detail.get("nextCommand"):
        command = f"<code>{escape(str(detail['nextCommand']))}</code>"
        if detail.get("pendingDecisions"):  # or here: the decisions below take an answer
            command += ' or <a href="#decisions">answer below</a>'
        facts.append(("next", command))
    items = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in facts)
    description = detail.get("description") or ""
    return (
        f"<h1>{escape(str(detail['id']))} {_status_badge(_shown(detail))}"
        f"{_running(detail)}</h1>"
        + (f'<p class="description">{escape(str(description))}</p>' if description else "")
        + f'<dl class="facts">{items}</dl>'
    )


def phases_html(detail: Mapping[str, Any]) -> str:
    """The phases of an item with their iterations and review outcome."""
    phases = detail.get("phases") or []
    if not phases:
        return '<section id="phases"></section>'
    rows = []
    for phase in phases:
        usage = phase.get("usage") or {}
        tokens = int(usage.get("inputTokens", 0)) + int(usage.get("outputTokens", 0))
        rows.append(
            f'<tr class="phase-{escape(str(phase["status"]))}">'
            f'<td data-label="phase">{_phase_name(phase)}</td>'
            f'<td data-label="status">{escape(str(phase["status"]))}</td>'
            f'<td data-label="iterations" class="num">{phase_iterations(phase)}</td>'
            # A gate's answer, a check's result, as `phasegate status` shows them.
            f'<td data-label="review">'
            f"{escape(str(phase.get('review') or phase.get('outcome') or ''))}</td>"
            f'<td data-label="tokens" class="num">{tokens or ""}</td></tr>'
        )
    concerns = "".join(
        f"<li><b>{escape(c['phase'])}</b>: {escape(c['note'])}</li>"
        for c in detail.get("unresolvedConcerns") or []
    )
    # Accepted by a person (team: "accept with known issues"), as `phasegate status` lists them.
    known = "".join(
        f"<li>{escape((str(issue).splitlines() or [''])[0])}</li>"
        for issue in detail.get("knownIssues") or []
    )
    return (
        '<section id="phases"><h2>Phases</h2><table class="phases"><thead><tr>'
        "<th>phase</th><th>status</th><th>iterations</th><th>review</th><th>tokens</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + _loop_items_html(phases)
        + _tasks_html(detail.get("tasks") or [])
        + (
            f'<h3>Unresolved reviewer concerns</h3><ul class="concerns">{concerns}</ul>'
            if concerns
            else ""
        )
        + (f'<h3>Known issues (accepted)</h3><ul class="known">{known}</ul>' if known else "")
        + "</section>"
    )


def _phase_name(phase: Mapping[str, Any]) -> str:
    """A phase's name, and its node's id where several nodes share the label."""
    name, node = str(phase["name"]), phase.get("node")
    if node in (None, name):
        return escape(name)
    return f'{escape(name)} <span class="node-id">{escape(str(node))}</span>'


def _loop_items_html(phases: Sequence[Mapping[str, Any]]) -> str:
    """Each loop's items counted by status, as `status` counts them:
    ``implementing items: 1 done, 2 running``."""
    from phasegate.cli.views import items_summary

    lines = []
    for phase in phases:
        items = phase.get("items") or []
        if not items:
            continue
        summary = items_summary(items)
        lines.append(f"<li><b>{escape(str(phase['name']))}</b> items: {escape(summary)}</li>")
    return f'<ul class="loop-items">{"".join(lines)}</ul>' if lines else ""


def _tasks_html(tasks: Sequence[Mapping[str, Any]]) -> str:
    """The tasks of a workflow that has them (the implement workflow's plan), as
    ``phasegate status`` lists them: title, state, agent."""
    if not tasks:
        return ""
    from phasegate.cli.views import task_state  # the state's words, as `status` has them

    rows = "".join(
        f'<tr><td data-label="task">{escape(str(task.get("title", "")))}</td>'
        f'<td data-label="state">{escape(task_state(dict(task)))}</td>'
        f'<td data-label="agent">{escape(str(task.get("implementer") or ""))}</td></tr>'
        for task in tasks
    )
    return (
        '<h3>Tasks</h3><table class="tasks"><thead><tr><th>task</th><th>state</th>'
        f"<th>agent</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def entry_html(entry: EventEntry) -> str:
    """One timeline entry."""
    state = "" if entry.ok is None else (" ok" if entry.ok else " bad")
    who = " · ".join(escape(p) for p in (entry.role, entry.backend) if p)
    parts = [
        f'<li class="entry kind-{entry.kind}{state}" data-event="{escape(entry.event)}">',
        f'<time datetime="{escape(entry.time)}">{escape(entry.time[11:19] or entry.time)}</time>',
        f'<span class="node">{escape(entry.node)}</span>' if entry.node else "",
        f'<span class="who">{who}</span>' if who else "",
        f'<span class="what">{escape(entry.what)}</span>',
        f'<span class="spend">{escape(entry.spend)}</span>' if entry.spend else "",
    ]
    if entry.issues:
        issues = "".join(
            f'<li class="sev-{escape(str(i.get("severity") or "note"))}">'
            + (f"<b>{escape(str(i.get('severity')))}</b> " if i.get("severity") else "")
            + escape(str(i.get("description") or ""))
            + (f" <code>{escape(str(i['location']))}</code>" if i.get("location") else "")
            + "</li>"
            for i in entry.issues
        )
        parts.append(f'<ul class="issues">{issues}</ul>')
    if entry.output:
        parts.append(
            f"<details><summary>output (last lines)</summary><pre>{escape(entry.output)}</pre>"
            "</details>"
        )
    parts.append("</li>")
    return "".join(parts)


def entries_html(entries: Iterable[EventEntry]) -> str:
    """Several timeline entries."""
    return "".join(entry_html(e) for e in entries)


def timeline_html(item: str, entries: Sequence[EventEntry], workflow: str | None = None) -> str:
    """An item's timeline from its start: its last :data:`TIMELINE_SHOWN` entries, and a
    line saying how many earlier ones are left out (``phasegate logs`` prints them)."""
    if len(entries) <= TIMELINE_SHOWN:
        return entries_html(entries)
    left_out = len(entries) - TIMELINE_SHOWN
    command = f"phasegate logs {item}" + (f" --workflow {workflow}" if workflow else "")
    return (
        f'<li class="entry kind-earlier"><span class="what">{left_out} earlier '
        f"event{'s' if left_out > 1 else ''} not shown: <code>{escape(command)}</code> "
        "prints them all</span></li>" + entries_html(entries[left_out:])
    )


def decisions_html(
    item: str,
    decisions: Sequence[Mapping[str, Any]],
    artifact_links: Iterable[tuple[str, str]],
    workflow: str | None = None,
) -> str:
    """The item's decisions: pending ones with a form to answer them, answered ones below.

    ``artifact_links``: each artifact's shown name and URL key. ``workflow``: the one
    the page names (its links and forms keep it)."""
    known = dict(artifact_links)
    pending = [d for d in decisions if d.get("status") == "pending"]
    answered = [d for d in decisions if d.get("status") != "pending"]
    parts = [f"<h2>Decisions{f' ({len(pending)} waiting)' if pending else ''}</h2>"]
    if not decisions:
        parts.append('<p class="empty">No decisions asked.</p>')
    for decision in pending:
        did = str(decision["id"])
        files = "".join(
            f'<li><a href="{escape(item_url(item, "artifacts", known[f], workflow=workflow))}">'
            f"{escape(f)}</a></li>"
            if f in known
            else f"<li><code>{escape(f)}</code></li>"
            for f in decision.get("files") or []
        )
        choices = [str(c) for c in decision.get("choices") or []]
        recommended = decision.get("recommendation")
        buttons = "".join(
            f'<button type="submit" name="choice" value="{escape(c)}"'
            + (' class="recommended"' if c == recommended else "")
            + f">{escape(c)}</button>"
            for c in choices
        )
        parts.append(
            f'<div class="decision pending" data-id="{escape(did)}">'
            f'<p class="question">{escape(str(decision.get("question") or ""))}</p>'
            + _choices_html(choices, decision)
            + (f'<ul class="files">{files}</ul>' if files else "")
            + '<form class="answer" method="post" '
            f'action="{escape(item_url(item, "decisions", did, workflow=workflow))}">'
            # The question shown: sent again once the decision is asked anew, it is refused.
            + (
                f'<input type="hidden" name="visit" value="{int(decision["visit"])}">'
                if decision.get("visit") is not None
                else ""
            )
            + '<label>Note <input type="text" name="note" autocomplete="off" '
            f'maxlength="{MAX_NOTE_CHARS}"></label>'
            f'<span class="choices">{buttons}</span></form>'
            '<p class="message" role="status"></p></div>'
        )
    for decision in answered:
        given = decision.get("answer") or {}
        note = f": {escape(str(given['note']))}" if given.get("note") else ""
        parts.append(
            f'<div class="decision answered" data-id="{escape(str(decision["id"]))}">'
            f'<p class="question">{escape(str(decision.get("question") or ""))}</p>'
            f'<p class="answer-given">Answered <b>{escape(str(given.get("choice")))}</b> by '
            f"{escape(str(given.get('by')))} at {escape(str(given.get('at')))}{note}</p></div>"
        )
    return "".join(parts)


def _choices_html(choices: Sequence[str], decision: Mapping[str, Any]) -> str:
    """What each choice of a pending decision does, which need a note, which is
    recommended: what ``phasegate decisions`` and the terminal's question say too."""
    descriptions = decision.get("descriptions") or {}
    needs_note = set(decision.get("notes_required") or [])
    recommended = decision.get("recommendation")
    if not any(descriptions.get(c) for c in choices) and not needs_note and not recommended:
        return ""
    rows = "".join(
        f"<li><b>{escape(c)}</b>"
        + (f": {escape(str(descriptions[c]))}" if descriptions.get(c) else "")
        + (' <span class="needs-note">(needs a note)</span>' if c in needs_note else "")
        + (' <span class="recommended">(recommended)</span>' if c == recommended else "")
        + "</li>"
        for c in choices
    )
    return f'<ul class="choice-list">{rows}</ul>'


def fragment_version(html: str) -> str:
    """A short fingerprint of a page fragment (the page skips redrawing an unchanged one)."""
    return hashlib.sha256(html.encode("utf-8")).hexdigest()[:16]


def artifacts_html(
    item: str, artifact_links: Sequence[tuple[str, str]], workflow: str | None = None
) -> str:
    """Links to the item's Markdown files: each shown name (secrets masked), its URL key."""
    if not artifact_links:
        return '<h2>Artifacts</h2><p class="empty">No artifacts yet.</p>'
    links = "".join(
        f'<li><a href="{escape(item_url(item, "artifacts", key, workflow=workflow))}">'
        f"{escape(shown)}</a></li>"
        for shown, key in artifact_links
    )
    return f'<h2>Artifacts</h2><ul class="artifacts">{links}</ul>'


def item_page(
    detail: Mapping[str, Any],
    entries: Sequence[EventEntry],
    offset: int,
    decisions: Sequence[Mapping[str, Any]],
    artifact_links: Sequence[tuple[str, str]],
    repo: str,
    workflow: str | None = None,
) -> str:
    """One item: summary, decisions, timeline (live), artifacts, phases.

    ``workflow``: the one the page was opened with (its links and forms keep it)."""
    item = str(detail["id"])
    events_url = item_url(item, "events", workflow=workflow)
    panel = decisions_html(item, decisions, artifact_links, workflow)
    body = (
        f'<section id="summary">{summary_html(detail)}</section>'
        f'<section id="decisions" data-version="{fragment_version(panel)}">{panel}</section>'
        '<div class="columns"><section class="timeline"><h2>Timeline '
        '<span id="live" class="live" title="new events appear here as they happen"></span>'
        f'</h2><ol id="timeline" data-events="{escape(events_url)}" data-offset="{offset}">'
        f"{timeline_html(item, entries, workflow)}</ol></section>"
        f'<aside><section id="artifacts">{artifacts_html(item, artifact_links, workflow)}</section>'
        f"{phases_html(detail)}</aside></div>"
    )
    return layout(item, body, repo=repo)


def artifact_page(item: str, name: str, text: str, repo: str, workflow: str | None = None) -> str:
    """One Markdown file of an item, rendered: ``name`` as shown (secrets masked),
    ``workflow`` the one its page names."""
    back = escape(item_url(item, workflow=workflow))
    body = (
        f'<nav class="crumbs"><a href="{back}">{escape(item)}</a> / {escape(name)}</nav>'
        f'<article class="markdown">{render_markdown(text)}</article>'
    )
    return layout(f"{name} · {item}", body, repo=repo)


def error_page(status: int, message: str, repo: str, back: str | None = None) -> str:
    """A page saying what went wrong; ``back``: the page to go back to (an item's)."""
    link = f'<a href="{escape(back)}">Back to the item</a> · ' if back else ""
    body = (
        f'<h1>{status}</h1><p class="error">{escape(message)}</p>'
        f'<p>{link}<a href="/">All items</a></p>'
    )
    return layout(str(status), body, repo=repo)
