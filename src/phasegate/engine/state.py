"""The engine's own state of a work item: workflow-neutral, small, cheap to commit.

One JSON document per item (``.engine.json`` in its folder), read by people
and by ``phasegate status``; the workflow's own files (``.meta.json``,
``STATE.yaml``...) are rendered from it by a state view. It holds:

- ``at``: the top-level cursor (a node id; ``null`` before the first node);
- ``nodes``: per node path (``implement``, ``tasks[T3]/code``) the state of its
  current visit: stage, iteration, feedback, budget used, foreach items and
  their cursors, the review iterations of the visit, usage;
- ``decisions``: human gates, pending or answered;
- ``usage`` (total and per role), ``data`` (plug-ins' own values), and
  ``journal``: how far the journal had been applied when this was written.

What the item has finished with (completed nodes, the label history) moves to
the archive beside it (:mod:`phasegate.engine.state_archive`), and ``archive``
says how much of it goes with this file: the file committed at every step
holds only what may still change, so a commit costs the same whether the item
has 5 nodes or 200. Each node's JSON is encoded once per change and cached
(see :meth:`EngineState.encode`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from phasegate.engine.node_state import NodeState, add_usage, empty_usage
from phasegate.engine.state_archive import ArchivePlan, read_archive
from phasegate.engine.state_encoding import (
    CHECK_ENV,
    FORMAT,
    StateEncoder,
    encode_value,
    parse_state,
)
from phasegate.errors import StateCorruptError, os_reason
from phasegate.redact import Redactor

ENGINE_FILE = ".engine.json"


_TOP_KEYS = (
    "format",
    "item",
    "workflow",
    "mode",
    "description",
    "status",
    "created",
    "updated",
    "completed",
    "base_commit",
    "worktree",
    "branch",
    "at",
    "summary",
    "history",
    "brief",
    "decisions",
    "usage",
    "usage_by_role",
    "data",
    "journal",
    "archive",
)
_TOP_SET = frozenset(_TOP_KEYS)


class EngineState:
    """Everything the engine records about one work item."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.d = data
        raw_nodes = data.pop("nodes", None) or {}
        self.nodes: dict[str, NodeState] = {k: NodeState(v) for k, v in raw_nodes.items()}
        #: Node paths whose JSON changed since the last encode.
        self._dirty: set[str] = set(self.nodes)
        self._encoder = StateEncoder()
        #: A counter per node path, bumped whenever it may have changed (views cache by it).
        self.versions: dict[str, int] = {}
        #: Per consumer of :meth:`take_changed`: the node paths changed since it last asked.
        self._watchers: dict[str, set[str]] = {}
        #: Values derived from this state and kept up to date from what changed (see
        #: :mod:`phasegate.engine.brief`); never written.
        self.derived: dict[str, Any] = {}
        #: Node paths written to the state file; the others' state is in the archive.
        self._live: set[str] = set(self.nodes)
        #: Node paths with a line in the archive (a live node may have one: it changed
        #: after it was archived).
        self._in_archive: set[str] = set()
        #: Node paths changed since the last :meth:`settle` (not finished with yet).
        self._changed: set[str] = set()
        #: Archived node paths forgotten since the last :meth:`settle`.
        self._tombstones: list[str] = []
        #: The history list archived from, how many of its entries the archive holds,
        #: and how many there were at the last :meth:`settle`.
        history = data.get("history")
        self._history_ref: list[Any] | None = history if isinstance(history, list) else None
        self._history_archived = 0
        self._history_seen = len(history) if isinstance(history, list) else 0
        #: Archived nodes' JSON when encodings are checked (see :meth:`encode`).
        self._archived_text: dict[str, str] = {}

    @classmethod
    def new(
        cls,
        *,
        item: str,
        workflow: str,
        mode: str,
        description: str,
        created: str,
        base_commit: str | None,
    ) -> EngineState:
        return cls(
            {
                "format": FORMAT,
                "item": item,
                "workflow": workflow,
                "mode": mode,
                "description": description,
                "status": "active",
                "created": created,
                "updated": created,
                "completed": None,
                "base_commit": base_commit,
                "worktree": None,
                "branch": None,
                "at": None,
                "summary": None,
                "decisions": {},
                "usage": empty_usage(),
                "usage_by_role": {},
                "data": {},
                "journal": {"offset": 0, "lines": 0},
                "nodes": {},
            }
        )

    # -- top-level fields ------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        return self.d[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.d[key] = value

    def get(self, key: str, default: Any = None) -> Any:
        return self.d.get(key, default)

    @property
    def item(self) -> str:
        return str(self.d["item"])

    @property
    def mode(self) -> str:
        return str(self.d["mode"])

    @property
    def status(self) -> str:
        return str(self.d.get("status", "active"))

    @status.setter
    def status(self, value: str) -> None:
        self.d["status"] = value

    @property
    def at(self) -> str | None:
        value = self.d.get("at")
        return str(value) if value is not None else None

    @at.setter
    def at(self, value: str | None) -> None:
        self.d["at"] = value

    @property
    def worktree(self) -> str | None:
        return self.d.get("worktree")

    @property
    def branch(self) -> str | None:
        return self.d.get("branch")

    @property
    def base_commit(self) -> str | None:
        return self.d.get("base_commit")

    @property
    def decisions(self) -> dict[str, dict[str, Any]]:
        return self.d.setdefault("decisions", {})  # type: ignore[no-any-return]

    @property
    def data(self) -> dict[str, Any]:
        return self.d.setdefault("data", {})  # type: ignore[no-any-return]

    @property
    def journal_offset(self) -> int:
        return int((self.d.get("journal") or {}).get("offset", 0))

    @property
    def journal_lines(self) -> int:
        return int((self.d.get("journal") or {}).get("lines", 0))

    def set_journal_position(self, offset: int, lines: int) -> None:
        self.d["journal"] = {"offset": offset, "lines": lines}

    @property
    def archive_bytes(self) -> int:
        """How many bytes of the archive go with this state."""
        return int((self.d.get("archive") or {}).get("bytes", 0))

    # -- nodes ----------------------------------------------------------------------

    def node(self, path: str) -> NodeState:
        """The state of ``path`` for changing it (created empty on first use)."""
        found = self.nodes.get(path)
        if found is None:
            found = NodeState()
            self.nodes[path] = found
        self._dirty.add(path)
        self._mark(path)
        return found

    def peek(self, path: str) -> NodeState | None:
        """The state of ``path`` for reading only (``None`` if it never ran)."""
        return self.nodes.get(path)

    def drop(self, prefix: str) -> None:
        """Forget the nodes at and under ``prefix`` (a foreach item restarted)."""
        for path in [p for p in self.nodes if p == prefix or p.startswith(prefix + "/")]:
            del self.nodes[path]
            self._encoder.forget(path)
            self._dirty.discard(path)
            self._live.discard(path)
            if path in self._in_archive:
                self._in_archive.discard(path)
                self._tombstones.append(path)
            self._mark(path)

    def touched(self, path: str) -> None:
        """Mark ``path`` changed (after changing a state got with :meth:`peek`)."""
        self._dirty.add(path)
        self._mark(path)

    def _mark(self, path: str) -> None:
        self.versions[path] = self.versions.get(path, 0) + 1
        self._changed.add(path)
        if path in self.nodes:
            self._live.add(path)  # written to the state file until finished with again
        for changed in self._watchers.values():
            changed.add(path)

    def take_changed(self, consumer: str) -> set[str]:
        """The node paths changed (or removed) since ``consumer`` last asked (all, at first).

        What is derived from a few nodes (the brief, a view's sections) is then
        brought up to date without looking at the others.
        """
        found = self._watchers.get(consumer)
        self._watchers[consumer] = set()
        return set(self.nodes) if found is None else found

    def touched_under(self, prefix: str) -> None:
        """Mark every node under ``prefix`` changed (a parallel item resumes: what it holds
        may change after commits other items made meanwhile)."""
        for path in self.nodes:
            if path.startswith(prefix):
                self.touched(path)

    def paths(self) -> Iterator[str]:
        return iter(self.nodes)

    def add_usage(self, path: str, role: str, result_usage: Mapping[str, Any]) -> None:
        """Count one agent call's spend on the node, the role and the item."""
        values = (
            int(result_usage.get("input_tokens", 0)),
            int(result_usage.get("output_tokens", 0)),
            result_usage.get("cost_usd"),
            int(result_usage.get("cache_read_tokens", 0)),
            int(result_usage.get("cache_write_tokens", 0)),
        )
        add_usage(self.node(path).usage(), *values)
        # A total written as null (a hand edit: the state's check lets it pass) is none yet.
        if self.d.get("usage") is None:
            self.d["usage"] = empty_usage()
        add_usage(self.d["usage"], *values)
        if self.d.get("usage_by_role") is None:
            self.d["usage_by_role"] = {}
        by_role = self.d["usage_by_role"]
        if by_role.get(role) is None:
            by_role[role] = empty_usage()
        add_usage(by_role[role], *values)

    # -- encoding -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A plain copy of the whole state, archived parts included (for tests and views)."""
        out = dict(self.d)
        out.pop("archive", None)
        out["nodes"] = {k: v.d for k, v in self.nodes.items()}
        return out

    # -- the archive ----------------------------------------------------------------

    def settle(self, redactor: Redactor) -> ArchivePlan:
        """What to append to the archive now: completed nodes not changed since the last
        call, history entries older than it, and forgotten nodes. Nothing changes here:
        :meth:`settled` applies the plan once the archive holds it."""
        plan = ArchivePlan()
        lines = [f'{{"node": {json.dumps(p)}, "dropped": true}}' for p in self._tombstones]
        history = self.d.get("history")
        entries: list[Any] = history if isinstance(history, list) else []
        archived = self._history_archived
        if entries is not self._history_ref or len(entries) < archived:
            # The list was replaced (an adopted item): archived again from the start.
            if archived:
                lines.append('{"history": null}')
            archived, seen = 0, 0
        else:
            seen = self._history_seen
        for entry in entries[archived:seen]:
            lines.append(f'{{"history": {encode_value(entry, redactor)}}}')
        plan.history = max(archived, seen)
        changed = self._changed
        checking = bool(os.environ.get(CHECK_ENV))
        for path in sorted(self._live):
            node = self.nodes[path].d
            if path in changed or not node.get("completed"):
                continue
            text = encode_value(node, redactor)
            lines.append(f'{{"node": {json.dumps(path)}, "state": {text}}}')
            plan.nodes.append(path)
            if checking:
                plan.texts[path] = text
        if lines:
            plan.payload = ("\n".join(lines) + "\n").encode("utf-8")
        self._tombstones = []
        self._changed = set()
        return plan

    def settled(self, plan: ArchivePlan, size: int) -> None:
        """The archive holds ``plan`` and is ``size`` bytes long: what it holds leaves the
        state file."""
        history = self.d.get("history")
        self._history_ref = history if isinstance(history, list) else None
        self._history_archived = plan.history
        self._history_seen = len(history) if isinstance(history, list) else 0
        for path in plan.nodes:
            if path not in self.nodes:  # forgotten meanwhile: its line must be undone
                self._tombstones.append(path)
                continue
            self._in_archive.add(path)
            if path in self._changed:  # changed meanwhile: the state file has it still
                continue
            self._live.discard(path)
            self._encoder.forget(path)
            self._dirty.discard(path)
        self._archived_text.update(plan.texts)
        if size or "archive" in self.d:
            self.d["archive"] = {"bytes": size}

    # -- encoding -------------------------------------------------------------------

    def encode(self, redactor: Redactor) -> bytes:
        """The state file's bytes: one top-level key per line, one live node per line
        (archived nodes and history entries are not in it).

        Only what changed since the last call is redacted and encoded again
        (see :mod:`phasegate.engine.state_encoding`).
        """
        d = self.d
        top = []
        known = 0
        for key in _TOP_KEYS:
            if key in d:
                known += 1
                value = d[key]
                if key == "history" and self._history_archived and isinstance(value, list):
                    value = value[self._history_archived :]
                    if not value:
                        continue
                top.append((key, value))
        if known != len(d):
            top += [(k, v) for k, v in d.items() if k not in _TOP_SET]
        # By path: the same state gives the same file, whatever order its nodes ran in.
        nodes = {path: self.nodes[path].d for path in sorted(self._live)}
        payload = self._encoder.encode(top, nodes, self._dirty, redactor)
        self._dirty.clear()
        if self._archived_text and os.environ.get(CHECK_ENV):
            self._check_archived(redactor)
        return payload

    def _check_archived(self, redactor: Redactor) -> None:
        for path, text in self._archived_text.items():
            node = self.nodes.get(path)
            if path in self._live or node is None:
                continue
            if encode_value(node.d, redactor) != text:
                raise RuntimeError(
                    f"node {path!r} was changed after it was archived, without "
                    "EngineState.node() or touched(): the archive no longer holds it"
                )

    @classmethod
    def decode(cls, raw: bytes, path: Path) -> EngineState:
        data = parse_state(raw, path)
        size = (data.get("archive") or {}).get("bytes", 0)
        if not size:
            return cls(data)
        found = read_archive(path, size)
        live = data.get("nodes") or {}
        data["nodes"] = {**found.nodes, **live}
        history = data.get("history")
        if found.history or isinstance(history, list):
            data["history"] = [*found.history, *(history if isinstance(history, list) else [])]
        state = cls(data)
        state._live = set(live)
        state._in_archive = set(found.nodes)
        state._history_archived = len(found.history)
        return state


def read_state_file(path: Path) -> EngineState:
    """The engine state in the state file ``path``, with what its archive holds."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StateCorruptError(f"state file {path} cannot be read: {os_reason(exc)}") from None
    return EngineState.decode(raw, path)
