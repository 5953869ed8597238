"""OpenSpec delta specs, applied to the living spec with OpenSpec's semantics.

A change spec with any of these `##` sections is a delta, never merged as text:

- `## ADDED Requirements`: each `###` block is appended to the living spec's
  `## Requirements` section (created at the end when missing);
- `## MODIFIED Requirements`: each `###` block replaces the requirement of the
  same name whole;
- `## REMOVED Requirements`: each `### Requirement: name` heading (or a
  bullet naming one) is dropped;
- `## RENAMED Requirements`: `- FROM: `### Requirement: old`` /
  `- TO: `### Requirement: new`` pairs rename a requirement, keeping its text.

They apply in the order RENAMED, REMOVED, MODIFIED, ADDED. A requirement is
named by its `Requirement:` name (exact, spaces at the ends ignored), or by
the id its heading starts with (`### AUTH-R2: ...`), or by its title.

An already-applied delta changes nothing (an ADDED or MODIFIED block already
there as written, a REMOVED one already gone, a RENAMED one already
renamed). A delta that cannot apply is refused with the requirement's name
(:class:`SpecDeltaError`): MODIFIED or REMOVED of a requirement that is not
there (and was not there when the change began), a name that differs only in
case or spaces from one that is, ADDED of one that exists, RENAMED of one that
does not (and did not when the change began) or onto one that does, one
requirement in two sections, MODIFIED or RENAMED on a spec that does not exist
yet. Against the base (the living spec when the change began), a requirement
the change modifies or removes that someone else changed meanwhile is a
**conflict**, as is one it modifies or renames that someone else removed, and
one the change adds that someone else added differently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from phasegate.change.markdown import line_ending, outline, split_lines
from phasegate.change.specmerge import MergeResult
from phasegate.change.specunits import Draft, Unit, parse_units, unit_key
from phasegate.errors import BadInputError

_DELTA = re.compile(r"^(ADDED|MODIFIED|REMOVED|RENAMED)\s+Requirements$", re.I)
_REQUIREMENT = re.compile(r"^requirement:\s*(.*?)\s*$", re.I)
_ID = re.compile(
    r"^([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*?-?[A-Za-z]*\d+[A-Za-z0-9.]*)\s*[:.)\-–—]"
)
_NAMED = re.compile(r"^`?\s*#{1,6}\s*(.+?)\s*`?\s*$")
_BULLET = re.compile(r"^[-*+]\s+`?\s*#{1,6}\s*(.+?)\s*`?\s*$")
_PAIR = re.compile(r"^(?:[-*+]\s*)?(FROM|TO)\s*:\s*(.+?)\s*$", re.I)
_REQUIREMENTS = "title:requirements"


class SpecDeltaError(BadInputError):
    """An OpenSpec delta that cannot apply to the living spec (naming the requirement).

    ``section`` (``MODIFIED``...) and ``requirement`` (its name, as
    :func:`requirement_name` gives it) say where in the delta, for :func:`delta_place`;
    ``place`` is the 1-based ``(line, column)`` when known already.
    """

    def __init__(
        self,
        message: str,
        *,
        section: str | None = None,
        requirement: str | None = None,
        place: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message)
        self.section, self.requirement, self.place = section, requirement, place


#: A heading meant as a delta section but not written as one (``## ADDED Requirement``,
#: ``## Removed requirements:``, ``## ADDED``).
_DELTA_LIKE = re.compile(r"^(ADDED|MODIFIED|REMOVED|RENAMED)(?:\s+Requirements?)?\s*:?$", re.I)


def refuse_delta_heading_typos(text: str) -> None:
    """Refuse a change spec with a heading meant as a delta section that is not one: a
    delta would skip that section, a full version would replace the living spec whole."""
    lines = split_lines(text)
    for heading in outline(text).headings:
        title = " ".join(heading.title.strip("*_ ").split())
        found = _DELTA_LIKE.match(title)
        if found is None or (heading.level == 2 and _DELTA.match(heading.title)):
            continue
        if heading.level != 2 and "requirement" not in title.lower():
            continue  # a changelog's "### Added" in a full version, not a delta section
        line = lines[heading.line] if heading.line < len(lines) else ""
        written = line.strip()
        meant = f"## {found.group(1).upper()} Requirements"
        raise SpecDeltaError(
            f"{written!r} is not an OpenSpec delta section heading; write {meant!r}",
            place=(heading.line + 1, line.find("#") + 1 if "#" in line else 1),
        )


def delta_place(text: str, section: str, requirement: str) -> tuple[int, int] | None:
    """1-based ``(line, column)`` in the delta ``text`` of the heading (or bullet) naming
    ``requirement`` in its ``section`` Requirements section; ``None`` when not found."""
    lines = split_lines(text)
    parsed = outline(text)
    fenced = [(f.line, f.end) for f in parsed.fences]
    sections = [h for h in parsed.headings if h.level <= 2]
    for position, heading in enumerate(sections):
        match = _DELTA.match(heading.title)
        if match is None or match.group(1).upper() != section:
            continue
        end = sections[position + 1].line if position + 1 < len(sections) else len(lines)
        for n in range(heading.line + 1, end):
            line = lines[n]
            if any(start <= n < stop for start, stop in fenced):
                continue
            title = _requirement_title(line.strip(), section)
            if title is not None and requirement_name(title) == requirement:
                column = line.find("#") if "#" in line else len(line) - len(line.lstrip())
                return n + 1, column + 1
    return None


def _requirement_title(line: str, section: str) -> str | None:
    """The requirement a delta's line names (a ``###`` heading, a bullet, a FROM/TO)."""
    if line.startswith("###") and not line.startswith("####"):
        return line.lstrip("#").strip()
    if section == "RENAMED":
        pair = _PAIR.match(line)
        if pair is None:
            return None
        named = _NAMED.match(pair.group(2))
        return named.group(1) if named else pair.group(2).strip("` ")
    bullet = _BULLET.match(line)
    return bullet.group(1) if bullet is not None else None


@dataclass
class Delta:
    """The operations of a delta spec."""

    added: list[Unit] = field(default_factory=list)
    modified: list[Unit] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    purpose: Unit | None = None


def is_delta(text: str) -> bool:
    """Whether a change spec is an OpenSpec delta (an ADDED/MODIFIED/... Requirements section)."""
    return any(h.level == 2 and _DELTA.match(h.title) for h in outline(text).headings)


def requirement_name(title: str) -> str:
    """How a delta names a requirement: ``Requirement: name``, ``id:AUTH-R2``, or its title."""
    clean = " ".join(title.split())
    match = _REQUIREMENT.match(clean)
    if match:
        return f"Requirement: {match.group(1)}"
    found = _ID.match(clean.strip("*_` "))
    return f"id:{found.group(1).upper()}" if found else clean


def _fold(name: str) -> str:
    return " ".join(name.lower().split())


def _header(name: str) -> str:
    return f"### {name.removeprefix('id:')}"


def parse_delta(text: str) -> Delta:
    """The operations a delta spec lists, in document order within each section."""
    delta = Delta()
    lines = split_lines(text)
    parsed = outline(text)
    sections = [h for h in parsed.headings if h.level <= 2]
    for position, heading in enumerate(sections):
        end = sections[position + 1].line if position + 1 < len(sections) else len(lines)
        match = _DELTA.match(heading.title)
        if match is None:
            if heading.title.strip().lower() == "purpose":
                delta.purpose = Unit(
                    (unit_key(heading.title), ""), heading.title, "section",
                    (unit_key(heading.title), ""), tuple(lines[heading.line : end]),
                )  # fmt: skip
            continue
        kind = match.group(1).upper()
        blocks = [
            u
            for u in parse_units("".join(lines[heading.line : end]), items=False)
            if u.kind == "block"
        ]
        if kind == "ADDED":
            delta.added += [_tidy(u) for u in blocks]
        elif kind == "MODIFIED":
            delta.modified += [_tidy(u) for u in blocks]
        else:
            fenced = [(f.line, f.end) for f in parsed.fences]
            texts = [
                lines[n]
                for n in range(heading.line + 1, end)
                if not any(start <= n < stop for start, stop in fenced)
            ]
            if kind == "REMOVED":
                delta.removed += [requirement_name(u.title) for u in blocks]
                delta.removed += [
                    requirement_name(named.group(1))
                    for t in texts
                    if (named := _BULLET.match(t.strip())) is not None
                ]
            else:
                delta.renamed += _pairs(texts)
    return delta


def _tidy(block: Unit) -> Unit:
    """A delta block with the spaces after its heading dropped (``### Requirement: X   ``)."""
    first = block.lines[0]
    ending = first[len(first.rstrip("\r\n")) :]
    return replace(block, lines=(first.rstrip() + ending, *block.lines[1:]))


def _pairs(texts: list[str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    source: str | None = None
    for line in texts:
        match = _PAIR.match(line.strip())
        if match is None:
            continue
        named = _NAMED.match(match.group(2))
        title = named.group(1) if named else match.group(2).strip("` ")
        if match.group(1).upper() == "FROM":
            source = title
        elif source is not None:
            pairs.append((source, title))
            source = None
    return pairs


def apply_delta(
    base: str | None,
    living: str | None,
    change: str,
    *,
    prefer_change: bool = False,
    name: str | None = None,
) -> MergeResult:
    """Apply the delta spec ``change`` to ``living`` (``base``: living when the change began)."""
    delta = parse_delta(change)
    _validate(delta)
    result = MergeResult("", delta=True)
    eol = line_ending(living or change)
    draft = Draft(living, eol=eol, items=False)
    if living is None:
        if delta.modified or delta.renamed:
            raise SpecDeltaError(
                "the spec does not exist yet, so only ADDED requirements can create it "
                "(MODIFIED and RENAMED need an existing spec)"
            )
        if delta.removed:
            result.notes.append(
                f"{len(delta.removed)} REMOVED requirement(s) ignored: the spec does not exist yet"
            )
            delta.removed = []
        if not delta.added:
            return result
        if name:
            draft.insert(0, Unit(("", ""), name, "preamble", ("", ""), (f"# {name}{eol}",)))
        if delta.purpose is not None:
            draft.insert(len(draft.entries), delta.purpose)
        result.changed.append("(new spec)")
    _Applier(draft, delta, base, result, prefer_change).run()
    result.text = draft.render()
    return result


def _validate(delta: Delta) -> None:
    """Refuse a delta that contradicts itself, before anything is applied."""
    added = [requirement_name(u.title) for u in delta.added]
    modified = [requirement_name(u.title) for u in delta.modified]
    sources = [requirement_name(a) for a, _ in delta.renamed]
    targets = [requirement_name(b) for _, b in delta.renamed]
    if not (added or modified or delta.removed or delta.renamed):
        raise SpecDeltaError(
            "its ADDED/MODIFIED/REMOVED/RENAMED Requirements sections list no requirement"
        )
    for section, names in (
        ("ADDED", added),
        ("MODIFIED", modified),
        ("REMOVED", delta.removed),
        ("RENAMED FROM", sources),
        ("RENAMED TO", targets),
    ):
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise SpecDeltaError(
                f"{section} lists {_header(twice[0])!r} twice",
                section=section.split()[0],
                requirement=twice[0],
            )
    for one, two, a, b in (
        ("MODIFIED", "REMOVED", modified, delta.removed),
        ("MODIFIED", "ADDED", modified, added),
        ("ADDED", "REMOVED", added, delta.removed),
    ):
        both = [n for n in a if n in b]
        if both:
            raise SpecDeltaError(
                f"{_header(both[0])!r} is in both {one} and {two}",
                section=two,
                requirement=both[0],
            )
    removed_folds = {_fold(n): n for n in delta.removed}
    for source, target in zip(sources, targets, strict=True):
        if _fold(source) in removed_folds:
            raise SpecDeltaError(
                f"{_header(source)!r} is both RENAMED and REMOVED",
                section="REMOVED",
                requirement=removed_folds[_fold(source)],
            )
        if source in modified:
            raise SpecDeltaError(
                f"MODIFIED names {_header(source)!r}, which RENAMED renames; "
                f"use its new name {_header(target)!r}",
                section="MODIFIED",
                requirement=source,
            )
        if target in added:
            raise SpecDeltaError(
                f"RENAMED TO {_header(target)!r} collides with an ADDED one",
                section="RENAMED",
                requirement=target,
            )


class _Applier:
    """The operations in order, RENAMED -> REMOVED -> MODIFIED -> ADDED, on the living draft."""

    def __init__(
        self, draft: Draft, delta: Delta, base: str | None, result: MergeResult, prefer: bool
    ) -> None:
        self.draft, self.delta, self.result, self.prefer = draft, delta, result, prefer
        self.base = {
            requirement_name(u.title): u
            for u in parse_units(base or "", items=False)
            if u.kind == "block"
        }
        self.origin: dict[str, str] = {}  # a renamed requirement's name -> its name in the base

    def run(self) -> None:
        for source, target in self.delta.renamed:
            self.rename(source, target)
        for removed in self.delta.removed:
            self.remove(removed)
        for block in self.delta.modified:
            self.modify(block)
        for block in self.delta.added:
            self.add(block)

    def find(self, name: str) -> int | None:
        for index, entry in enumerate(self.draft.entries):
            if entry.unit.kind == "block" and requirement_name(entry.unit.title) == name:
                return index
        return None

    def refuse_near_miss(self, section: str, name: str, but_not: str | None = None) -> None:
        for entry in self.draft.entries:
            other = requirement_name(entry.unit.title)
            kind = entry.unit.kind
            if kind == "block" and other not in (name, but_not) and _fold(other) == _fold(name):
                raise SpecDeltaError(
                    f"{section} {_header(name)!r} is not in the living spec, but "
                    f"{_header(other)!r} is; write its name exactly",
                    section=section,
                    requirement=name,
                )

    def in_base(self, name: str) -> Unit | None:
        return self.base.get(self.origin.get(name, name))

    def rename(self, source_title: str, target_title: str) -> None:
        source, target = requirement_name(source_title), requirement_name(target_title)
        at = self.find(source)
        if at is None:
            self.refuse_near_miss("RENAMED", source, but_not=target)
            if self.find(target) is not None:
                self.result.notes.append(f"{_header(source)} is already renamed")
                return
            found = self.in_base(source)
            if found is None:
                raise SpecDeltaError(
                    f"RENAMED {_header(source)!r} is not in the living spec",
                    section="RENAMED",
                    requirement=source,
                )
            # It was there when the change began: removed (or renamed) since, a conflict.
            # What the delta does to it under its new name is judged against the base.
            self.origin[target] = self.origin.get(source, source)
            if not self.prefer:
                self.result.conflicts.append(source_title.strip())
                return
            ending = found.lines[0][len(found.lines[0].rstrip("\r\n")) :] or self.draft.eol
            heading = f"### {target_title.strip()}{ending}"
            self.insert(
                replace(found, title=target_title.strip(), lines=(heading, *found.lines[1:]))
            )
            return
        if self.find(target) is not None:
            raise SpecDeltaError(
                f"RENAMED TO {_header(target)!r} is already in the living spec",
                section="RENAMED",
                requirement=target,
            )
        unit = self.draft.entries[at].unit
        ending = unit.lines[0][len(unit.lines[0].rstrip("\r\n")) :] or self.draft.eol
        heading = f"### {target_title.strip()}{ending}"
        renamed = replace(unit, title=target_title, key=(unit.key[0], unit_key(target_title)))
        self.draft.replace(at, renamed, lines=(heading, *unit.lines[1:]))
        self.origin[target] = self.origin.get(source, source)
        self.result.changed.append(f"{_header(source)} renamed to {_header(target)}")

    def remove(self, name: str) -> None:
        at = self.find(name)
        if at is None:
            self.refuse_near_miss("REMOVED", name)
            if self.in_base(name) is None:
                raise SpecDeltaError(
                    f"REMOVED {_header(name)!r} is not in the living spec",
                    section="REMOVED",
                    requirement=name,
                )
            self.result.notes.append(f"{_header(name)} is already removed")
            return
        unit = self.draft.entries[at].unit
        if not self.untouched(name, unit):
            self.result.conflicts.append(unit.title)
            return
        self.draft.delete(at)
        self.result.changed.append(f"{unit.title} (removed)")

    def modify(self, block: Unit) -> None:
        name = requirement_name(block.title)
        at = self.find(name)
        if at is None:
            self.refuse_near_miss("MODIFIED", name)
            if self.in_base(name) is None:
                raise SpecDeltaError(
                    f"MODIFIED {_header(name)!r} is not in the living spec",
                    section="MODIFIED",
                    requirement=name,
                )
            if not self.prefer:  # it was there when the change began: removed since
                self.result.conflicts.append(block.title)
                return
            self.insert(block)
            return
        unit = self.draft.entries[at].unit
        if unit.normalized == block.normalized:
            return  # already applied
        if not self.untouched(name, unit):
            self.result.conflicts.append(block.title)
            return
        self.draft.replace(at, replace(block, key=unit.key, owner=unit.owner))
        self.result.changed.append(f"{block.title} (modified)")

    def add(self, block: Unit) -> None:
        name = requirement_name(block.title)
        at = self.find(name)
        if at is None:
            self.insert(block)
            return
        unit = self.draft.entries[at].unit
        if unit.normalized == block.normalized:
            return  # already applied
        if self.in_base(name) is not None:
            raise SpecDeltaError(
                f"ADDED {_header(name)!r} is already in the living spec; "
                "change an existing requirement with MODIFIED",
                section="ADDED",
                requirement=name,
            )
        if not self.prefer:  # someone else added one of that name meanwhile
            self.result.conflicts.append(block.title)
            return
        self.draft.replace(at, replace(block, key=unit.key, owner=unit.owner))
        self.result.changed.append(f"{block.title} (added)")

    def untouched(self, name: str, unit: Unit) -> bool:
        """Whether the living requirement is as the change found it (or conflicts are resolved)."""
        base = self.in_base(name)
        if base is None or self.prefer:
            return True
        if name in self.origin:  # renamed by this delta: compare what follows the heading
            return _body(unit) == _body(base)
        return unit.normalized == base.normalized

    def insert(self, block: Unit) -> None:
        at = self.requirements_end()
        key = (_REQUIREMENTS, unit_key(block.title))
        self.draft.insert(at, Unit(key, block.title, "block", key, block.lines))
        self.result.changed.append(f"{block.title} (added)")

    def requirements_end(self) -> int:
        """After the last unit of the living spec's Requirements section (made when missing)."""
        entries = self.draft.entries
        start = next(
            (
                i
                for i, e in enumerate(entries)
                if e.unit.kind == "section" and re.match(r"^requirements\b", e.unit.title.lower())
            ),
            None,
        )
        if start is None:
            eol = self.draft.eol
            head = Unit(
                (_REQUIREMENTS, ""), "Requirements", "section", (_REQUIREMENTS, ""),
                (f"## Requirements{eol}",),
            )  # fmt: skip
            self.draft.insert(len(entries), head)
            return len(entries)
        index = start + 1
        while index < len(entries) and entries[index].unit.kind not in ("section", "preamble"):
            index += 1
        return index


def _body(unit: Unit) -> str:
    return unit.normalized.split("\n", 1)[1] if "\n" in unit.normalized else ""
