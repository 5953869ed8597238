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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

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
            lines.append(
                f"- [{issue.get('severity')}] {str(issue.get('description')).strip()}{where}"
            )
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
        """The state file must be readable; keys a person added to it are kept."""
        try:
            raw = self.state_path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StateCorruptError(f"state file {self.state_path} cannot be read: {exc}") from None
        document = parse_state(raw, self.state_path, self.fmt)
        _validate_meta(document, self.state_path)
        _check_names(document, self.state_path, self.item.workflow)
        self._written = raw
        extra = {k: v for k, v in document.items() if k not in META_KEYS}
        phases = document.get("phases") or {}
        by_phase = {
            name: {k: v for k, v in record.items() if k not in PHASE_KEYS}
            for name, record in phases.items()
            if isinstance(record, dict)
        }
        by_phase = {name: keys for name, keys in by_phase.items() if keys}
        if extra or by_phase or state.data.get("meta_extra"):
            state.data["meta_extra"] = {"top": extra, "phases": by_phase}

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
                "completed": found.get("completed")
                if found.get("outcome") and not found.get("blocked")
                else None,
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
        extra = state.data.get("meta_extra") or {}
        phases = self._phases(state)
        for name, keys in (extra.get("phases") or {}).items():
            if name in phases:
                phases[name] = {**phases[name], **keys}
        return {
            **(extra.get("top") or {}),
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
            "phases": phases,
            "summary": state.get("summary"),
            "usage": camel_usage(state.get("usage")),
        }

    def render(self, state: EngineState) -> None:
        document = self.item.redactor.data(self.document(state))
        payload = _lines_json(document) if self.fmt == "json" else dump_state(document, "yaml")
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

    def status_fields(self, state: EngineState) -> dict[str, Any]:
        return {"stateFile": str(self.state_path)}

    def completed(self, state: EngineState) -> None:
        """Seed 000 TD5: the review history is deleted when the feature finishes."""
        self.render(state)
        remove_file(self.history_path)


#: The fields of ``.meta.json`` phasegate writes; any other key is a person's and is kept.
META_KEYS = frozenset(
    {
        "id",
        "workflow",
        "description",
        "mode",
        "status",
        "created",
        "completed",
        "branch",
        "worktree",
        "baseCommit",
        "currentPhase",
        "phases",
        "summary",
        "usage",
    }
)
PHASE_KEYS = frozenset(
    {
        "started",
        "completed",
        "iterations",
        "reviewerNotes",
        "verified",
        "review",
        "summary",
        "usage",
        "skipped",
    }
)


class _PhaseFields(BaseModel):
    model_config = ConfigDict(extra="allow")

    started: str | None = None
    completed: str | None = None
    iterations: int = 0
    reviewerNotes: list[str] = []
    verified: bool | None = None


class _MetaFields(BaseModel):
    model_config = ConfigDict(extra="allow")

    mode: str | None = None
    status: Literal["active", "completed"] = "active"
    currentPhase: str | None = None
    phases: dict[str, _PhaseFields] = {}


def _validate_meta(document: dict[str, Any], path: Path) -> None:
    """Seed 000's fields have their types (a person may edit the file): else exit 5."""
    try:
        fields = _MetaFields.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise StateCorruptError(
            f"state file {path} is invalid at {field}: {error['msg']}; it was left untouched"
        ) from None
    if "mode" in document and not isinstance(fields.mode, str):
        raise StateCorruptError(
            f"state file {path} is invalid at mode: it must be a mode's name; it was left untouched"
        )


def _check_names(document: Mapping[str, Any], path: Path, workflow: Any) -> None:
    """A mode or phase the workflow does not have (a hand edit gone wrong) is corrupt: exit 5
    before anything is written, rather than overwritten by the next render."""
    where = f"state file {path}"
    mode = document.get("mode")
    if mode is not None and mode not in workflow.modes:
        raise StateCorruptError(
            f"{where}: unknown mode {mode!r} (modes of {workflow.name}: "
            f"{', '.join(workflow.modes)}); it was left untouched"
        )
    labels = workflow.label_names
    current = document.get("currentPhase")
    if current is not None and current not in labels:
        raise StateCorruptError(
            f"{where}: unknown currentPhase {current!r} (phases of {workflow.name}: "
            f"{', '.join(labels)}); it was left untouched"
        )
    for name in document.get("phases") or {}:
        if name not in labels:
            raise StateCorruptError(
                f"{where}: unknown phase {name!r} under phases (phases of {workflow.name}: "
                f"{', '.join(labels)}); it was left untouched"
            )


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
            inner = ",\n    ".join(
                f"{dumps(k)}: {dumps(v, ensure_ascii=False)}" for k, v in value.items()
            )
            lines.append(f"{dumps(key)}: {{\n    {inner}\n  }}")
        else:
            lines.append(f"{dumps(key)}: {dumps(value, ensure_ascii=False)}")
    return ("{\n  " + ",\n  ".join(lines) + "\n}\n").encode("utf-8")


class GenericView(StateView):
    """No files of its own: the engine state is the item's state."""

    name = "generic"
