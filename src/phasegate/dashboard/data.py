"""What the dashboard and ``phasegate logs`` read: the one adapter over the engine's files.

Every page, API endpoint and the ``logs`` command read work items only
through the functions below (pure functions, no web code), so a change in how
the engine stores its state changes this module alone. All results are
JSON-ready and redacted with the current environment's secrets.

Contract
--------

``list_items(root) -> list[dict]``
    One dict per work item of the repository: ``id``, ``workflow``, ``node``
    (the current phase or node, as a label), ``status``, ``iterations``
    (review iterations so far), ``calls``, ``tokens`` (in + out), ``costUsd``,
    ``nextCommand``; or ``id``, ``workflow``, ``error`` for an unreadable one.
``item_detail(root, item) -> dict``
    The list fields of one item plus ``description``, ``mode``, ``phases``,
    ``unresolvedConcerns``, ``usage`` and ``stateFile`` (what ``phasegate
    status ITEM --json`` prints, where the workflow has it).
``journal_events(root, item, offset=0) -> (events, new_offset)``
    The journal's complete events from byte ``offset`` on, and the offset to
    read from next. A torn last line (a write cut short) is not an event and
    is read again once complete; an offset past the end (the journal was
    replaced) reads from the start.
``artifacts(root, item) -> list[(name, path)]``
    The item folder's Markdown files (review history included), ``name``
    relative to the folder.
``decisions(root, item) -> list[dict]``
    The item's human decisions (gates), oldest first, each ``{id, item,
    question, choices: [str], files: [str], status: "pending" | "answered",
    asked_at, answer?: {choice, note, by, at}}``.
``answer(root, item, decision_id, choice, note, by) -> dict``
    Record the answer (persisted before anything acts on it) and return the
    decision. Raises :class:`BadInputError` for an unknown id or a choice that
    is not one of the canonical choices (the message lists them), and
    :class:`AlreadyAnsweredError` when it was answered already: two answers
    given at once are recorded once, and the other one gets that error.

Decisions are kept, for now, in a small store of their own (the section at the
end of this module, ``<item folder>/.decisions.json``), which
:func:`provisional_ask` fills; the engine's persisted gates replace it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import filelock

from phasegate.config import CONFIG_DIR, Config, load_config
from phasegate.errors import (
    AlreadyAnsweredError,
    BadInputError,
    PhasegateError,
    StateCorruptError,
    WorkflowError,
)
from phasegate.redact import Redactor
from phasegate.state.atomic import atomic_write_text
from phasegate.state.journal import Journal, utc_now

__all__ = [
    "answer",
    "artifacts",
    "decisions",
    "item_detail",
    "journal_events",
    "list_items",
    "provisional_ask",
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


_LOCATED: dict[tuple[Path, str], _Located] = {}


def _locate(root: Path, item: str) -> _Located:
    """Where ``item`` lives; remembered, because an open page asks several times a second."""
    known = _LOCATED.get((root, item))
    if known is not None and known.item_dir.is_dir():
        return known
    found = _find(root, item)
    _LOCATED[(root, item)] = found
    return found


def _find(root: Path, item: str) -> _Located:
    from phasegate.change.handle import open_change
    from phasegate.engine.workitem import locate_item, validate_item_name

    validate_item_name(item)
    config = load_config(root)
    registry = _registry(root)
    try:
        change = open_change(root, item, config, registry)
        if change.exists():
            handle = change.item
            return _Located(item, handle.workflow.name, handle.item_dir, handle.journal.path)
    except WorkflowError:
        pass  # no usable change workflow: the item is found among the others
    found = locate_item(root, item, registry, config)
    return _Located(item, found.workflow.name, found.item_dir, found.journal.path)


# -- items ----------------------------------------------------------------------


def _feature_row(status: dict[str, Any]) -> dict[str, Any]:
    progress = status.get("inProgress")
    if progress:
        node = (
            f"{progress['phase']} ({progress['stage']}, iteration "
            f"{progress['iteration']}/{progress['maxIterations']})"
        )
    else:
        node = status.get("currentPhase") or "-"
    usage = status.get("usage") or {}
    return {
        "id": status["id"],
        "workflow": status["workflow"],
        "node": node,
        "status": status["status"],
        "iterations": sum(int(p.get("iterations") or 0) for p in status.get("phases", [])),
        "calls": int(usage.get("calls", 0)),
        "tokens": int(usage.get("inputTokens", 0)) + int(usage.get("outputTokens", 0)),
        "costUsd": float(usage.get("costUsd", 0.0)),
        "nextCommand": status.get("nextCommand"),
    }


def _change_row(root: Path, change_id: str, config: Config, registry: Any) -> dict[str, Any]:
    from phasegate.change.handle import open_change
    from phasegate.change.phases import next_command

    state = open_change(root, change_id, config, registry).load()
    step: str | None = state.plan.step if state.plan and state.phase.value == "proposed" else None
    if state.impl and state.phase.value == "implementing":
        step = state.impl.step
    iterations = (state.plan.iteration if state.plan else 0) + (
        state.impl.iteration if state.impl else 0
    )
    return {
        "id": change_id,
        "workflow": "change",
        "node": f"{state.phase.value} ({step})" if step else state.phase.value,
        "status": state.phase.value,
        "iterations": iterations,
        "calls": state.usage.calls,
        "tokens": state.usage.input_tokens + state.usage.output_tokens,
        "costUsd": state.usage.cost_usd,
        "nextCommand": next_command(state.phase, change_id),
        "description": state.description,
        "mode": state.mode,
    }


def list_items(root: Path) -> list[dict[str, Any]]:
    """Every work item of the repository at ``root`` (see the module docstring)."""
    from phasegate.change.handle import list_changes
    from phasegate.engine.status import item_status
    from phasegate.engine.workitem import iter_items, locate_item

    config = load_config(root)
    registry = _registry(root)
    rows: list[dict[str, Any]] = []
    for workflow, name, _ in iter_items(root, registry, config):
        try:
            found = locate_item(root, name, registry, config, workflow)
            rows.append(_feature_row(item_status(found, found.load())))
        except PhasegateError as exc:
            rows.append({"id": name, "workflow": workflow, "error": str(exc)})
    try:
        changes = list_changes(root, config, registry)
    except WorkflowError:
        changes = []
    for change_id in changes:
        try:
            rows.append(_change_row(root, change_id, config, registry))
        except PhasegateError as exc:
            rows.append({"id": change_id, "workflow": "change", "error": str(exc)})
    return Redactor().data(rows)  # type: ignore[no-any-return]


def item_detail(root: Path, item: str) -> dict[str, Any]:
    """One work item in detail (see the module docstring); NotFoundError if there is none."""
    from phasegate.engine.status import item_status
    from phasegate.engine.workitem import locate_item

    where = _locate(root, item)
    config = load_config(root)
    registry = _registry(root)
    if where.workflow == "change":
        detail = _change_row(root, item, config, registry)
        detail.update(phases=[], unresolvedConcerns=[], stateFile=None)
    else:
        found = locate_item(root, item, registry, config, where.workflow)
        status = item_status(found, found.load())
        detail = {**status, **_feature_row(status)}
    return Redactor().data(detail)  # type: ignore[no-any-return]


# -- journal and artifacts ----------------------------------------------------------


def journal_events(root: Path, item: str, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The complete journal events from byte ``offset`` on, and the next offset."""
    return read_journal(_locate(root, item).journal_path, offset)


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
    redactor = Redactor()
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


def artifacts(root: Path, item: str) -> list[tuple[str, Path]]:
    """The Markdown files of the item's folder (its artifacts and review history)."""
    folder = _locate(root, item).item_dir
    found = sorted(
        (p.relative_to(folder).as_posix(), p)
        for p in folder.rglob("*.md")
        if p.is_file() and ".base" not in p.relative_to(folder).parts
    )
    # The review history (a dot file) after the artifacts.
    return sorted(found, key=lambda pair: (pair[0].startswith("."), pair[0]))


# -- decisions (provisional store) ------------------------------------------------------
#
# Until the engine persists its gates, decisions live in ``.decisions.json`` in
# the item's folder, written atomically under a lock of their own; answering
# also journals a ``decision`` event. The engine's gate API replaces this
# section; the functions keep their contract.

DECISIONS_FILE = ".decisions.json"


def _store(root: Path, item: str) -> tuple[Path, Path, Path]:
    """``(decisions file, its lock, the item's journal)``."""
    where = _locate(root, item)
    lock = root / CONFIG_DIR / "locks" / f"decisions--{where.workflow}--{item}.lock"
    return where.item_dir / DECISIONS_FILE, lock, where.journal_path


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return []
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateCorruptError(f"{path} is corrupt ({exc.__class__.__name__})") from None
    if not isinstance(data, list):
        raise StateCorruptError(f"{path} is not a list of decisions")
    return data


def _locked(lock: Path) -> filelock.FileLock:
    lock.parent.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(str(lock), timeout=30)


def decisions(root: Path, item: str) -> list[dict[str, Any]]:
    """The item's decisions, oldest first (see the module docstring)."""
    path, _, _ = _store(root, item)
    return Redactor().data(_read(path))  # type: ignore[no-any-return]


def provisional_ask(
    root: Path,
    item: str,
    decision_id: str,
    question: str,
    choices: list[str],
    files: list[str] | None = None,
) -> dict[str, Any]:
    """Record a pending decision (what the engine's gate does before it asks)."""
    if not choices:
        raise BadInputError(f"decision {decision_id!r} needs at least one choice")
    path, lock, journal = _store(root, item)
    redactor = Redactor()
    with _locked(lock):
        known = _read(path)
        if any(d["id"] == decision_id for d in known):
            raise BadInputError(f"work item {item!r} already has a decision {decision_id!r}")
        decision: dict[str, Any] = {
            "id": decision_id,
            "item": item,
            "question": redactor.text(question),
            "choices": list(choices),
            "files": list(files or []),
            "status": "pending",
            "asked_at": utc_now(),
        }
        atomic_write_text(path, json.dumps([*known, decision], indent=2) + "\n")
    Journal(journal, redactor).append(
        "decision.needed", id=decision_id, item=item, question=question, choices=list(choices)
    )
    return decision


def answer(
    root: Path, item: str, decision_id: str, choice: str, note: str | None, by: str
) -> dict[str, Any]:
    """Record the answer to a pending decision, once (see the module docstring)."""
    path, lock, journal = _store(root, item)
    redactor = Redactor()
    with _locked(lock):
        known = _read(path)
        decision = next((d for d in known if d["id"] == decision_id), None)
        if decision is None:
            pending = ", ".join(d["id"] for d in known if d["status"] == "pending") or "none"
            raise BadInputError(
                f"work item {item!r} has no decision {decision_id!r} (pending: {pending})"
            )
        if decision["status"] == "answered":
            given = decision["answer"]
            raise AlreadyAnsweredError(
                f"decision {decision_id!r} of {item!r} was already answered: "
                f"{given['choice']!r} by {given['by']} at {given['at']}"
            )
        if choice not in decision["choices"]:
            raise BadInputError(
                f"{choice!r} is not a choice of decision {decision_id!r} "
                f"(choices: {', '.join(decision['choices'])})"
            )
        decision["status"] = "answered"
        decision["answer"] = {
            "choice": choice,
            "note": redactor.text(note) if note else None,
            "by": by,
            "at": utc_now(),
        }
        atomic_write_text(path, json.dumps(known, indent=2) + "\n")
    Journal(journal, redactor).append(
        "decision", id=decision_id, item=item, answer=choice, by=by, note=note, sync_now=True
    )
    return redactor.data(decision)  # type: ignore[no-any-return]
