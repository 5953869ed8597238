"""The ``feature`` state view: seed 000's ``.meta.json`` and ``.review-history.md``.

``.meta.json`` holds the seed's fields (``phases`` with ``started``,
``completed``, ``iterations``, ``reviewerNotes``, ``verified``; ``currentPhase``,
``mode``, ``status``, ``worktree``), plus the review's closing summary and the
tokens and cost of each phase. ``.review-history.md`` lists every review
iteration in seed 000's interface 4 format and is deleted when the item
finishes (TD5). Both are rendered from the engine state: each phase's part is
rendered again only when that phase changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from phasegate.engine.plugin_api import StateView
from phasegate.engine.state import EngineState
from phasegate.engine.status import camel_usage
from phasegate.errors import StateCorruptError
from phasegate.state.atomic import atomic_write_bytes, remove_file
from phasegate.state.store import dump_state, parse_state
from phasegate.workflow.model import AgentNode, EndNode


def verdict_label(record: Mapping[str, Any]) -> str:
    if record.get("source") == "checks":
        return "checks failed (not approved)"
    if record.get("unclear"):
        return "unclear (not approved)"
    return "approved" if record.get("approved") else "not approved"


def render_iteration(record: Mapping[str, Any]) -> list[str]:
    """One iteration of ``.review-history.md`` (seed 000, interface 4)."""
    lines = [
        f"### Iteration {record.get('iteration')} - {record.get('timestamp')}",
        "",
        f"**Verdict:** {verdict_label(record)} ({record.get('source')})",
        "",
        "**Reviewer Feedback:**",
        str(record.get("summary") or "").strip() or "(no summary)",
        "",
        "**Issues:**",
    ]
    issues = record.get("issues") or []
    if issues:
        for issue in issues:
            where = f" (at {issue['location']})" if issue.get("location") else ""
            lines.append(f"- [{issue.get('severity')}] {str(issue.get('description')).strip()}{where}")
    else:
        lines.append("- none")
    lines += [
        "",
        "**Changes Made:**",
        str(record.get("changes") or "").strip() or "(not reported)",
        "",
        "---",
        "",
    ]
    return lines


class FeatureView(StateView):
    """``.meta.json`` + ``.review-history.md`` (file names configurable)."""

    name = "feature"

    def __init__(self, item: Any, settings: Mapping[str, Any]) -> None:
        super().__init__(item, settings)
        self.state_file = str(settings.get("state_file", ".meta.json"))
        self.history_file = str(settings.get("history_file", ".review-history.md"))
        fmt = str(settings.get("state_format", "json"))
        self.fmt: Any = "yaml" if fmt == "yaml" else "json"
        self._phase_cache: dict[str, tuple[int, dict[str, Any]]] = {}
        self._section_cache: dict[str, tuple[int, str]] = {}
        self._written: bytes | None = None
        self._history_key: tuple[Any, ...] | None = None

    @property
    def state_path(self) -> Path:
        return self.item.item_dir / self.state_file

    @property
    def history_path(self) -> Path:
        return self.item.item_dir / self.history_file

    @classmethod
    def file_names(cls, settings: Mapping[str, Any]) -> list[str]:
        return [
            str(settings.get("state_file", ".meta.json")),
            str(settings.get("history_file", ".review-history.md")),
        ]

    def check(self, state: EngineState) -> None:
        try:
            raw = self.state_path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StateCorruptError(f"state file {self.state_path} cannot be read: {exc}") from None
        parse_state(raw, self.state_path, self.fmt)
        self._written = raw

    # -- rendering ----------------------------------------------------------------------

    def _phases(self, state: EngineState) -> dict[str, Any]:
        workflow = self.item.workflow
        phases: dict[str, Any] = {}
        for node in workflow.nodes:
            if isinstance(node, EndNode):
                continue
            found = state.peek(node.id)
            if found is None:
                continue
            version = state.versions.get(node.id, -1)
            cached = self._phase_cache.get(node.id)
            if cached is not None and cached[0] == version and version >= 0:
                phases[node.label or node.id] = cached[1]
                continue
            record = {
                "started": found.get("started"),
                "completed": found.get("completed") if found.get("outcome") else None,
                "iterations": found.iteration if found.get("started") else 0,
                "reviewerNotes": list(found.get("notes") or []),
                "verified": found.get("verified"),
                "review": found.get("review"),
                "summary": found.get("summary"),
                "usage": camel_usage(found.get("usage")),
            }
            if found.get("skipped"):
                record["skipped"] = True
            self._phase_cache[node.id] = (version, record)
            phases[node.label or node.id] = record
        return phases

    def document(self, state: EngineState) -> dict[str, Any]:
        from phasegate.engine.status import _current_phase

        workflow = self.item.workflow
        return {
            "id": state.item,
            "workflow": workflow.name,
            "description": state.get("description", ""),
            "mode": state.mode,
            "status": "completed" if state.status == "completed" else "active",
            "created": state.get("created"),
            "completed": state.get("completed"),
            "branch": state.get("branch"),
            "worktree": state.worktree,
            "baseCommit": state.base_commit,
            "currentPhase": _current_phase(workflow, state),
            "phases": self._phases(state),
            "summary": state.get("summary"),
            "usage": camel_usage(state.get("usage")),
        }

    def render(self, state: EngineState) -> None:
        document = self.item.redactor.data(self.document(state))
        if self.fmt == "json":
            payload = _lines_json(document)
        else:
            payload = dump_state(document, "yaml")
        if payload != self._written:
            # Derived from the engine state: a run writes it again, so no fsync.
            atomic_write_bytes(self.state_path, payload, durable=False)
            self._written = payload
        if state.status != "completed":
            self._render_history(state)

    def _render_history(self, state: EngineState) -> None:
        workflow = self.item.workflow
        visited: list[tuple[str, str, str]] = []
        for path, node in workflow.walk():
            if not isinstance(node, AgentNode):
                continue
            for runtime in _runtime_paths(state, path):
                found = state.peek(runtime)
                if found is not None and found.get("iterations"):
                    visited.append((str(found.get("entered") or ""), runtime, path))
        key = tuple((p, state.versions.get(p, -1)) for _, p, _ in visited)
        if key == self._history_key:
            return
        self._history_key = key
        if not visited:
            return
        visited.sort()
        lines = [f"# Review history: {state.item}", ""]
        text = "\n".join(lines) + "\n"
        for _, runtime, path in visited:
            version = state.versions.get(runtime, -1)
            cached = self._section_cache.get(runtime)
            if cached is None or cached[0] != version:
                found = state.peek(runtime)
                assert found is not None
                section = [f"## Phase: {workflow.label_of(path)}", ""]
                for record in found.get("iterations") or []:
                    section += render_iteration(record)
                cached = (version, "\n".join(section) + "\n")
                self._section_cache[runtime] = cached
            text += cached[1]
        data = self.item.redactor.text(text).encode("utf-8")
        try:
            if self.history_path.read_bytes() == data:
                return
        except FileNotFoundError:
            pass
        atomic_write_bytes(self.history_path, data, durable=False)

    def completed(self, state: EngineState) -> None:
        """Seed 000 TD5: the review history is deleted when the feature finishes."""
        self.render(state)
        remove_file(self.history_path)


def _runtime_paths(state: EngineState, definition: str) -> list[str]:
    if "/" not in definition:
        return [definition]
    from phasegate.engine.run import definition_path

    return [p for p in state.paths() if definition_path(p) == definition]


def _lines_json(document: Mapping[str, Any]) -> bytes:
    """JSON a person can read: one top-level key per line, one phase per line."""
    dumps = json.dumps
    lines = []
    for key, value in document.items():
        if key == "phases" and isinstance(value, dict) and value:
            inner = ",\n    ".join(f"{dumps(k)}: {dumps(v, ensure_ascii=False)}" for k, v in value.items())
            lines.append(f'{dumps(key)}: {{\n    {inner}\n  }}')
        else:
            lines.append(f"{dumps(key)}: {dumps(value, ensure_ascii=False)}")
    return ("{\n  " + ",\n  ".join(lines) + "\n}\n").encode("utf-8")


class GenericView(StateView):
    """No files of its own: the engine state is the item's state."""

    name = "generic"
