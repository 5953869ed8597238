"""Prompt templates: found on a search path, checked on load, rendered per call.

A template is markdown with ``{{ name }}`` placeholders. The engine adds the
inputs, expectations and feedback as separate prompt parts, so templates hold
only a role's instructions for a node. A template is only ever read from
inside its folder: a symlink that leads out of it is not a template.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

#: The names every agent call's prompt fills, in the order the engine lists them.
CALL_VARIABLES = (
    "item",
    "description",
    "workflow",
    "phase",
    "node",
    "mode",
    "artifact",
    "artifact_path",
    "item_dir",
    "iteration",
    "max_iterations",
    "role",
    "task",
    "task_title",
)

#: The names of the foreach item: filled only inside a foreach body.
FOREACH_VARIABLES = frozenset({"task", "task_title"})

#: Names a template may use.
TEMPLATE_VARIABLES = frozenset({*CALL_VARIABLES, "next", "label", "command"})

#: Names a gate's texts (question, decision, files shown, messages) may use; ``detail``
#: too when the gate names a ``detail`` predicate.
GATE_VARIABLES = frozenset(
    {"item", "description", "workflow", "phase", "label", "mode", "item_dir", "task", "task_title"}
)
#: Names a foreach's ``items.file`` may use (``task`` and ``task_title`` only inside a
#: foreach body: the item of the loop around it).
ITEMS_FILE_VARIABLES = GATE_VARIABLES | {"node"}
#: Names the message of a command's refusal (``commands.NAME.otherwise``) may use.
REFUSAL_VARIABLES = frozenset(
    {"item", "label", "phase", "description", "workflow", "command", "next"}
)
#: Names a label's ``next`` command may use.
LABEL_NEXT_VARIABLES = frozenset({"item", "label"})


#: (name, search path) -> (the search folders' modification times, what was found).
_FOUND: dict[tuple[str, tuple[Path, ...]], tuple[tuple[int, ...], Path | None]] = {}


def find_template(name: str, search_path: Sequence[Path]) -> Path | None:
    """The first ``name`` found in ``search_path`` (repo overrides come first).

    Looked up for every agent call: the answer is kept while no search folder
    changed (a file added, removed or renamed in one changes its time).
    """
    if "/" in name or "\\" in name:
        return _find_template(name, search_path)  # a folder's time says nothing of subfolders
    key = (name, tuple(search_path))
    stamp = tuple(_mtime(directory) for directory in key[1])
    known = _FOUND.get(key)
    if known is not None and known[0] == stamp:
        return known[1]
    found = _find_template(name, search_path)
    _FOUND[key] = (stamp, found)
    return found


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _find_template(name: str, search_path: Sequence[Path]) -> Path | None:
    if not name or name.startswith(("/", "\\")) or ".." in re.split(r"[\\/]", name):
        return None
    for directory in search_path:
        candidate = directory / name
        if not candidate.is_file():
            continue
        try:
            candidate.resolve().relative_to(directory.resolve())
        except ValueError:
            continue  # a symlink out of the prompt folder
        return candidate
    return None


def unknown_placeholders(text: str, known: frozenset[str] = TEMPLATE_VARIABLES) -> list[str]:
    """Placeholders in ``text`` that no call can fill (none of ``known``)."""
    return sorted({m for m in PLACEHOLDER.findall(text) if m not in known})


def placeholder_places(text: str, names: Sequence[str]) -> list[tuple[int, int, str]]:
    """``(line, column, name)`` of the first ``{{ name }}`` of each of ``names`` in
    ``text`` (1-based), in the order they appear."""
    first: dict[str, int] = {}
    for found in PLACEHOLDER.finditer(text):
        if found.group(1) in names:
            first.setdefault(found.group(1), found.start())
    return sorted((*_position(text, start), name) for name, start in first.items())


def _position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


#: ``{{`` and a name, as a placeholder begins: what follows says whether it was meant as one.
_ATTEMPT = re.compile(r"\{\{[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*")


def malformed_placeholders(text: str) -> list[tuple[int, int, str]]:
    """``(line, column, problem)`` of every ``{{ name`` of ``text`` meant as a placeholder but not
    one (``{{ name }}``, nothing else): a filter (``{{ item | upper }}``) or no ``}}`` on
    its line (``{{ item ?``). It would be shown as written, never filled. Other ``{{``
    (code in a prompt: ``style={{color: 'red'}}``) are text."""
    if "{{" not in text:
        return []
    covered = {m.start() for m in PLACEHOLDER.finditer(text)}
    problems: list[tuple[int, int, str]] = []
    for found in _ATTEMPT.finditer(text):
        start = found.start()
        if start in covered:
            continue
        line_end = text.find("\n", start)
        if line_end == -1:
            line_end = len(text)
        rest = text[found.end() : line_end]
        line, column = _position(text, start)
        close = rest.find("}}")
        if close == -1:
            shown = _clipped(text[start:line_end].rstrip())
            problems.append((line, column, f"{shown!r} is not closed with '}}}}'"))
        elif rest.startswith("|"):
            shown = _clipped(text[start : found.end() + close + 2])
            problems.append(
                (
                    line,
                    column,
                    f"{shown!r} is not a placeholder (only {{{{ name }}}}: no filters)",
                )
            )
    return problems


def _clipped(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render(text: str, values: Mapping[str, object]) -> str:
    """Fill the placeholders of ``text`` from ``values``."""
    return PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), "")), text)
