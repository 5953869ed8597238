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

Each node's JSON is encoded once per change and cached, so a commit costs the
same whether the item has 5 nodes or 200 (see :meth:`EngineState.encode`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from phasegate.errors import StateCorruptError
from phasegate.redact import Redactor

FORMAT = 1
ENGINE_FILE = ".engine.json"


def _usage() -> dict[str, Any]:
    return {
        "calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "cost_usd": 0.0,
    }


def add_usage(
    usage: dict[str, Any],
    input_tokens: int,
    output_tokens: int,
    cost: float | None,
    cache_read: int = 0,
    cache_write: int = 0,
) -> None:
    """Add one agent call's spend to ``usage`` (a dict of :func:`_usage`'s shape)."""
    usage["calls"] = int(usage.get("calls", 0)) + 1
    usage["input_tokens"] = int(usage.get("input_tokens", 0)) + input_tokens
    usage["output_tokens"] = int(usage.get("output_tokens", 0)) + output_tokens
    usage["cache_read_tokens"] = int(usage.get("cache_read_tokens", 0)) + cache_read
    usage["cache_write_tokens"] = int(usage.get("cache_write_tokens", 0)) + cache_write
    usage["cost_usd"] = round(float(usage.get("cost_usd", 0.0)) + (cost or 0.0), 6)


class NodeState:
    """The state of one visit of one node (a view over a plain dict, encoded as is)."""

    __slots__ = ("d",)

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        self.d: dict[str, Any] = data if data is not None else {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.d.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.d[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.d[key] = value

    # The fields every node kind uses; others are set through item access.
    @property
    def visit(self) -> int:
        return int(self.d.get("visit", 0))

    @property
    def stage(self) -> str:
        return str(self.d.get("stage", ""))

    @stage.setter
    def stage(self, value: str) -> None:
        self.d["stage"] = value

    @property
    def iteration(self) -> int:
        return int(self.d.get("iteration", 1))

    @iteration.setter
    def iteration(self, value: int) -> None:
        self.d["iteration"] = value

    @property
    def completed(self) -> str | None:
        return self.d.get("completed")

    @property
    def started(self) -> str | None:
        return self.d.get("started")

    @property
    def outcome(self) -> str | None:
        return self.d.get("outcome")

    def records(self, key: str) -> list[Any]:
        """The list at ``key`` (created empty on first use)."""
        found = self.d.get(key)
        if not isinstance(found, list):
            found = []
            self.d[key] = found
        return found

    def mapping(self, key: str) -> dict[str, Any]:
        """The mapping at ``key`` (created empty on first use)."""
        found = self.d.get(key)
        if not isinstance(found, dict):
            found = {}
            self.d[key] = found
        return found

    def usage(self) -> dict[str, Any]:
        found = self.d.get("usage")
        if not isinstance(found, dict):
            found = _usage()
            self.d["usage"] = found
        return found


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
)


class EngineState:
    """Everything the engine records about one work item."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.d = data
        raw_nodes = data.pop("nodes", None) or {}
        self.nodes: dict[str, NodeState] = {k: NodeState(v) for k, v in raw_nodes.items()}
        #: Node paths whose JSON changed since the last encode.
        self._dirty: set[str] = set(self.nodes)
        self._encoded: dict[str, str] = {}
        #: A counter per node path, bumped whenever it may have changed (views cache by it).
        self.versions: dict[str, int] = {}

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
                "usage": _usage(),
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

    # -- nodes ----------------------------------------------------------------------

    def node(self, path: str) -> NodeState:
        """The state of ``path`` for changing it (created empty on first use)."""
        found = self.nodes.get(path)
        if found is None:
            found = NodeState()
            self.nodes[path] = found
        self._dirty.add(path)
        self.versions[path] = self.versions.get(path, 0) + 1
        return found

    def peek(self, path: str) -> NodeState | None:
        """The state of ``path`` for reading only (``None`` if it never ran)."""
        return self.nodes.get(path)

    def drop(self, prefix: str) -> None:
        """Forget the nodes at and under ``prefix`` (a foreach item restarted)."""
        for path in [p for p in self.nodes if p == prefix or p.startswith(prefix + "/")]:
            del self.nodes[path]
            self._encoded.pop(path, None)
            self._dirty.discard(path)

    def touched(self, path: str) -> None:
        """Mark ``path`` changed (after changing a state got with :meth:`peek`)."""
        self._dirty.add(path)
        self.versions[path] = self.versions.get(path, 0) + 1

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
        add_usage(self.d.setdefault("usage", _usage()), *values)
        by_role = self.d.setdefault("usage_by_role", {})
        add_usage(by_role.setdefault(role, _usage()), *values)

    # -- encoding -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A plain copy of the whole document (for tests and views)."""
        out = dict(self.d)
        out["nodes"] = {k: v.d for k, v in self.nodes.items()}
        return out

    def encode(self, redactor: Redactor) -> bytes:
        """The document as bytes: one top-level key per line, one node per line.

        Only nodes changed since the last call are redacted and encoded again
        (with the C JSON encoder); the others reuse their cached text.
        """
        dumps = json.dumps
        for path in self._dirty:
            state = self.nodes.get(path)
            if state is not None:
                self._encoded[path] = dumps(redactor.data(state.d), ensure_ascii=False)
        self._dirty.clear()
        lines = []
        top = redactor.data({k: self.d[k] for k in _TOP_KEYS if k in self.d})
        extra = {k: v for k, v in self.d.items() if k not in _TOP_KEYS}
        for key, value in (*top.items(), *redactor.data(extra).items()):
            lines.append(f"{dumps(key)}: {dumps(value, ensure_ascii=False)}")
        # By path: the same state gives the same file, whatever order its nodes ran in.
        node_lines = ",\n  ".join(f"{dumps(p)}: {self._encoded[p]}" for p in sorted(self.nodes))
        lines.append('"nodes": {' + (f"\n  {node_lines}\n" if node_lines else "") + "}")
        return ("{\n " + ",\n ".join(lines) + "\n}\n").encode("utf-8")

    @classmethod
    def decode(cls, raw: bytes, path: Path) -> EngineState:
        hint = "it was left untouched; restore it (e.g. from git) or fix it by hand"
        if not raw.strip():
            raise StateCorruptError(f"state file {path} is empty; {hint}")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            raise StateCorruptError(f"state file {path} is corrupt ({reason}); {hint}") from None
        if not isinstance(data, dict):
            raise StateCorruptError(f"state file {path} does not hold an object; {hint}")
        problem = _shape_problem(data)
        if problem:
            raise StateCorruptError(f"state file {path} is invalid: {problem}; {hint}")
        return cls(data)


_TYPES: dict[str, type | tuple[type, ...]] = {
    "item": str,
    "workflow": str,
    "mode": str,
    "status": str,
    "at": (str, type(None)),
    "decisions": dict,
    "data": dict,
    "nodes": dict,
}


def _shape_problem(data: dict[str, Any]) -> str | None:
    for key, expected in _TYPES.items():
        if key not in data:
            if key in ("item", "workflow", "mode"):
                return f"field {key!r} is missing"
            continue
        if not isinstance(data[key], expected):
            return f"field {key!r} has the wrong type ({type(data[key]).__name__})"
    if data.get("format", FORMAT) != FORMAT:
        return f"format {data.get('format')!r} is not one this phasegate reads ({FORMAT})"
    for path, node in (data.get("nodes") or {}).items():
        if not isinstance(node, dict):
            return f"nodes.{path} is not an object"
    return None
