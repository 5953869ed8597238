"""Merge a change's spec into the living spec, three ways, unit by unit (or apply its deltas).

A change spec is either the **full new version** of the spec, or an
**OpenSpec delta** (`## ADDED Requirements`, `## MODIFIED Requirements`,
`## REMOVED Requirements`, `## RENAMED Requirements`; see
:mod:`phasegate.change.specdelta`).

A full version is merged against the base (the living spec when the change
began) unit by unit (see :mod:`phasegate.change.specunits` for the units):

- the change left a unit as it was -> the living version stays;
- only the change edited it -> the change's version;
- both edited it, the same way -> kept; differently -> a conflict;
- a new unit -> added after its neighbour in the change's spec; one someone
  else added differently -> a conflict;
- a unit of the base the change leaves out (or whose body is just
  ``REMOVED``) -> deleted when the living unit still equals the base, a
  conflict when it does not; a rename is a delete plus an add, and so is a
  move to another ``##`` section.

A merge that changes nothing returns the living text itself, byte for byte;
what it changes is written in the living spec's line endings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from phasegate.change.markdown import line_ending
from phasegate.change.specunits import Draft, Key, Unit, parse_units


@dataclass
class MergeResult:
    """The merged text, and the units that conflict (nothing is written when there are any).

    ``changed`` names what the merge changed (empty: ``text`` is the living
    spec unchanged); ``notes`` says what it skipped and why; ``delta`` says the
    change spec was an OpenSpec delta.
    """

    text: str
    conflicts: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    delta: bool = False


def merge_spec(
    base: str | None,
    living: str | None,
    change: str,
    *,
    prefer_change: bool = False,
    name: str | None = None,
) -> MergeResult:
    """Merge the change's version of a spec into the living one, against their common base.

    ``prefer_change`` resolves conflicts in the change's favour (a person
    merged them by hand into the change's spec). ``name`` titles a spec an
    OpenSpec delta creates. A delta that cannot apply raises
    :class:`~phasegate.change.specdelta.SpecDeltaError`.
    """
    from phasegate.change.specdelta import apply_delta, is_delta, refuse_delta_heading_typos

    refuse_delta_heading_typos(change)
    if is_delta(change):
        return apply_delta(base, living, change, prefer_change=prefer_change, name=name)
    if living is None and base is None:
        return MergeResult(change, changed=["(new spec)"])
    return _three_way(base, living, change, prefer_change)


def _three_way(base: str | None, living: str | None, change: str, prefer: bool) -> MergeResult:
    draft = Draft(living, eol=line_ending(change))
    base_units = {u.key: u for u in parse_units(base or "") if u.normalized}
    theirs = [u for u in parse_units(change) if u.normalized]
    result = MergeResult("")
    deletions: list[Key] = []
    anchor: Key | None = None
    elsewhere: dict[str, list[Unit]] = {}
    for unit in draft.units:
        if unit.key not in base_units:
            elsewhere.setdefault(unit.key[1], []).append(unit)
    for unit in theirs:
        b = base_units.get(unit.key)
        at = draft.position(unit.key)
        o = draft.entries[at].unit if at is not None else None
        if unit.removed:
            if o is not None and (b is None or _same(o, b) or prefer):
                deletions.append(unit.key)
                result.changed.append(f"{_describe(unit)} (removed)")
            elif o is not None:
                result.conflicts.append(_describe(unit))
            continue
        if b is not None and _same(unit, b):
            anchor = unit.key if o is not None else anchor
            continue  # the change left it alone
        if o is not None and _same(unit, o):
            anchor = unit.key
            continue  # already the living version (a re-run, or the same edit)
        if o is None and b is None:
            placed = _added_elsewhere(elsewhere, unit)
            if placed is not None:
                anchor = placed
                continue  # added by an earlier run, under a section another change renamed
            if not _has_parent(draft, unit):
                result.conflicts.append(_describe(unit))
                continue  # its section or requirement is gone from the living spec
        living_untouched = (o is None and b is None) or (
            o is not None and b is not None and _same(o, b)
        )
        if not living_untouched and not prefer:
            result.conflicts.append(_describe(unit))
            anchor = unit.key if o is not None else anchor
            continue
        if at is not None:
            draft.replace(at, unit)
        else:
            draft.insert(_insert_at(draft, anchor, unit), unit)
        anchor = unit.key
        result.changed.append(_describe(unit))
    ours = {u.key for u in theirs}
    for key, b in base_units.items():
        at = draft.position(key)
        if key in ours or at is None:
            continue
        if _same(draft.entries[at].unit, b) or prefer:
            deletions.append(key)
            result.changed.append(f"{_describe(b)} (removed)")
        else:
            result.conflicts.append(_describe(draft.entries[at].unit))
    _delete(draft, deletions, result, prefer)
    result.text = draft.render()
    return result


def _added_elsewhere(elsewhere: dict[str, list[Unit]], unit: Unit) -> Key | None:
    """A living unit not in the base with ``unit``'s identity and text, in another section."""
    found = [u.key for u in elsewhere.get(unit.key[1], []) if _same(u, unit)]
    return found[0] if len(found) == 1 else None


def _has_parent(draft: Draft, unit: Unit) -> bool:
    """Whether the section (of a block) or the block (of an item) of a new unit is there."""
    if unit.kind in ("item", "rest"):
        return unit.owner == ("", "") or draft.position(unit.owner) is not None
    if unit.kind == "block" and unit.key[0]:
        return draft.position((unit.key[0], "")) is not None
    return True


def _delete(draft: Draft, keys: list[Key], result: MergeResult, prefer: bool) -> None:
    """Delete ``keys``; a deleted heading whose section still holds other units is a conflict."""
    going = set(keys)
    units = draft.units
    for key in keys:
        at = draft.position(key)
        if at is None or units[at].kind in ("item", "rest"):
            continue
        unit = units[at]
        left = [u.key for u in units if _within(u, unit) and u.key not in going]
        if left and not prefer:
            result.conflicts.append(_describe(unit))
            going.discard(key)
        else:
            going.update(left)
    draft.delete_all(going)


def _within(unit: Unit, heading: Unit) -> bool:
    if unit.key == heading.key:
        return False
    if heading.kind == "section":
        return unit.key[0] == heading.key[0] and unit.kind != "preamble"
    return heading.kind == "block" and unit.owner == heading.key


def _insert_at(draft: Draft, anchor: Key | None, unit: Unit) -> int:
    """Where a new unit goes: after its neighbour in the change's spec, past that one's parts."""
    entries = draft.entries
    if unit.kind == "preamble":
        return 0
    at = draft.position(anchor) if anchor is not None else None
    if at is None:
        return 1 if entries and entries[0].unit.kind == "preamble" else 0
    index = at + 1
    if unit.kind == "section":
        while index < len(entries) and entries[index].unit.kind != "section":
            index += 1
    elif unit.kind == "block":
        while index < len(entries) and entries[index].unit.kind in ("item", "rest"):
            index += 1
    return index


def _same(a: Unit, b: Unit) -> bool:
    return a.normalized == b.normalized


def _describe(unit: Unit) -> str:
    return unit.title.strip() or "(preamble)"
