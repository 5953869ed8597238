"""Ticking PLAN.md's checkboxes: one byte changes, nothing else in the file.

A task is found again by its hash in the file as it is now (a person may have
edited the plan since it was read), and its ``[ ]`` becomes ``[x]``: line
endings, a byte-order mark, tabs and every other byte stay as they were. A
task skipped with a warning (or accepted as it is) is ticked and gets one note
line under it, indented as its own sub-items are. Ticking again changes nothing.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from phasegate.errors import BadInputError, NotFoundError
from phasegate.implement.outline import strip_bom
from phasegate.implement.plan import parse_plan
from phasegate.state.atomic import atomic_write_bytes

#: In a task's review-cycle record: the tick of a parallel task approved (accepted,
#: skipped, fixed by hand) whose work is not in the work tree yet, ``{how, note}``.
TICK_WAITING = "_tick_waiting"

_BOM = b"\xef\xbb\xbf"
_BOX = re.compile(
    rb"^(?P<prefix>[ \t]*(?:>[ \t]?)*[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+)\[(?P<mark>[ xX])\]"
)
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n|$)")


def _lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` with their endings (``\\r\\n``, ``\\r`` or ``\\n``)."""
    return [m.group(0) for m in _LINE.finditer(data) if m.group(0)]


class PlanChanged(BadInputError):
    """The task is no longer where the plan says (the file changed under us)."""


def _box(line: bytes, first: bool) -> tuple[re.Match[bytes], int]:
    skip = len(_BOM) if first and line.startswith(_BOM) else 0
    match = _BOX.match(line[skip:])
    if match is None:
        raise PlanChanged(f"no checkbox at the start of {line[skip:].decode(errors='replace')!r}")
    return match, skip


def set_checkbox(data: bytes, line: int) -> bytes:
    """``data`` with the checkbox of 1-based ``line`` ticked (unchanged if it already is)."""
    lines = _lines(data)
    if not 1 <= line <= len(lines):
        raise PlanChanged(f"line {line} is past the end of the plan")
    match, skip = _box(lines[line - 1], line == 1)
    if match.group("mark") in (b"x", b"X"):
        return data
    offset = sum(len(x) for x in lines[: line - 1]) + skip + match.start("mark")
    return data[:offset] + b"x" + data[offset + 1 :]


def _ending(line: bytes) -> bytes:
    for ending in (b"\r\n", b"\n", b"\r"):
        if line.endswith(ending):
            return ending
    return b"\n"


def add_note(data: bytes, line: int, after: int, note: str) -> bytes:
    """``data`` with ``- note`` as the first sub-item of the task at ``line``.

    ``after`` is the 1-based line after which the task's own text ends. A note
    that is already there is not added again.
    """
    lines = _lines(data)
    match, _ = _box(lines[line - 1], line == 1)
    indent = re.sub(rb"[^ \t>]", b" ", match.group("prefix"))
    text = indent + b"- " + note.encode("utf-8")
    if any(x.rstrip(b"\r\n") == text for x in lines[line - 1 : after + 1]):
        return data
    ending = _ending(lines[line - 1])
    head = b"".join(lines[:after])
    if head and not head.endswith((b"\n", b"\r")):
        head += ending
    return head + text + ending + b"".join(lines[after:])


def tick_task(path: Path, key: str, note: str | None = None) -> int:
    """Tick the task (or phase) with ``key`` in the plan at ``path``; its 1-based line.

    A plan that is gone (deleted while a decision waited) stops the run, exit 2."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NotFoundError(
            f"{path}: no such file; the implement workflow needs a PLAN.md "
            "(restore it, e.g. from git, and run again)"
        ) from None
    plan = parse_plan(data.decode("utf-8"), path)
    task = plan.task(key)
    line: int | None
    end: int
    if task is not None:
        line, end = task.line, task.text_end
    else:
        phase = plan.phase(key)
        line = phase.checkbox_line if phase is not None else None
        end = line or 0
    if line is None:
        raise PlanChanged(f"{path}: the plan no longer has the task {key}")
    new = set_checkbox(data, line)
    if note:
        new = add_note(new, line, end, note)
    if new != data:
        mode = path.stat().st_mode
        atomic_write_bytes(path, new)
        os.chmod(path, stat.S_IMODE(mode))
    return line


def is_ticked(path: Path, key: str) -> bool | None:
    """Whether the task ``key`` is ticked in the plan now (``None``: not in the plan)."""
    try:
        text = strip_bom(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    task = parse_plan(text, path).task(key)
    return task.done if task is not None else None
