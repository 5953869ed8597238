"""A spec file as units, and an editable copy of the living spec that writes back without churn.

A spec is read (as Markdown, so fences and comments hide nothing) as units:

- the **preamble**: everything before the first heading of level 1 to 3 (the
  document's `#` title included);
- each **section**: a `#`/`##` heading and its text up to the next heading;
- each **block**: a `###` heading and everything under it (its `####`
  scenarios included);
- each **item**: a top-level list item that starts with an id in bold or with
  a colon (spec-kit's `- **FR-001**: ...`), with the text up to the next such
  item or the end of its list; text after such a list, up to the next item or
  heading, is a unit of its own (**rest**).

A unit's key is its section's identity and its own: the id at the start of
its heading (`### AUTH-R2: Session expiry` -> `AUTH-R2`), else its
`Requirement: name`, else its title; items are keyed by their block and id.
:class:`Draft` edits the living spec unit by unit and renders it so that
every untouched unit keeps its bytes (line endings included).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from phasegate.change.markdown import content, line_ending, outline, split_lines

Key = tuple[str, str]
UnitKind = Literal["preamble", "section", "block", "item", "rest"]
_Adder = Callable[[Key, str, UnitKind, Key | None, int, int], Key]
HEADED: frozenset[str] = frozenset({"preamble", "section", "block"})

_REQ_ID = re.compile(
    r"^([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*?-?[A-Za-z]*\d+[A-Za-z0-9.]*)\s*[:.)\-–—]"
)
_ITEM_ID = re.compile(
    r"^(?:\[[ xX]\]\s+)?(?:(?:\*\*|__)(?P<bold>[A-Za-z][\w.-]*?):?(?:\*\*|__)"
    r"|(?P<plain>[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+)\s*:)"
)
_REMOVED = re.compile(r"^\(?removed\)?\.?$", re.I)


@dataclass(frozen=True)
class Unit:
    """One mergeable part of a spec: key, readable title, kind, owner and source lines."""

    key: Key
    title: str
    kind: UnitKind
    owner: Key
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        """The unit's source text, byte for byte."""
        return "".join(self.lines)

    @cached_property
    def normalized(self) -> str:
        """The text compared between versions: line ends, trailing spaces, edge blanks ignored."""
        text = "\n".join(content(line).rstrip() for line in self.lines).strip("\n")
        return text.removeprefix("\ufeff")  # a byte-order mark is not text

    @property
    def removed(self) -> bool:
        """A unit whose body is just ``REMOVED``: the change deletes it."""
        body = self.normalized.split("\n", 1)
        return len(body) == 2 and bool(_REMOVED.match(body[1].strip()))


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


def item_id(text: str) -> str | None:
    """The id a list item starts with (``**FR-001**: ...`` -> ``FR-001``), if any."""
    match = _ITEM_ID.match(text.strip())
    if match is None:
        return None
    found = match.group("bold") or match.group("plain")
    return found.upper() if found and any(c.isdigit() for c in found) else None


def parse_units(text: str, *, items: bool = True) -> list[Unit]:
    """Split a spec into units in document order (keys made unique by occurrence).

    ``items=False`` keeps list items inside their block (whole requirements only).
    """
    lines = split_lines(text)
    parsed = outline(text)
    bounds = [h for h in parsed.headings if h.level <= 3]
    if bounds and bounds[0].level == 1:
        bounds = bounds[1:]  # the document's title belongs to the preamble
    id_items = [
        (item.line, item.list_end, found)
        for item in (parsed.items if items else [])
        if item.top and (found := item_id(item.text.split("\n", 1)[0])) is not None
    ]
    units: list[Unit] = []
    seen: dict[Key, int] = {}

    def add(key: Key, title: str, kind: UnitKind, owner: Key | None, start: int, end: int) -> Key:
        """Append a unit (none when empty); return its key, made unique."""
        count = seen.get(key, 0) + 1
        unique = key if count == 1 else (key[0], f"{key[1]}#{count}")
        if start < end or kind == "preamble":
            seen[key] = count
            units.append(Unit(unique, title, kind, owner or unique, tuple(lines[start:end])))
        return unique

    starts = [b.line for b in bounds] + [len(lines)]
    section = ""
    head: tuple[Key, str, UnitKind, int] = (("", ""), "(preamble)", "preamble", 0)
    next_item = 0
    for index in range(len(starts)):
        key, title, kind, start = head
        end = starts[index]
        while next_item < len(id_items) and id_items[next_item][0] < start:
            next_item += 1
        first = next_item
        while next_item < len(id_items) and id_items[next_item][0] < end:
            next_item += 1
        owned = id_items[first:next_item]
        if owned:
            unique = add(key, title, kind, None, start, owned[0][0])
            _add_items(add, unique, owned, end, lines)
        else:
            add(key, title, kind, None, start, end)
        if index < len(bounds):
            heading = bounds[index]
            if heading.level <= 2:
                section = unit_key(heading.title)
                head = ((section, ""), heading.title, "section", heading.line)
            else:
                head = ((section, unit_key(heading.title)), heading.title, "block", heading.line)
    if units and units[0].kind == "preamble" and not units[0].lines:
        units.pop(0)
    return units


def _add_items(
    add: _Adder, owner: Key, owned: list[tuple[int, int, str]], end: int, lines: list[str]
) -> None:
    """Items of one heading's text, and the text after each of its id lists."""
    lists = 0
    for position, (line, list_end, found) in enumerate(owned):
        following = owned[position + 1][0] if position + 1 < len(owned) else end
        item_end = min(following, list_end, end)
        rest_end = following
        if item_end < rest_end and not any(content(x).strip() for x in lines[item_end:rest_end]):
            item_end = rest_end  # blank lines after a list stay with its last item
        key = (owner[0], f"{owner[1]}/{found}")
        add(key, found, "item", owner, line, item_end)
        if item_end < rest_end:
            lists += 1
            rest_key = (owner[0], f"{owner[1]}/after-list-{lists}")
            add(rest_key, f"text after list {lists}", "rest", owner, item_end, rest_end)


@dataclass(eq=False)  # compared by identity: list.index() finds one fast
class _Entry:
    unit: Unit
    origin: int | None  # its index in the living spec, while it sits where it was


class Draft:
    """The living spec being merged into: edit unit by unit, render without churn."""

    def __init__(self, text: str | None, *, eol: str | None = None, items: bool = True) -> None:
        self.source = text or ""
        self.eol = line_ending(self.source) if self.source else (eol or "\n")
        self.entries = [_Entry(u, i) for i, u in enumerate(parse_units(self.source, items=items))]
        self._last = len(self.entries) - 1
        self._by_key: dict[Key, _Entry] = {}
        self._reindex()
        self.touched = False

    @property
    def units(self) -> list[Unit]:
        """The units as they stand now."""
        return [entry.unit for entry in self.entries]

    def position(self, key: Key) -> int | None:
        """Where the unit ``key`` is now, if it is there."""
        entry = self._by_key.get(key)
        return self.entries.index(entry) if entry is not None else None

    def _reindex(self) -> None:
        self._by_key = {}
        for entry in self.entries:
            self._by_key.setdefault(entry.unit.key, entry)

    def replace(self, at: int, unit: Unit, *, lines: tuple[str, ...] | None = None) -> None:
        """Put ``unit``'s text where unit ``at`` is (keeping that one's trailing blank lines)."""
        old = self.entries[at]
        new_lines = _fit(lines if lines is not None else unit.lines, old.unit.lines, self.eol)
        entry = _Entry(replace(unit, lines=new_lines), old.origin)
        self.entries[at] = entry
        if self._by_key.get(old.unit.key) is old:
            del self._by_key[old.unit.key]
        self._by_key.setdefault(unit.key, entry)
        self.touched = True

    def insert(self, at: int, unit: Unit) -> None:
        """Add ``unit`` before position ``at`` (with the blank lines it had after it)."""
        like = self.entries[at - 1].unit if 0 < at <= len(self.entries) else None
        ending = _trailing_blanks(like.lines) if like is not None else ()
        trailing = _converted(_trailing_blanks(unit.lines), self.eol)
        if like is not None and like.kind == unit.kind == "item" and ending and self._tight(at - 1):
            # The blank lines after a tight list's last item end the list: they move below.
            before = self.entries[at - 1]
            before.unit = replace(like, lines=like.lines[: len(like.lines) - len(ending)])
            trailing = ending
        elif not trailing and unit.kind in HEADED:
            trailing = (self.eol,)
        lines = _converted(_without_trailing_blanks(unit.lines), self.eol) + trailing
        entry = _Entry(replace(unit, lines=lines), None)
        self.entries.insert(at, entry)
        self._by_key.setdefault(unit.key, entry)
        self.touched = True

    def _tight(self, at: int) -> bool:
        """Whether the item at ``at`` is in a list without blank lines between its items."""
        previous = self.entries[at - 1].unit if at > 0 else None
        if previous is None or previous.kind != "item":
            return True
        return not _trailing_blanks(previous.lines)

    def delete(self, at: int) -> Unit:
        """Remove the unit at ``at``; return it."""
        self.touched = True
        gone = self.entries.pop(at)
        if self._by_key.get(gone.unit.key) is gone:
            del self._by_key[gone.unit.key]
        return gone.unit

    def delete_all(self, keys: set[Key]) -> None:
        """Remove every unit whose key is in ``keys``."""
        kept = [entry for entry in self.entries if entry.unit.key not in keys]
        if len(kept) != len(self.entries):
            self.entries, self.touched = kept, True
            self._reindex()

    def render(self) -> str:
        """The spec's text: the source itself when nothing was edited."""
        if not self.touched:
            return self.source
        out: list[str] = []
        previous: _Entry | None = None
        for entry in self.entries:
            if not entry.unit.lines:
                continue
            seam = (
                previous is None or previous.origin is None or entry.origin != previous.origin + 1
            )
            if out and seam:
                if not out[-1].endswith(("\n", "\r")):
                    out[-1] += self.eol
                if entry.unit.kind != "item" and content(out[-1]).strip():
                    out.append(self.eol)
            out.extend(entry.unit.lines)
            previous = entry
        text = "".join(out)
        last = self.entries[-1] if self.entries else None
        original_end = last is not None and last.origin == self._last
        if not original_end or not self.source:
            text = re.sub(r"(?:[ \t]*(?:\r\n|\r|\n))+\Z", "", text) + (self.eol if text else "")
        return text


def _trailing_blanks(lines: tuple[str, ...]) -> tuple[str, ...]:
    count = 0
    for line in reversed(lines):
        if content(line).strip():
            break
        count += 1
    return lines[len(lines) - count :] if count else ()


def _without_trailing_blanks(lines: tuple[str, ...]) -> tuple[str, ...]:
    return lines[: len(lines) - len(_trailing_blanks(lines))]


def _converted(lines: tuple[str, ...], eol: str) -> tuple[str, ...]:
    return tuple(content(line) + eol for line in lines)


def _fit(lines: tuple[str, ...], like: tuple[str, ...], eol: str) -> tuple[str, ...]:
    """``lines`` in the living spec's line endings, with ``like``'s trailing blank lines."""
    body = _converted(_without_trailing_blanks(lines), eol)
    trailing = _trailing_blanks(like)
    if body and not trailing and like and not like[-1].endswith(("\n", "\r")):
        body = (*body[:-1], content(body[-1]))  # the living spec ended without a newline here
    return body + trailing
