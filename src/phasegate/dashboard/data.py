"""What the dashboard and ``phasegate logs`` read: the one adapter over the engine's files.

Every page, API endpoint and the ``logs`` command read work items only
through the functions below (pure functions, no web code), so a change in how
the engine stores its state changes this module alone. All results are
JSON-ready and redacted with the current environment's secrets.

Contract
--------

``list_items(root) -> list[dict]``
    One dict per work item of the repository: ``id``, ``workflow``, ``node``
    (the current phase or node, as a label), ``status``, ``shownStatus`` (what the
    status table's column reads: ``interrupted``, ``stopped`` or ``blocked`` for an
    active item its last run left midway or a block holds), ``iterations``
    (review iterations so far), ``calls``, ``tokens`` (in + out), ``costUsd``,
    ``nextCommand``, ``running`` (the run going on now, ``{pid, host, since}``, or
    ``None``, as ``phasegate status`` has it); or ``id``, ``workflow``, ``error``
    for an unreadable one.
``item_detail(root, item, workflow=None) -> dict``
    The list fields of one item plus ``description``, ``mode``, ``phases``,
    ``unresolvedConcerns``, ``usage``, ``budget`` (spend against each cap, or
    ``None``) and ``stateFile`` (what ``phasegate status ITEM --json`` prints,
    where the workflow has it).
``running(root, item, workflow=None) -> dict | None``
    The item's ``running`` alone, cheap enough to ask several times a second.
``state_mark(root, item, workflow=None) -> tuple``
    A fingerprint of the item's journal and state files (names, times, sizes):
    it changes when they do, read with a few ``stat`` calls.
``journal_events(root, item, offset=0, workflow=None) -> (events, new_offset)``
    The journal's complete events from byte ``offset`` on, and the offset to
    read from next. A torn last line (a write cut short) is not an event and
    is read again once complete; an offset past the end (the journal was
    replaced) reads from the start.
``artifacts(root, item, workflow=None) -> list[(name, path)]``
    The item folder's Markdown files (review history included), ``name``
    relative to the folder. A file that resolves outside the folder (a
    symbolic link to a file elsewhere) is not one of them: it is neither
    listed nor served.
``artifact_links(root, item, workflow=None) -> list[(shown, key)]``
    The same files as the dashboard shows them: each name with its secrets
    masked, and the key its URL names (the name itself; for a name that held
    a secret, ``~`` and a digest of the name, so the secret is in no URL).
``find_artifact(root, item, key, workflow=None) -> (shown, path)``
    The artifact a URL's key names (its real name or its digest key).
``decisions(root, item, workflow=None) -> list[dict]``
    The item's human decisions (gates), oldest first, each ``{id, item,
    question, choices: [str], descriptions: {choice: text}, notes_required:
    [str], recommendation, files: [str], status: "pending" | "answered",
    asked_at, visit, answer?: {choice, note, by, at}}``.
``answer(root, item, decision_id, choice, note, by, workflow=None) -> dict``
    Record the answer (persisted before anything acts on it) and return the
    decision. Raises :class:`BadInputError` for an unknown id, a choice that
    is not one of the canonical choices (the message lists them) or a note
    longer than :data:`MAX_NOTE_CHARS`, and
    :class:`AlreadyAnsweredError` when it was answered already: two answers
    given at once are recorded once, and the other one gets that error.

An item is found by its name alone, as on the command line, unless ``workflow`` is
given: a name two workflows have needs it (without it, the error is the one
``phasegate`` gives: "... pick one with --workflow"), and an unknown workflow is
a :class:`NotFoundError`. The commands suggested for an item whose
name another workflow has too (``nextCommand``, a pending decision's
``command``) name its workflow, so that they work as pasted.

Decisions are the engine's gates (:mod:`phasegate.engine.gates`): a gate's
pending decision is in the item's engine state, and an answer is journaled
under the item's lock, exactly as ``phasegate answer`` does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.config import load_config
from phasegate.engine.answers import MAX_NOTE_CHARS as _MAX_NOTE_CHARS
from phasegate.engine.live_run import shown_status
from phasegate.engine.status import UNREVIEWED
from phasegate.errors import (
    BadInputError,
    NotFoundError,
    PhasegateError,
    StateCorruptError,
)
from phasegate.redact import Redactor, message_redactor

__all__ = [
    "MAX_NOTE_CHARS",
    "answer",
    "artifact_links",
    "artifacts",
    "decisions",
    "item_detail",
    "journal_events",
    "list_items",
]


@dataclass(frozen=True)
class _Located:
    """Where one work item lives."""

    name: str
    workflow: str
    item_dir: Path
    journal_path: Path


def _registry(root: Path) -> Any:
    from phasegate.workflow.registry import WorkflowRegistry

    return WorkflowRegistry(root)


#: The longest note an answer may have (characters), here as from ``phasegate answer``.
MAX_NOTE_CHARS = _MAX_NOTE_CHARS

_LOCATED: dict[tuple[Path, str, str | None], _Located] = {}


def _locate(root: Path, item: str, workflow: str | None = None) -> _Located:
    """Where ``item`` (of ``workflow``, if given) lives; remembered, because an open page
    asks several times a second."""
    key = (root, item, workflow or None)
    known = _LOCATED.get(key)
    if known is not None and known.item_dir.is_dir():
        return known
    found = _work_item(root, item, workflow)
    located = _Located(item, found.workflow.name, found.item_dir, found.journal.path)
    _LOCATED[key] = located
    return located


def _work_item(root: Path, item: str, workflow: str | None = None) -> Any:
    from phasegate.engine.items import locate_item

    registry = _registry(root)
    try:
        return locate_item(
            root, item, registry, load_config(root), workflow or None, command="dashboard"
        )
    except NotFoundError:
        if not workflow or workflow not in registry.names():
            raise  # no item of that name at all, or no such workflow: the error says which
        raise NotFoundError(
            f"workflow {workflow!r} has no work item named {item!r} in {root}"
        ) from None


# -- items ----------------------------------------------------------------------


def _row(status: dict[str, Any]) -> dict[str, Any]:
    progress = status.get("inProgress")
    if progress and progress.get("kind", "agent") != "agent":  # a gate, loop, action: no iteration
        node = f"{progress['phase']} ({progress['stage']})"
    elif progress:
        node = (
            f"{progress['phase']} ({progress['stage']}, iteration "
            f"{progress['iteration']}/{progress['maxIterations']})"
        )
    else:
        node = status.get("currentPhase") or status.get("label") or "-"
    usage = status.get("usage") or {}
    return {
        "id": status["id"],
        "workflow": status["workflow"],
        "node": node,
        "status": status["status"],
        # What the item's row shows: interrupted or stopped for a node left midway.
        "shownStatus": shown_status(status),
        # Review iterations, as `phasegate status` counts them (a skipped review adds none).
        "iterations": sum(
            int(p.get("iterations") or 0)
            for p in status.get("phases", [])
            if p.get("review") not in UNREVIEWED
        ),
        "calls": int(usage.get("calls", 0)),
        "tokens": int(usage.get("inputTokens", 0)) + int(usage.get("outputTokens", 0)),
        "costUsd": float(usage.get("costUsd", 0.0)),
        "nextCommand": status.get("nextCommand"),
        "decisions": len(status.get("pendingDecisions") or []),
        # The run going on now ({pid, host, since}), as `phasegate status` shows it.
        "running": status.get("running"),
    }


def list_items(root: Path) -> list[dict[str, Any]]:
    """Every work item of the repository at ``root`` (see the module docstring)."""
    from phasegate.engine.item_status import with_failed_attempts, with_left_midway
    from phasegate.engine.items import iter_items, locate_item
    from phasegate.engine.live_run import live_runs, with_live_run
    from phasegate.engine.spend import read_spend
    from phasegate.suggested_commands import shared_names, status_with_workflow

    config = load_config(root)
    registry = _registry(root)
    found_items = [(workflow, name) for workflow, name, _ in iter_items(root, registry, config)]
    # A name two workflows have is found by its name and workflow: its commands say which.
    shared = shared_names(found_items)
    live = live_runs(root)  # the runs going on now (read once, not item by item)
    rows: list[dict[str, Any]] = []
    for workflow, name in found_items:
        try:
            found = locate_item(root, name, registry, config, workflow, command="dashboard")
            status = found.status(found.load(read_journal=False))
            # Failed attempts count, as in the item's own page and in `status`.
            status["usage"] = with_failed_attempts(
                status.get("usage"), read_spend(found.journal.path)
            )
            running = live.get((workflow, name))
            # A node its last run left midway: interrupted or stopped, as `status` says.
            status = with_left_midway(status, running, found.journal.path)
            status = with_live_run(status, running)
            # The item's redactor: its own names (phases, decisions) are never masked.
            row = _row(status_with_workflow(status) if name in shared else status)
            rows.append(found.redactor.data(row))
        except PhasegateError as exc:
            error = {"id": name, "workflow": workflow, "error": str(exc)}
            rows.append(message_redactor().data(error))
    return rows


def item_detail(root: Path, item: str, workflow: str | None = None) -> dict[str, Any]:
    """One work item in detail (see the module docstring); NotFoundError if there is none."""
    from phasegate.engine.item_status import status_of
    from phasegate.suggested_commands import named_elsewhere, status_with_workflow

    found = _work_item(root, item, workflow)
    status = status_of(found, found.load(read_journal=False))
    # Without a workflow the item was found by its name alone: no other workflow has it.
    if workflow and named_elsewhere(
        root, item, found.workflow.name, _registry(root), load_config(root)
    ):
        status = status_with_workflow(status)
    detail = {**status, **_row(status)}
    return found.redactor.data(detail)  # type: ignore[no-any-return]


def running(root: Path, item: str, workflow: str | None = None) -> dict[str, Any] | None:
    """The run of ``item`` going on now (``{pid, host, since}``), or ``None``: read often
    (an open page sees a run end), without loading the item's state."""
    from phasegate.engine.live_run import live_runs

    located = _locate(root, item, workflow)
    return live_runs(root).get((located.workflow, located.name))


def state_mark(root: Path, item: str, workflow: str | None = None) -> tuple[Any, ...]:
    """A fingerprint of the item's own files (its journal and state: the dot files of its
    folder), changed by whatever changes its decisions; a few ``stat`` calls, so an open page
    asks it several times a second instead of loading the item."""
    folder = _locate(root, item, workflow).item_dir
    marks = []
    try:
        for path in folder.iterdir():
            if path.name.startswith("."):
                with contextlib.suppress(FileNotFoundError):  # removed meanwhile
                    found = path.stat()
                    marks.append((path.name, found.st_mtime_ns, found.st_size))
    except FileNotFoundError:
        pass
    return tuple(sorted(marks))


# -- journal and artifacts ----------------------------------------------------------


def journal_events(
    root: Path, item: str, offset: int = 0, workflow: str | None = None
) -> tuple[list[dict[str, Any]], int]:
    """The complete journal events from byte ``offset`` on, and the next offset."""
    return read_journal(_locate(root, item, workflow).journal_path, offset)


def read_journal(path: Path, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """:func:`journal_events` for a journal file given by its path."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            if offset < 0 or offset > size:
                offset = 0  # the journal was replaced: read it again from its start
            if offset > 0:
                handle.seek(offset - 1)
                if handle.read(1) != b"\n":
                    raise BadInputError(
                        f"offset {offset} is not the start of a line of {path}: read from 0, "
                        "or from an offset an earlier read returned"
                    )
            handle.seek(offset)
            data = handle.read(size - offset)
    except FileNotFoundError:
        return [], 0
    end = data.rfind(b"\n")
    if end < 0:
        return [], offset  # nothing, or only a line still being written
    redactor = message_redactor()  # the items' own names (phases, labels) are never masked
    events: list[dict[str, Any]] = []
    position = offset
    for line in data[: end + 1].split(b"\n")[:-1]:
        if line.strip():
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise StateCorruptError(
                    f"journal {path} is corrupt at byte {position} ({exc.__class__.__name__}); "
                    "it was left untouched"
                ) from None
            if isinstance(record, dict):
                events.append(redactor.data(record))
        position += len(line) + 1
    return events, offset + end + 1


def artifacts(root: Path, item: str, workflow: str | None = None) -> list[tuple[str, Path]]:
    """The Markdown files of the item's folder (its artifacts and review history)."""
    folder = _locate(root, item, workflow).item_dir
    real_folder = folder.resolve()
    found = sorted(
        (p.relative_to(folder).as_posix(), p)
        for p in folder.rglob("*.md")
        if ".base" not in p.relative_to(folder).parts
        # A link to a file outside the folder (elsewhere in the repository or outside it)
        # is no artifact of the item.
        and (real := p.resolve()).is_relative_to(real_folder)
        and real.is_file()
    )
    # The review history (a dot file) after the artifacts.
    return sorted(found, key=lambda pair: (pair[0].startswith("."), pair[0]))


def _artifact_key(name: str, shown: str) -> str:
    """The key of an artifact's URL: its name, or for a name holding a secret a digest."""
    if shown == name:
        return name
    return "~" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:32]


def artifact_links(root: Path, item: str, workflow: str | None = None) -> list[tuple[str, str]]:
    """Each artifact's name as shown (secrets masked) and the key its URL names."""
    found = artifacts(root, item, workflow)  # first: the item's names are known then
    redactor = message_redactor()
    links = []
    for name, _ in found:
        shown = redactor.text(name)
        links.append((shown, _artifact_key(name, shown)))
    return links


def find_artifact(root: Path, item: str, key: str, workflow: str | None = None) -> tuple[str, Path]:
    """The shown name and path of the artifact ``key`` names (:class:`NotFoundError` if none)."""
    found = artifacts(root, item, workflow)  # first: the item's names are known then
    redactor = message_redactor()
    for name, path in found:
        shown = redactor.text(name)
        if key in (name, _artifact_key(name, shown)):
            return shown, path.resolve()  # the file read is the one found inside the folder
    raise NotFoundError(f"work item {item!r} has no artifact {redactor.text(key)!r}")


# -- decisions ------------------------------------------------------------------------


def decisions(root: Path, item: str, workflow: str | None = None) -> list[dict[str, Any]]:
    """The item's decisions, oldest first (see the module docstring)."""
    found = _work_item(root, item, workflow)
    state = found.load()
    out: list[dict[str, Any]] = []
    for record in state.decisions.values():
        answered = found.recorded().answer(record["id"], int(record.get("visit", 0)))
        entry: dict[str, Any] = {
            "id": record["id"],
            "item": item,
            "question": record.get("question"),
            "choices": list(record.get("choices") or {}),
            "descriptions": dict(record.get("choices") or {}),
            "files": list(record.get("files") or []),
            "recommendation": record.get("recommendation"),
            # The choices refused without a note (the page marks them).
            "notes_required": list(record.get("notes_required") or []),
            "status": "answered" if answered is not None else record.get("status"),
            "asked_at": record.get("asked_at"),
            # Which time the decision was asked: an answer naming it answers that question.
            "visit": int(record.get("visit", 0)),
        }
        given = record.get("answer") or (
            {
                "choice": answered.get("choice"),
                "note": answered.get("note"),
                "by": answered.get("by"),
                "answered_at": answered.get("ts"),
            }
            if answered is not None
            else None
        )
        if given:
            entry["answer"] = {
                "choice": given.get("choice"),
                "note": given.get("note") or None,
                "by": given.get("by"),
                "at": given.get("answered_at"),
            }
        out.append(entry)
    out.sort(key=lambda d: str(d.get("asked_at") or ""))
    return found.redactor.data(out)  # type: ignore[no-any-return]


def answer(
    root: Path,
    item: str,
    decision_id: str,
    choice: str,
    note: str | None,
    by: str,
    workflow: str | None = None,
    visit: int | None = None,
) -> dict[str, Any]:
    """Record the answer to a pending decision, once (see the module docstring);
    ``visit``: the question it answers (refused when the decision was asked again since).

    The same code path as ``phasegate answer``: the answer is journaled under
    the item's lock before anything acts on it; a run waiting on it
    (``phasegate run --wait``) or the next run takes it.
    """
    from phasegate.engine.answers import answer_decision, check_note_length

    check_note_length(item, decision_id, choice, note or "")  # before the item is looked up
    found = _work_item(root, item, workflow)
    if not choice.strip():
        _missing_choice(found, item, decision_id)
    given = answer_decision(found, decision_id, choice, note or "", by, visit)  # type: ignore[arg-type]
    recorded = next((d for d in decisions(root, item, workflow) if d["id"] == decision_id), None)
    return recorded if recorded is not None else Redactor().data(given)


def _missing_choice(found: Any, item: str, decision_id: str) -> None:
    """An answer without a choice (a form sent without one): refused naming the decision and
    its choices, when the item has that decision (else the answer says what is wrong)."""
    record = next((r for r in found.load().decisions.values() if r.get("id") == decision_id), None)
    if record is None:
        return
    choices = ", ".join(record.get("choices") or {})
    raise BadInputError(
        f"choice is missing: answer decision {decision_id!r} of {item!r} with one of its "
        f"choices (choices: {choices}); nothing was recorded"
    )
