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
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from phasegate.engine.plugin_api import StateView
from phasegate.engine.state import EngineState
from phasegate.engine.status import camel_usage
from phasegate.errors import StateCorruptError, StorageError, is_storage_error
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
        self._listed = {n.id for n in self.item.workflow.nodes if not isinstance(n, EndNode)}
        self._phases_state: EngineState | None = None
        self._records: dict[str, dict[str, Any]] = {}
        self._phase_map: dict[str, Any] | None = None
        #: Phase name -> (its record, its redacted ``"name": {...}`` line in the state file).
        self._phase_lines: dict[str, tuple[dict[str, Any], str]] = {}
        #: The phases mapping last written, and the lines of its phases joined.
        self._block: tuple[Any, str] = (None, "")
        self._written: bytes | None = None
        self._top: tuple[str, dict[str, Any]] | None = None
        #: Runtime node path -> (when it was entered, its redacted section of the history).
        self._sections: dict[str, tuple[str, str]] = {}
        self._history_state: EngineState | None = None
        self._iterations: dict[int, tuple[Mapping[str, Any], str]] = {}
        self._order: list[str] = []
        #: Whether the history file holds what the sections say (else it is compared first).
        self._history_synced = False

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
        """Phase name -> its record; only the records of nodes that changed are built again.

        The mapping returned is kept for the next call: callers must not change it.
        """
        workflow = self.item.workflow
        if state is not self._phases_state:
            self._phases_state = state
            self._records = {}
            changed = set(state.paths())
            state.take_changed(_PHASES)
        else:
            changed = state.take_changed(_PHASES)
        listed = [c for c in changed if c in self._listed]
        for node_id in listed:
            found = state.peek(node_id)
            if found is None:
                self._records.pop(node_id, None)
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
            self._records[node_id] = record
        if listed or self._phase_map is None:
            records = self._records
            self._phase_map = {
                node.label or node.id: records[node.id]
                for node in workflow.nodes
                if node.id in records
            }
        return self._phase_map

    def document(self, state: EngineState) -> dict[str, Any]:
        from phasegate.engine.brief import Progress

        workflow = self.item.workflow
        extra = state.data.get("meta_extra") or {}
        phases = self._phases(state)
        if extra.get("phases"):
            phases = dict(phases)
            for name, keys in extra["phases"].items():
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
            "currentPhase": Progress.of(workflow, state).current_phase(state),
            "phases": phases,
            "summary": state.get("summary"),
            "usage": camel_usage(state.get("usage")),
        }

    def render(self, state: EngineState) -> None:
        document = self.document(state)
        if self.fmt == "json":
            payload = self._json(document)
        else:
            payload = dump_state(self.item.redactor.data(document), "yaml")
        if payload != self._written:
            # Derived from the engine state: a run writes it again, so no fsync.
            atomic_write_bytes(self.state_path, payload, durable=False)
            self._written = payload
        if state.status != "completed":
            self._render_history(state)

    def _json(self, document: dict[str, Any]) -> bytes:
        """``_lines_json`` of the redacted document; a phase unchanged since is not redacted
        and encoded again (its record is the very same object, see :meth:`_phases`)."""
        redactor = self.item.redactor
        top = {k: (None if k == "phases" else v) for k, v in document.items()}
        phases = document.get("phases") or {}
        if phases is not self._block[0]:
            lines = []
            for name, record in phases.items():
                cached = self._phase_lines.get(name)
                if cached is None or cached[0] is not record:
                    text = json.dumps(redactor.data(record), ensure_ascii=False)
                    cached = (record, f"{json.dumps(name)}: {text}")
                    self._phase_lines[name] = cached
                lines.append(cached[1])
            self._block = (phases, ",\n    ".join(lines))
        raw = json.dumps(top, ensure_ascii=False)
        if self._top is None or self._top[0] != raw:  # the same JSON redacts the same
            self._top = (raw, redactor.data(top))
        return _lines_json(self._top[1], self._block[1])

    def _render_history(self, state: EngineState) -> None:
        """``.review-history.md``: the sections of the nodes that changed are rendered again;
        when only the last section grew (a review iteration added), the new part is appended."""
        if state is not self._history_state:
            self._history_state = state
            self._sections, self._order, self._iterations = {}, [], {}
            self._history_synced = False  # the file is compared with what it should hold
            changed = set(state.paths())
            state.take_changed(_HISTORY)
        else:
            changed = state.take_changed(_HISTORY)
        workflow = self.item.workflow
        grown: list[tuple[str, str]] = []  # (runtime, its text before) of changed sections
        reorder = False
        for runtime in changed:
            found = state.peek(runtime)
            old = self._sections.get(runtime)
            if (
                _agent_node(workflow, runtime) is None
                or found is None
                or not found.get("iterations")
            ):
                if old is not None:
                    del self._sections[runtime]
                    reorder = True
                continue
            parts = [self.item.redactor.text(f"## Phase: {workflow.label_of(runtime)}\n\n")]
            parts += [self._iteration(record) for record in found.get("iterations") or []]
            new = (str(found.get("entered") or ""), "".join(parts))
            if new == old:
                continue
            self._sections[runtime] = new
            reorder = reorder or old is None or old[0] != new[0]
            grown.append((runtime, old[1] if old is not None else ""))
        if not grown and not reorder and self._history_synced:
            return
        if reorder:
            self._order = sorted(self._sections, key=lambda r: (self._sections[r][0], r))
        if not self._sections:
            return
        if (
            self._history_synced
            and len(grown) == 1
            and grown[0][0] == self._order[-1]
            and self._sections[grown[0][0]][1].startswith(grown[0][1])
        ):
            added = self._sections[grown[0][0]][1][len(grown[0][1]) :]
            if _append(self.history_path, added.encode("utf-8")):
                return
        head = self.item.redactor.text(f"# Review history: {state.item}\n\n")
        data = (head + "".join(self._sections[r][1] for r in self._order)).encode("utf-8")
        if not self._history_synced:
            self._history_synced = True
            try:
                if self.history_path.read_bytes() == data:
                    return
            except FileNotFoundError:
                pass
        atomic_write_bytes(self.history_path, data, durable=False)

    def _iteration(self, record: Mapping[str, Any]) -> str:
        """One iteration's redacted text, rendered once (records never change once added)."""
        known = self._iterations.get(id(record))
        if known is not None and known[0] is record:
            return known[1]
        text = self.item.redactor.text("\n".join(render_iteration(record)) + "\n")
        self._iterations[id(record)] = (record, text)
        return text

    def status_fields(self, state: EngineState) -> dict[str, Any]:
        return {"stateFile": str(self.state_path)}

    def completed(self, state: EngineState) -> None:
        """Seed 000 TD5: the review history is deleted when the feature finishes."""
        self.render(state)
        remove_file(self.history_path)
        self._history_synced = False


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


def _lines_json(document: Mapping[str, Any], phases: str | None = None) -> bytes:
    """JSON a person can read: one top-level key per line, one phase per line.

    ``phases`` gives the phases' lines ready made and joined (the document's
    own ``phases`` value is then not read).
    """
    dumps = json.dumps
    lines = []
    for key, value in document.items():
        if key == "phases" and phases is None and isinstance(value, dict):
            phases = ",\n    ".join(
                f"{dumps(k)}: {dumps(v, ensure_ascii=False)}" for k, v in value.items()
            )
        if key == "phases" and phases is not None:
            lines.append(f'"phases": {{\n    {phases}\n  }}' if phases else '"phases": {}')
        else:
            lines.append(f"{dumps(key)}: {dumps(value, ensure_ascii=False)}")
    return ("{\n  " + ",\n  ".join(lines) + "\n}\n").encode("utf-8")


_HISTORY = "feature-view-history"
_PHASES = "feature-view-phases"


def _agent_node(workflow: Any, runtime: str) -> AgentNode | None:
    from phasegate.engine.run import definition_path

    try:
        node = workflow.node(definition_path(runtime))
    except KeyError:
        return None
    return node if isinstance(node, AgentNode) else None


def _append(path: Path, data: bytes) -> bool:
    """Append ``data`` to ``path`` (one write); ``False`` if it could not be done."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    except OSError:
        return False
    try:
        os.write(fd, data)
    except OSError as exc:
        if is_storage_error(exc):
            raise StorageError.from_os_error(exc, path) from exc
        return False
    finally:
        os.close(fd)
    return True


class GenericView(StateView):
    """No files of its own: the engine state is the item's state."""

    name = "generic"
