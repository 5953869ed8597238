"""The session's documents as the ``team`` workflow's gates read them (seed 003).

- ``spec.md``: its acceptance criteria are the list items of its "Acceptance
  criteria" section, each starting with an id (``AC-1: ...``);
- ``acceptance.json``: ``{"criteria": [{"id", "description", "check"}]}``,
  where ``check`` is the shell command that shows the criterion is met; its
  ids are exactly the spec's;
- ``architecture.md``: records its risks (a section whose heading names them);
- ``report.md``: has the four sections the Definition of Done names.

Markdown is read with markdown-it-py: a fence or a comment is never a heading
or a criterion. Each reader returns what it found and the problems, one
sentence each, that the engine feeds back to the agent that wrote the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from phasegate.change.markdown import outline
from phasegate.engine.prompting import read_file

AC_ID = re.compile(r"^\W*(AC[-_ ]?\d+)\b\W*", re.IGNORECASE)
#: The sections report.md must have (the seed's Definition of Done), as heading words.
REPORT_SECTIONS = ("what was done", "how to run", "how to test", "known issues")


@dataclass(frozen=True)
class Section:
    """A heading and the text under it (up to the next heading of the same or a higher level)."""

    title: str
    level: int
    body: str


def sections(text: str) -> list[Section]:
    """The top-level headings of ``text`` with their bodies."""
    lines = text.splitlines()
    headings = outline(text).headings
    found: list[Section] = []
    for index, heading in enumerate(headings):
        end = len(lines)
        for later in headings[index + 1 :]:
            if later.level <= heading.level:
                end = later.line
                break
        body = "\n".join(lines[heading.line + 1 : end]).strip()
        found.append(Section(heading.title, heading.level, body))
    return found


def normalized_id(raw: str) -> str:
    """``ac 1``, ``AC_1``, ``ac-1`` -> ``AC-1``."""
    digits = re.sub(r"\D", "", raw)
    return f"AC-{int(digits)}" if digits else raw.upper()


def spec_criteria(text: str) -> list[tuple[str, str]]:
    """``(id, text)`` of each criterion listed under the spec's "Acceptance criteria" heading."""
    heads = outline(text).headings
    items = outline(text).items
    found: list[tuple[str, str]] = []
    for index, heading in enumerate(heads):
        if "acceptance criteria" not in heading.title.lower():
            continue
        end = next((h.line for h in heads[index + 1 :] if h.level <= heading.level), len(text) + 1)
        for item in items:
            if heading.line < item.line < end:
                match = AC_ID.match(item.text)
                if match:
                    found.append((normalized_id(match.group(1)), item.text[match.end() :].strip()))
    return found


def spec_problems(text: str) -> list[str]:
    """Why ``spec.md`` does not state testable acceptance criteria (empty when it does)."""
    criteria = spec_criteria(text)
    if not criteria:
        return [
            "it lists no acceptance criteria: add a section '## Acceptance criteria' whose "
            "list items each start with an id ('- AC-1: ...')"
        ]
    problems = [f"criterion {cid} says nothing" for cid, body in criteria if not body]
    ids = [cid for cid, _ in criteria]
    problems += _twice(ids)
    return problems


def _twice(ids: list[str]) -> list[str]:
    return [f"criterion id {cid} is used twice" for cid in sorted(set(ids)) if ids.count(cid) > 1]


@dataclass(frozen=True)
class Criterion:
    """One acceptance criterion of acceptance.json."""

    id: str
    description: str
    check: str


def read_acceptance(path: Path) -> tuple[list[Criterion], list[str]]:
    """The criteria of ``acceptance.json`` and its problems."""
    text = read_file(path)
    if text is None or not text.strip():
        return [], ["it is missing or empty"]
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [], [f"it is not valid JSON ({exc})"]
    raw = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        return [], ['it must hold {"criteria": [{"id", "description", "check"}, ...]}']
    criteria: list[Criterion] = []
    problems: list[str] = []
    for position, entry in enumerate(raw, start=1):
        if not isinstance(entry, dict):
            problems.append(f"criterion {position} is not an object")
            continue
        cid = str(entry.get("id") or "").strip()
        description = str(entry.get("description") or "").strip()
        check = entry.get("check")
        name = cid or f"number {position}"
        if not re.fullmatch(r"AC[-_ ]?\d+", cid, re.IGNORECASE):
            problems.append(f"criterion {name} needs an id like 'AC-1'")
            continue
        if not description:
            problems.append(f"criterion {cid} has no description")
        if not isinstance(check, str) or not check.strip():
            problems.append(
                f"criterion {cid} has no check: give the shell command that shows it is met "
                "(a criterion no command can check is not testable)"
            )
            continue
        criteria.append(Criterion(normalized_id(cid), description, check.strip()))
    ids = [c.id for c in criteria]
    problems += _twice(ids)
    return criteria, problems


def acceptance_problems(path: Path, spec_path: Path) -> list[str]:
    """Problems of ``acceptance.json``, its ids checked against ``spec.md``'s criteria."""
    criteria, problems = read_acceptance(path)
    spec = read_file(spec_path)
    if spec is None or not criteria:
        return problems
    in_spec = {cid for cid, _ in spec_criteria(spec)}
    listed = {c.id for c in criteria}
    if in_spec:
        problems += [f"{cid} is in spec.md but not here" for cid in sorted(in_spec - listed)]
        problems += [f"{cid} is here but not in spec.md" for cid in sorted(listed - in_spec)]
    return problems


def architecture_problems(text: str) -> list[str]:
    """Architecture must record its risks (the DESIGN gate)."""
    for section in sections(text):
        if "risk" in section.title.lower() and section.body:
            return []
    return ["it records no risks: add a section '## Risks' (say 'none found' and why if so)"]


def report_problems(text: str) -> list[str]:
    """The Definition of Done's sections report.md lacks (or leaves empty)."""
    found = {s.title.lower(): s.body for s in sections(text)}
    problems: list[str] = []
    for wanted in REPORT_SECTIONS:
        bodies = [body for title, body in found.items() if wanted in title]
        if not bodies:
            problems.append(f"it has no section '{wanted.capitalize()}'")
        elif not any(bodies):
            problems.append(f"its section '{wanted.capitalize()}' is empty")
    return problems


def example_spec(description: str) -> str:
    """A minimal valid spec.md (for the ``auto`` backend)."""
    goal = " ".join(description.split()) or "the requested change"
    return (
        f"# Spec\n\n## Goal\n\n{goal}\n\n## Acceptance criteria\n\n"
        "- AC-1: the repository still works after the change (checked by `git --version`).\n"
    )


def example_acceptance() -> str:
    """A minimal valid acceptance.json (for the ``auto`` backend)."""
    criterion = {
        "id": "AC-1",
        "description": "the repository still works after the change",
        "check": "git --version",
    }
    return json.dumps({"criteria": [criterion]}, indent=2) + "\n"


def example_report(what: str) -> str:
    """A minimal valid report.md (for the ``auto`` backend)."""
    return (
        f"# Report\n\n## What was done\n\n{what}\n\n## How to run\n\nNothing new to run.\n\n"
        "## How to test\n\nRun the acceptance checks of acceptance.json.\n\n"
        "## Known issues\n\nNone known.\n"
    )
