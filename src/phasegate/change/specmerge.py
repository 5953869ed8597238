"""Merge a change's spec into the living spec requirement by requirement (three-way).

A spec is read as units: the text before the first ``##`` heading, each
``##`` section's opening text, and each ``###`` block (a requirement such as
``### AUTH-R2: Session expiry``, or a scenario). A unit is keyed by its
section and its id (``AUTH-R2``), ``Requirement: name``, or its title.

Against the base (the living spec when the change began), per unit:

- the change left it as it was, or omitted it -> the living version stays;
- only the change edited it -> the change's version;
- the change and the living spec both edited it, differently -> a conflict;
- a unit whose body is just ``REMOVED`` (or ``(removed)``) is deleted.

So two changes that edit different requirements of one file both survive,
and a true conflict is reported without anything being written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Key = tuple[str, str]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_REQ_ID = re.compile(
    r"^([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*?-?[A-Za-z]*\d+[A-Za-z0-9.]*)\s*[:.)\-–—]"
)
_REMOVED = re.compile(r"^\(?removed\)?\.?$", re.I)


@dataclass(frozen=True)
class Unit:
    """One mergeable part of a spec: its key, a readable title, and its text."""

    key: Key
    title: str
    text: str

    @property
    def normalized(self) -> str:
        return "\n".join(line.rstrip() for line in self.text.strip("\n").splitlines())

    @property
    def removed(self) -> bool:
        body = self.text.strip("\n").split("\n", 1)
        return len(body) == 2 and bool(_REMOVED.match(body[1].strip()))


@dataclass
class MergeResult:
    """The merged text, and the units that conflict (nothing is written when there are any)."""

    text: str
    conflicts: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)


def unit_key(title: str) -> str:
    """A requirement's identity: its id, its ``Requirement:`` name, or its title."""
    clean = title.strip().strip("*_` ")
    match = _REQ_ID.match(clean)
    if match:
        return "id:" + match.group(1).upper()
    lowered = " ".join(clean.lower().split())
    if lowered.startswith("requirement:"):
        return "req:" + lowered.removeprefix("requirement:").strip()
    return "title:" + lowered


def parse_units(text: str) -> list[Unit]:
    """Split a spec into units, in document order (keys made unique by occurrence)."""
    units: list[Unit] = []
    section, key, title = "", ("", ""), "(preamble)"
    buffer: list[str] = []
    in_fence = False
    seen: dict[Key, int] = {}

    def flush() -> None:
        if buffer or key == ("", ""):
            count = seen.get(key, 0) + 1
            seen[key] = count
            unique = key if count == 1 else (key[0], f"{key[1]}#{count}")
            units.append(Unit(unique, title, "\n".join(buffer)))

    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else _HEADING.match(line)
        if heading and len(heading.group(1)) <= 3:
            level, heading_title = len(heading.group(1)), heading.group(2)
            if level == 1 and not units and section == "":
                buffer.append(line)  # the document title belongs to the preamble
                continue
            flush()
            buffer = [line]
            if level <= 2:
                section = unit_key(heading_title)
                key, title = (section, ""), heading_title
            else:
                key, title = (section, unit_key(heading_title)), heading_title
            continue
        buffer.append(line)
    flush()
    if units and units[0].key == ("", "") and not units[0].text.strip():
        units.pop(0)
    return units


def render_units(units: list[Unit]) -> str:
    return "\n\n".join(u.text.strip("\n") for u in units if u.text.strip()) + "\n"


def merge_spec(
    base: str | None, living: str | None, change: str, *, prefer_change: bool = False
) -> MergeResult:
    """Merge the change's version of a spec into the living one, against their common base.

    ``prefer_change`` resolves conflicts in the change's favour (a person
    merged them by hand into the change's spec).
    """
    if living is None and base is None:
        return MergeResult(render_units(parse_units(change)), changed=["(new spec)"])
    base_units = {u.key: u for u in parse_units(base or "")}
    result = list(parse_units(living or ""))
    theirs = parse_units(change)
    merged = MergeResult("")
    anchor: Key | None = None
    for unit in theirs:
        b = base_units.get(unit.key)
        index = _index(result, unit.key)
        o = result[index] if index is not None else None
        name = _describe(unit)
        if b is not None and _same(unit, b):
            anchor = unit.key if o is not None else anchor
            continue  # the change left it alone
        if o is not None and _same(unit, o):
            anchor = unit.key
            continue  # already the living version (a re-run, or the same edit)
        living_untouched = (o is None and b is None) or (
            o is not None and b is not None and _same(o, b)
        )
        if not living_untouched and not prefer_change:
            merged.conflicts.append(name)
            anchor = unit.key if o is not None else anchor
            continue
        merged.changed.append(name)
        if unit.removed:
            if index is not None:
                result.pop(index)
            continue
        if index is not None:
            result[index] = unit
        else:
            at = _index(result, anchor) if anchor is not None else None
            result.insert(at + 1 if at is not None else len(result), unit)
        anchor = unit.key
    merged.text = render_units(result)
    return merged


def _same(a: Unit, b: Unit) -> bool:
    return a.normalized == b.normalized


def _index(units: list[Unit], key: Key) -> int | None:
    for index, unit in enumerate(units):
        if unit.key == key:
            return index
    return None


def _describe(unit: Unit) -> str:
    return unit.title.strip() or "(preamble)"
