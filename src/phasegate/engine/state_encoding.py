"""The engine state's file format, and an encoder that does only the new work.

The file is JSON a person can read: one top-level key per line, one node per
line, each value as ``json.dumps`` writes it (C encoder, ``ensure_ascii``
off), every string redacted. A state commit happens on every step, so what
it costs must not grow with the item's history: :class:`StateEncoder` keeps
the text of what it encoded and encodes again (redaction included) only
what changed since:

- a node the state did not mark changed reuses its whole text;
- in a changed node (and at the top level), a string, integer, boolean or
  null equal to last time's and of the same type reuses its text (a float
  only if it is the very same object: ``-0.0 == 0.0``), and so does a
  mapping whose plain JSON (no redaction: the C encoder alone) is what it
  was; a mapping that redaction leaves equal (one of numbers alone is not
  even redacted: redaction replaces strings only) is written as that plain JSON;
- in a list (a node's review iterations, the item's label history) an
  element that is the very same object as last time reuses its text.
  Records in such lists are appended, never changed in place.

:func:`encode_document` is the reference: it encodes everything afresh, and
the encoder's output is byte for byte the same (``PHASEGATE_CHECK_ENCODING=1``
makes every commit check that). :func:`parse_state` reads a file back and checks
its shape.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from phasegate.errors import StateCorruptError
from phasegate.redact import Redactor
from phasegate.state.journal import encode_json

#: The state file's format version.
FORMAT = 1

#: With this set, every encode is compared with a fresh one (the test suite sets it).
CHECK_ENV = "PHASEGATE_CHECK_ENCODING"


_dumps = json.dumps
#: ``json.dumps(value, ensure_ascii=False)``, the C encoder called at once.
_encode = encode_json
#: ``json.dumps(text, ensure_ascii=False)`` for a string, without the encoder's set-up.
_quote: Any = json.encoder.encode_basestring
#: The JSON text of the keys of node states (a small vocabulary).
_KEYS: dict[str, str] = {}
#: ``json.dumps(key)`` (ASCII) of the state's top-level keys.
_TOP_NAMES: dict[str, str] = {}


def _plain(value: Any, redactor: Redactor, key: str | None = None) -> str:
    """``value`` (the value of ``key``, if given) redacted, as JSON (see Redactor.field)."""
    if key is not None:
        value = redactor.field(key, value)
        if isinstance(value, str):
            return str(_quote(value))
        return _encode(value)
    if isinstance(value, str):
        return str(_quote(redactor.text(value)))
    return _encode(redactor.data(value))


def numbers_only(value: dict[Any, Any]) -> bool:
    """Whether ``value`` holds numbers, booleans and nulls alone (in mappings of its own):
    redaction, which replaces strings only, leaves it as it is."""
    for item in value.values():
        kind = type(item)
        if kind is int or kind is float or kind is bool or item is None:
            continue
        if kind is dict and numbers_only(item):
            continue
        return False
    return True


def encode_value(value: Any, redactor: Redactor) -> str:
    """``value`` redacted, as one line of JSON (the form of every value in the state file)."""
    return _plain(value, redactor)


def _key(key: str) -> str:
    text = _KEYS.get(key)
    if text is None:
        text = str(_quote(key))
        if len(_KEYS) < 10_000:
            _KEYS[key] = text
    return text


def _top_name(key: str) -> str:
    """``json.dumps(key)``, kept (the state's top-level keys are a small vocabulary)."""
    text = _dumps(key)
    if len(_TOP_NAMES) < 10_000:
        _TOP_NAMES[key] = text
    return text


def _top_key(key: str) -> str:
    """``json.dumps(key)`` (see :func:`_top_name`)."""
    return _TOP_NAMES.get(key) or _top_name(key)


def _document(top: Iterable[tuple[str, str]], node_lines: Iterable[str]) -> bytes:
    """The file from top-level (key, JSON text) pairs and the nodes' ``"path": {...}`` lines."""
    names = _TOP_NAMES
    return _joined([f"{names.get(key) or _top_name(key)}: {text}" for key, text in top], node_lines)


def _joined(lines: list[str], node_lines: Iterable[str]) -> bytes:
    """The file from its top-level ``"key": value`` lines and its nodes' lines."""
    nodes = ",\n  ".join(node_lines)
    lines.append('"nodes": {' + (f"\n  {nodes}\n" if nodes else "") + "}")
    return ("{\n " + ",\n ".join(lines) + "\n}\n").encode("utf-8")


def encode_document(
    top: Sequence[tuple[str, Any]], nodes: Mapping[str, Mapping[str, Any]], redactor: Redactor
) -> bytes:
    """The state file's bytes for ``top`` (key, value pairs in order) and ``nodes``, afresh."""
    return _document(
        ((key, _plain(value, redactor, key)) for key, value in top),
        (f"{_dumps(path)}: {_plain(node, redactor)}" for path, node in nodes.items()),
    )


class _Raw(str):
    """The plain JSON (C encoder, no redaction) of a value that is not a plain scalar (told
    apart from a string value)."""

    __slots__ = ()


#: One kept part: (the value encoded, or a ``_Raw`` of its plain JSON; its ``"key": text``).
_Part = tuple[Any, str]
#: One kept list: (its elements, their texts, the texts joined, its ``"key": [...]``).
_ListPart = tuple[list[Any], list[str], str, str]


class StateEncoder:
    """Encodes one item's state again and again, reusing the text of what did not change."""

    def __init__(self) -> None:
        self._redactor: Redactor | None = None
        self._reset()

    def _reset(self) -> None:
        #: node path -> its line, ``"path": {...}`` (valid until the state marks it changed).
        self._node_text: dict[str, str] = {}
        #: node path -> key -> its part (see :data:`_Part`); the top level's apart.
        self._parts: dict[str, dict[str, _Part]] = {}
        self._top: dict[str, _Part] = {}
        #: The same for list values (see :data:`_ListPart`).
        self._lists: dict[str, dict[str, _ListPart]] = {}
        self._top_lists: dict[str, _ListPart] = {}

    def forget(self, path: str) -> None:
        """Drop what is kept of node ``path`` (it was removed from the state)."""
        self._node_text.pop(path, None)
        self._parts.pop(path, None)
        self._lists.pop(path, None)

    def encode(
        self,
        top: Sequence[tuple[str, Any]],
        nodes: Mapping[str, Mapping[str, Any]],
        changed: Iterable[str],
        redactor: Redactor,
    ) -> bytes:
        """The state file's bytes; only ``changed`` nodes (and new ones) are encoded again."""
        if redactor is not self._redactor:
            self._reset()  # what was kept was redacted with another redactor
            self._redactor = redactor
        lines = self._node_text
        for path in changed:
            node = nodes.get(path)
            if node is not None:
                lines[path] = self._node_line(path, node, redactor)
        if len(lines) != len(nodes):  # nodes are only added as changed, removed by forget()
            for path in nodes:
                if path not in lines:
                    lines[path] = self._node_line(path, nodes[path], redactor)
        top_lines = self._encode_parts(self._top, self._top_lists, top, redactor, _top_key)
        payload = _joined(top_lines, [lines[path] for path in nodes])
        if os.environ.get(CHECK_ENV):
            _check(payload, top, nodes, redactor)
        return payload

    def _node_line(self, path: str, node: Mapping[str, Any], redactor: Redactor) -> str:
        """``"path": {...}``, the node's line in the file."""
        name = _TOP_NAMES.get(path) or _top_name(path)  # json.dumps(path)
        for key in node:
            if type(key) is not str:
                return f"{name}: {_plain(node, redactor)}"  # json's own key conversion
        parts = self._parts.get(path)
        if parts is None:
            parts = self._parts[path] = {}
        lists = self._lists.get(path)
        if lists is None:
            lists = self._lists[path] = {}
        encoded = self._encode_parts(parts, lists, node.items(), redactor, _key)
        return f"{name}: {{{', '.join(encoded)}}}"

    def _encode_parts(
        self,
        parts: dict[str, _Part],
        lists: dict[str, _ListPart],
        items: Iterable[tuple[str, Any]],
        redactor: Redactor,
        name: Any,
    ) -> list[str]:
        """The ``"key": text`` of each (key, value) of ``items``, ``name`` giving the key's
        JSON; a value whose JSON cannot have changed since the last call reuses its text."""
        out: list[str] = []
        append = out.append
        for key, value in items:
            kind = type(value)
            known = parts.get(key)
            if kind is str or kind is int or kind is bool or value is None:
                # Equal and of the same type: the same JSON, and redacted the same.
                if known is not None and type(known[0]) is kind and known[0] == value:
                    append(known[1])
                    continue
                text = _plain(value, redactor, key)
            elif kind is list:
                append(self._list(lists, key, value, redactor, name))
                continue
            elif kind is float:
                if known is not None and known[0] is value:  # -0.0 == 0.0: the very same one
                    append(known[1])
                    continue
                text = _plain(value, redactor, key)
            else:
                # A mapping may have changed in place: its plain JSON (C encoder, no
                # redaction) says whether it did, and the same JSON redacts the same.
                raw = "{}" if kind is dict and not value else _encode(value)
                if known is not None and type(known[0]) is _Raw and known[0] == raw:
                    append(known[1])
                    continue
                # Redaction only ever replaces strings (other values are kept as they are):
                # what it left equal is encoded as it was, and a mapping of numbers alone
                # (the usage counts, the journal position) is left as it is.
                if kind is dict and numbers_only(value):
                    text = raw
                else:
                    redacted = redactor.field(key, value)
                    text = raw if redacted == value else _encode(redacted)
                value = _Raw(raw)
            part = f"{name(key)}: {text}"
            parts[key] = (value, part)
            append(part)
        return out

    def _list(
        self,
        lists: dict[str, _ListPart],
        key: str,
        value: list[Any],
        redactor: Redactor,
        name: Any,
    ) -> str:
        before = lists.get(key)
        if before is not None:
            elements, texts, joined, part = before
            kept = len(elements)
            # Lists of records grow at the end: when the old elements are all still there
            # (compared by identity, in C), only the new ones are encoded.
            if len(value) >= kept and all(map(operator.is_, value[:kept], elements)):
                if len(value) == kept:
                    return part
                added = [_plain(element, redactor, key) for element in value[kept:]]
                joined = ", ".join([joined, *added]) if kept else ", ".join(added)
                part = f"{name(key)}: [{joined}]"
                lists[key] = (list(value), texts + added, joined, part)
                return part
        texts = []
        for index, element in enumerate(value):
            if before is not None and index < len(before[0]) and before[0][index] is element:
                texts.append(before[1][index])
            else:
                texts.append(_plain(element, redactor, key))
        joined = ", ".join(texts)
        part = f"{name(key)}: [{joined}]"
        lists[key] = (list(value), texts, joined, part)
        return part


def _check(
    payload: bytes,
    top: Sequence[tuple[str, Any]],
    nodes: Mapping[str, Mapping[str, Any]],
    redactor: Redactor,
) -> None:
    fresh = encode_document(top, nodes, redactor)
    if fresh != payload:
        raise RuntimeError(
            "the state encoder reused the text of a value that was changed in place; "
            "records in a node's lists must not be changed once added"
        )


def parse_state(raw: bytes, path: Path) -> dict[str, Any]:
    """The state file's bytes (``path``'s) as a document of the expected shape, else
    :class:`StateCorruptError` naming the file and what is wrong."""
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
    return data


_TYPES: dict[str, type | tuple[type, ...]] = {
    "item": str,
    "workflow": str,
    "mode": str,
    "status": str,
    "at": (str, type(None)),
    "decisions": dict,
    "data": dict,
    "nodes": dict,
    "archive": dict,
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
    size = (data.get("archive") or {}).get("bytes", 0)
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return "field 'archive.bytes' is not a byte count"
    if "history" in data and not isinstance(data["history"], list):
        return "field 'history' is not a list"
    return _detail_problem(data)


#: Top-level fields holding a text or nothing.
_TEXTS: tuple[str, ...] = ("description", "created", "updated", "completed", "base_commit")
_TEXTS += ("worktree", "branch", "summary")
#: A decision record's fields, and the types each may have.
_DECISION_FIELDS: dict[str, type | tuple[type, ...]] = {
    "visit": int,
    "status": str,
    "question": str,
    "choices": dict,
    "files": list,
    "notes_required": list,
    "answer": (dict, type(None)),
}


def _detail_problem(data: dict[str, Any]) -> str | None:
    """What is wrong inside the fields the engine adds to or counts with (a hand edit that
    would otherwise fail half-way through a run, after an agent was paid for)."""
    for key in _TEXTS:
        if data.get(key) is not None and not isinstance(data[key], str):
            return f"field {key!r} has the wrong type ({type(data[key]).__name__})"
    problem = _usage_problem(data.get("usage"), "usage")
    if problem:
        return problem
    by_role = data.get("usage_by_role")
    if by_role is not None:
        if not isinstance(by_role, dict):
            return f"field 'usage_by_role' has the wrong type ({type(by_role).__name__})"
        for role, usage in by_role.items():
            problem = _usage_problem(usage, f"usage_by_role.{role}")
            if problem:
                return problem
    journal = data.get("journal")
    if journal is not None:
        if not isinstance(journal, dict):
            return f"field 'journal' has the wrong type ({type(journal).__name__})"
        for key in ("offset", "lines"):
            if not _count(journal.get(key, 0)):
                return f"field 'journal.{key}' is not a count"
    for name, record in (data.get("decisions") or {}).items():
        if not isinstance(record, dict):
            return f"decisions.{name} is not an object"
        for key, expected in _DECISION_FIELDS.items():
            value = record.get(key)
            if key in record and value is not None and not isinstance(value, expected):
                return f"field 'decisions.{name}.{key}' has the wrong type ({type(value).__name__})"
    for path, node in (data.get("nodes") or {}).items():
        problem = _usage_problem(node.get("usage"), f"nodes.{path}.usage")
        if problem:
            return problem
        for key in _NODE_COUNTS:
            if key in node and not _count(node[key]):
                return f"field 'nodes.{path}.{key}' is not a count"
    return None


#: A node's counters, which the engine counts on (a text or null there would stop a run
#: half-way, or every status, with a bug report).
_NODE_COUNTS: tuple[str, ...] = (
    "visit",
    "iteration",
    "tries",
    "tries_given_up",
    "review_tries",
    "resume_review",
)


def _usage_problem(usage: Any, where: str) -> str | None:
    if usage is None:
        return None
    if not isinstance(usage, dict):
        return f"field {where!r} has the wrong type ({type(usage).__name__})"
    for key, value in usage.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"field '{where}.{key}' is not a number"
    return None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
