"""A PLAN.md task's metadata: ``[`agent: the-developer`]`` and ``` `[parallel: true]` ```.

Seed 004 writes metadata as ``[`key: value`]``; the-startup's plan template
also writes ``` `[key: value]` ```. Both are read, and so is ``[key: value]`` without
backticks for the keys the workflow acts on (``agent``, ``review``, ``review_focus``,
``parallel``), as a hand-written plan may spell them. Known keys are checked
(a bad value is an error naming the line); unknown keys are kept and
reported, never dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Keys the implement workflow acts on, and keys of the-startup's template it keeps.
ACTED_ON = ("agent", "review", "review_focus", "parallel")
KNOWN = (*ACTED_ON, "complexity", "risk", "blocks", "validation", "component", "ref", "activity")
# [`key: value`]  or  `[key: value]`, or [key: value] without the backticks for a key the
# workflow acts on (a hand-written plan): not read so, the task would silently run on the
# default agent, or be reviewed, with the brackets in its title.
_META = re.compile(
    r"\[`\s*(?P<k1>[A-Za-z_][\w-]*)\s*:\s*(?P<v1>[^`]*?)\s*`\]"
    r"|`\[\s*(?P<k2>[A-Za-z_][\w-]*)\s*:\s*(?P<v2>[^\]`]*?)\s*\]`"
    rf"|(?<![`\w])\[\s*(?P<k3>(?i:{'|'.join(ACTED_ON)}))\s*:\s*(?P<v3>[^\]`\[]*?)\s*\](?![`(\[])"
)
# Looks like metadata but has no "key: value".
_NEAR_MISS = re.compile(r"\[`[^`:\]]*`\]|`\[[^\]:`]*\]`")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}

_CHOICES = {
    "complexity": ("low", "medium", "high", "critical"),
    "risk": ("minimal", "moderate", "high", "critical"),
    "validation": ("unit", "integration", "manual", "automated", "performance"),
}


@dataclass
class TaskMetadata:
    """What a task's line says about how to run it."""

    values: dict[str, str] = field(default_factory=dict)
    agent: str | None = None
    review: bool | None = None
    review_focus: tuple[str, ...] = ()
    parallel: bool | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The metadata span (as written) each error or warning is about: its column is shown.
    spans: dict[str, str] = field(default_factory=dict)
    #: The ``agent`` span as written (its column is shown when the agent is not known).
    agent_span: str | None = None


def strip_metadata(text: str) -> str:
    """``text`` without its metadata spans, one line."""
    return " ".join(_META.sub(" ", text).split())


def _flag(key: str, value: str, found: TaskMetadata) -> bool | None:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    found.errors.append(f"`{key}: {value}` must be true or false")
    return None


def _areas(value: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in value.split(",") if a.strip())


def read_metadata(text: str) -> TaskMetadata:
    """The metadata spans of ``text`` (a task's first paragraph), checked."""
    found = TaskMetadata()
    for match in _META.finditer(text):
        which = next(n for n in ("1", "2", "3") if match.group(f"k{n}"))
        key = match.group(f"k{which}").lower()
        value = match.group(f"v{which}") or ""
        said = len(found.errors) + len(found.warnings)
        if key in found.values:
            found.errors.append(f"`{key}` is given twice")
        else:
            found.values[key] = value
            _apply(key, value, found)
            if key == "agent":
                found.agent_span = match.group(0)
        for message in [*found.errors, *found.warnings][said:]:
            found.spans.setdefault(message, match.group(0))
    for miss in _NEAR_MISS.finditer(_META.sub(" ", text)):
        message = f"{miss.group(0)} is not metadata (write [`key: value`])"
        found.warnings.append(message)
        found.spans.setdefault(message, miss.group(0))
    return found


def _apply(key: str, value: str, found: TaskMetadata) -> None:
    if key == "agent":
        if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", value):
            found.errors.append(f"`agent: {value}` is not an agent name")
        else:
            found.agent = value
    elif key == "review":
        lowered = value.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            found.review = lowered in _TRUE
        else:
            # the-startup's template: `review: security, authentication` asks for a review
            # with those focus areas (empty: the areas are chosen automatically).
            found.review = True
            found.review_focus = (*found.review_focus, *_areas(value))
    elif key == "review_focus":
        found.review_focus = (*found.review_focus, *_areas(value))
    elif key == "parallel":
        found.parallel = _flag(key, value, found)
    elif key in _CHOICES:
        if value.strip().lower() not in _CHOICES[key]:
            choices = ", ".join(_CHOICES[key])
            found.errors.append(f"`{key}: {value}` must be one of {choices}")
    elif key not in KNOWN:
        found.warnings.append(
            f"unknown metadata `{key}: {value}` (kept; known: {', '.join(KNOWN)})"
        )
