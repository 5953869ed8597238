"""The ``feature`` state view: seed 000's ``.meta.json`` and ``.review-history.md``.

``.meta.json`` holds the seed's fields (``phases`` with ``started``,
``completed``, ``iterations``, ``reviewerNotes``, ``verified``; ``currentPhase``,
``mode``, ``status``, ``worktree``), plus the review's closing summary and the
tokens and cost of each phase. ``.review-history.md`` lists every review
iteration in seed 000's interface 4 format and is deleted when the item
finishes (TD5). Both are rendered from the engine state: each phase's part is
rendered again only when that phase changed. Edits to ``.meta.json``'s own fields
are overwritten (keys a person adds are kept), and a ``.meta.json`` that cannot be
read is named in a warning and written again, never a reason to stop.

A phase's call may not change the other phases' artifacts it is given: what it changed is
put back (:meth:`FeatureView.watch_node`). A person's edit made while the call ran cannot
be told from the agent's, so what the file held is first copied to the item's
``put-back/`` folder (``spec-1.md``, then ``spec-2.md``...), named in the message.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from phasegate.engine.brief import Progress
from phasegate.engine.plugin_api import StateView
from phasegate.engine.protect_cache import ReadCache, _Copy
from phasegate.engine.protect_snapshot import put_back
from phasegate.engine.state import EngineState
from phasegate.engine.state_encoding import numbers_only
from phasegate.engine.status import camel_usage
from phasegate.errors import StateCorruptError, os_reason
from phasegate.state.atomic import remove_file
from phasegate.state.put_back import copied_words, keep_copy
from phasegate.state.store import dump_state
from phasegate.views.feature_meta import META_KEYS, PHASE_KEYS, meta_problem
from phasegate.views.files import ViewFile, encode_json
from phasegate.views.history import ReviewHistory
from phasegate.workflow.model import AgentNode, EndNode

#: Workflow -> what :func:`_phase_names` found (``status`` sets up a view per item).
_PHASE_NAMES: dict[int, tuple[Any, frozenset[str], dict[str, str]]] = {}


def _phase_names(workflow: Any) -> tuple[frozenset[str], dict[str, str]]:
    """The ids of ``workflow``'s phase nodes (all but its ends), and node id -> phase name
    for the nodes whose phase name no other node shares."""
    known = _PHASE_NAMES.get(id(workflow))
    if known is not None and known[0] is workflow:
        return known[1], known[2]
    nodes = [n for n in workflow.nodes if not isinstance(n, EndNode)]
    names = [n.label or n.id for n in nodes]
    unique = {n.id: name for n, name in zip(nodes, names, strict=True) if names.count(name) == 1}
    listed = frozenset(n.id for n in nodes)
    if len(_PHASE_NAMES) >= 64:
        _PHASE_NAMES.clear()
    _PHASE_NAMES[id(workflow)] = (workflow, listed, unique)
    return listed, unique


#: Workflow -> node id -> the other phases' artifacts that node is given and may not change.
_GUARDED: dict[int, tuple[Any, dict[str, tuple[str, ...]]]] = {}


def _guarded(workflow: Any) -> dict[str, tuple[str, ...]]:
    """Per agent node of ``workflow`` (by its path, ``foreach-id/body-id`` inside a foreach
    body): the files (in the item's folder) it is given (its ``inputs`` and ``previous``)
    that other agent nodes list as their outputs, and it does not: the artifacts its work
    is built on. (Only those: checking every phase's artifact around each call would cost
    more the more phases there are.)"""
    known = _GUARDED.get(id(workflow))
    if known is not None and known[0] is workflow:
        return known[1]
    nodes = [(path, n) for path, n in workflow.walk() if isinstance(n, AgentNode)]
    outputs = {
        path: tuple(o.file for o in n.outputs if "{{" not in o.file and not o.file.endswith("/"))
        for path, n in nodes
    }
    every = tuple(dict.fromkeys(name for names in outputs.values() for name in names))
    given = {
        path: {i.file for i in n.inputs} | ({n.previous} if n.previous else set())
        for path, n in nodes
    }
    found = {
        n: tuple(name for name in every if name not in own and name in given[n])
        for n, own in outputs.items()
    }
    if len(_GUARDED) >= 64:
        _GUARDED.clear()
    _GUARDED[id(workflow)] = (workflow, found)
    return found


class _Undo:
    """What :meth:`FeatureView.watch_node` returns: the put-back to run once the call ended,
    and the files it keeps as they were when the call began (``recorded``: the guard writes
    them to disk with its record, so a run killed during the call has them put back)."""

    def __init__(self, undo: Callable[[], list[str]], recorded: dict[str, _Copy]) -> None:
        self.undo = undo
        self.recorded = recorded

    def __call__(self) -> list[str]:
        return self.undo()


class FeatureView(StateView):
    """``.meta.json`` + ``.review-history.md`` (file names configurable)."""

    name = "feature"
    #: Its state file is written from the engine state: one that cannot be read is written
    #: again (the Claude Code hook reads it so too).
    state_file_rebuilt = True

    def __init__(self, item: Any, settings: Mapping[str, Any]) -> None:
        super().__init__(item, settings)
        self.state_file = str(settings.get("state_file", ".meta.json"))
        self.history_file = str(settings.get("history_file", ".review-history.md"))
        fmt = str(settings.get("state_format", "json"))
        self.fmt: Any = "yaml" if fmt == "yaml" else "json"
        #: The workflow's phase nodes, and node id -> its phase name for the nodes whose
        #: name no other node shares (never changed: shared by the items of the workflow).
        self._listed, self._unique = _phase_names(self.item.workflow)
        self._phases_state: EngineState | None = None
        #: The other phases' artifacts as last read (one call's record to the next).
        self._reads = ReadCache()
        self._records: dict[str, dict[str, Any]] = {}
        self._phase_map: dict[str, Any] = {}
        #: Bumped whenever a phase's record changes (the phases block is then joined again).
        self._phase_version = 0
        #: Phase name -> (its record, its redacted ``"name": {...}`` line in the state file).
        self._phase_lines: dict[str, tuple[dict[str, Any], str]] = {}
        #: What the phases block was made from (version, mapping), and its line.
        self._block: tuple[Any, str] = (None, "")
        #: Top-level key -> (its plain value, or its value's JSON; its redacted line).
        self._top_lines: dict[str, tuple[Any, str]] = {}
        self._folder: Path | None = None
        self._files()

    def _files(self) -> tuple[ViewFile, ReviewHistory]:
        """The view's two files, in the item's folder (which moves when a change is archived)."""
        folder = self.item.item_dir
        if folder is not self._folder:
            self._folder = folder
            self._state_path = folder / self.state_file
            self._state_file = ViewFile(self._state_path)
            self._state_file_name = str(self._state_path)
            self._history = ReviewHistory(
                folder / self.history_file, self.item.workflow, self.item.redactor
            )
        return self._state_file, self._history

    @property
    def state_path(self) -> Path:
        self._files()
        return self._state_path

    @property
    def history_path(self) -> Path:
        return self.item.item_dir / self.history_file

    @classmethod
    def file_names(cls, settings: Mapping[str, Any]) -> list[str]:
        return [
            str(settings.get("state_file", ".meta.json")),
            str(settings.get("history_file", ".review-history.md")),
        ]

    def watch_node(self, node: str) -> Callable[[], list[str]] | None:
        """The artifacts the workflow's other phases write (their ``outputs``, in the item's
        folder): a call of a phase that does not list one as its own may not change it (the
        implement executor cannot weaken spec.md, a reviewer cannot edit the brainstorm).
        What it changed is put back, a violation as for phasegate's own files; what the file
        held is first copied to the item's ``put-back/`` folder (see :func:`keep_copy`)."""
        # The node's path in the workflow: ``tasks[3]/build`` is ``tasks/build``.
        where = node if "[" not in node else "/".join(p.split("[", 1)[0] for p in node.split("/"))
        kept = _guarded(self.item.workflow).get(where)
        if not kept:
            return None
        folder = self.item.item_dir
        cache = self._reads
        was = {name: cache.read(folder / name) for name in kept}
        try:
            shown = folder.relative_to(self.item.repo).as_posix() + "/"
        except ValueError:
            shown = f"{folder}/"

        def undo() -> list[str]:
            changed = [name for name, copy in was.items() if cache.read(folder / name) != copy]
            found = []
            for name in changed:
                # A person's edit made during the call cannot be told from the agent's.
                held = copied_words(keep_copy(folder, name, shown))
                put_back(folder / name, was[name])
                found.append(
                    f"another phase's artifact ({shown}{name}{held}), "
                    "which its phase may not change"
                )
            return found

        return _Undo(undo, {str(folder / name): copy for name, copy in was.items()})

    def check(self, state: EngineState) -> None:
        """Keys a person added to the state file are kept; the file is written from the
        engine state, so one that cannot be read is not a reason to stop: it is named in
        a warning and written again by the next run."""
        try:
            raw = self.state_path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StateCorruptError(
                f"state file {self.state_path} cannot be read: {os_reason(exc)}"
            ) from None
        document, problem = self._read(raw)
        if document is None or problem is not None:
            self._files()[0].forget()  # the next render writes it, whatever it holds
            _warn_once(
                f"{self.state_path} {problem}; it is not read: phasegate writes it from "
                f"{self.item.engine_path.name}, and the next run writes it again"
            )
            return
        self._files()[0].known(raw)
        mode = document.get("mode")
        if mode is not None and mode != state.mode:
            # Seed 000 takes the mode from this file: an edit here would seem to change it.
            try:
                shown = self.state_path.relative_to(self.item.repo)
            except ValueError:
                shown = self.state_path
            _warn_once(
                f"{shown} says mode {mode!r}, which is not read: the item's mode is "
                f"{state.mode!r}, set by phasegate new --mode; phasegate writes "
                f"{self.state_file} from {self.item.engine_path.name}, and the next run "
                "writes it again"
            )
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

    def _read(self, raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
        """The state file's document, or what makes it unusable (one short reason)."""
        if not raw.strip():
            return None, "is empty"
        try:
            text = raw.decode("utf-8")
            if self.fmt == "json":
                document = json.loads(text)
            else:
                from ruamel.yaml import YAML

                document = YAML(typ="safe", pure=True).load(text)
        except Exception as exc:  # any parse failure means the same thing to the user
            reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
            return None, f"is corrupt ({reason})"
        if not isinstance(document, dict):
            return None, "does not hold an object"
        problem = meta_problem(document, self.item.workflow)
        return document, (f"cannot be used: {problem}" if problem else None)

    # -- rendering ----------------------------------------------------------------------

    def _phases(self, state: EngineState) -> dict[str, Any]:
        """Phase name -> its record; only the records of nodes that changed are built again.

        The mapping returned is kept (and changed) for the next call: callers must not
        change it; :attr:`_phase_version` tells one content of it from another.
        """
        if state is not self._phases_state:
            self._phases_state = state
            self._records = {}
            self._phase_map = {}
            changed: Any = list(state.paths())
            state.take_changed(_PHASES)
        else:
            changed = state.take_changed(_PHASES)
        listed = self._listed
        records = self._records
        rebuild = not self._phase_map and bool(changed)
        for node_id in changed:
            if node_id not in listed:
                continue
            found = state.peek(node_id)
            if found is None:
                rebuild = rebuild or records.pop(node_id, None) is not None
                continue
            d = found.d
            started = d.get("started")
            closed = d.get("outcome") and not d.get("blocked")
            record = {
                "started": started,
                "completed": d.get("completed") if closed else None,
                "iterations": found.iteration if started else 0,
                "reviewerNotes": list(d.get("notes") or []),
                "verified": d.get("verified"),
                "review": d.get("review"),
                "summary": d.get("summary"),
                "usage": camel_usage(d.get("usage")),
            }
            if d.get("skipped"):
                record["skipped"] = True
            name = self._unique.get(node_id)
            if node_id not in records or name is None:
                rebuild = True
            elif not rebuild:
                self._phase_map[name] = record  # keeps its place in the mapping
            records[node_id] = record
            self._phase_version += 1
        if rebuild:
            self._phase_map = {
                node.label or node.id: records[node.id]
                for node in self.item.workflow.nodes
                if node.id in records
            }
            self._phase_version += 1
        return self._phase_map

    def document(self, state: EngineState) -> dict[str, Any]:
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
        state_file, history = self._files()
        document = self.document(state)
        if self.fmt == "json":
            payload = self._json(document)
        else:
            payload = dump_state(self.item.redactor.data(document), "yaml")
        # Derived from the engine state: a run writes it again, so no fsync.
        state_file.write(payload)
        if state.status != "completed":
            history.render(state)

    def _json(self, document: dict[str, Any]) -> bytes:
        """``_lines_json`` of the redacted document. What did not change since the last
        call is not redacted and encoded again: a phase whose record is the very same
        object (see :meth:`_phases`), a top-level value whose JSON is the same."""
        redactor = self.item.redactor
        phases = document.get("phases") or {}
        made_from = (self._phase_version, phases)
        block = self._block
        if block[0] is None or block[0][0] != made_from[0] or block[0][1] is not phases:
            lines = []
            for name, record in phases.items():
                cached = self._phase_lines.get(name)
                if cached is None or cached[0] is not record:
                    text = encode_json(redactor.data(record))
                    cached = (record, f"{_encode_key(name)}: {text}")
                    self._phase_lines[name] = cached
                lines.append(cached[1])
            joined = ",\n    ".join(lines)
            line = f'"phases": {{\n    {joined}\n  }}' if joined else '"phases": {}'
            self._block = block = (made_from, line)
        top_lines = self._top_lines
        lines = []
        for key, value in document.items():
            if key == "phases":
                lines.append(block[1])
                continue
            known = top_lines.get(key)
            kind = type(value)
            if kind is str or kind is int or kind is bool or value is None:
                # A plain value is its own key: equal and of the same type, the same JSON.
                if known is None or known[0] != value or type(known[0]) is not kind:
                    text = encode_json(redactor.field(key, value) if kind is str else value)
                    known = (value, f"{_encode_key(key)}: {text}")
                    top_lines[key] = known
            else:
                raw = encode_json(value)
                if known is None or known[0] != raw or type(known[0]) is not _Encoded:
                    # The same JSON redacts the same; redaction only ever replaces strings,
                    # so a value it left equal is encoded as it was.
                    if kind is dict and numbers_only(value):
                        text = raw  # the usage counts: nothing to redact
                    else:
                        redacted = redactor.field(key, value)
                        text = raw if redacted == value else encode_json(redacted)
                    known = (_Encoded(raw), f"{_encode_key(key)}: {text}")
                    top_lines[key] = known
            lines.append(known[1])
        return ("{\n  " + ",\n  ".join(lines) + "\n}\n").encode("utf-8")

    def status_fields(self, state: EngineState) -> dict[str, Any]:
        self._files()
        return {"stateFile": self._state_file_name}

    def completed(self, state: EngineState) -> None:
        """Seed 000 TD5: the review history is deleted when the feature finishes."""
        self.render(state)
        remove_file(self.history_path)
        self._files()[1].removed()


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


_PHASES = "feature-view-phases"

#: The warnings given in this process (a run reads the state more than once).
_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    """One warning line on stderr, once per process."""
    if message in _WARNED:
        return
    if len(_WARNED) < 256:
        _WARNED.add(message)
    from phasegate.redact import redact_message

    sys.stderr.write(f"phasegate: warning: {redact_message(message)}\n")
    sys.stderr.flush()


class _Encoded(str):
    """The JSON of a value that is not a plain string (told apart from a string value)."""

    __slots__ = ()


_encode_slowly = json.JSONEncoder().encode
_ascii: Any = json.encoder.encode_basestring_ascii
#: Key -> ``json.dumps(key)`` (the keys of a ``.meta.json``: a small vocabulary).
_KEYS: dict[str, str] = {}


def _encode_key(key: str) -> str:
    """``json.dumps(key)`` (ASCII), as :func:`_lines_json` writes keys."""
    text = _KEYS.get(key)
    if text is None:
        text = str(_ascii(key)) if type(key) is str else _encode_slowly(key)
        if len(_KEYS) < 4096:
            _KEYS[key] = text
    return text


class GenericView(StateView):
    """No files of its own: the engine state is the item's state."""

    name = "generic"
