"""Seed 004's context package: CONTEXT / TASK / SUCCESS / EXCLUDE, bounded.

The specification documents (BRD.md, PRD.md, SDD.md next to PLAN.md, each
when it exists) are read once, when the run starts, and kept in the engine
state. Each prompt carries a bounded package built from them:

- a document up to ``context_chars`` characters (default 6000) is given whole;
- a longer one is given as its outline (every heading) followed by the
  sections that share the most words with the task, as many as fit in
  ``context_chars``, with its path so the agent can read the rest itself.

The package also names the phase, the tasks already done, the task with its
sub-items, what counts as done, and what is out of scope (the other open
tasks, PLAN.md's checkboxes, phasegate's state files).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.implement.outline import strip_bom

DOCUMENTS = ("BRD.md", "PRD.md", "SDD.md")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_WORD = re.compile(r"[a-z][a-z0-9]{2,}")


def load_documents(spec_dir: Path) -> dict[str, str]:
    """The specification documents of ``spec_dir`` that exist, by file name."""
    found: dict[str, str] = {}
    for name in DOCUMENTS:
        path = spec_dir / name
        try:
            found[name] = strip_bom(path.read_bytes().decode("utf-8", errors="replace"))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            continue
    return found


@dataclass(frozen=True)
class _Section:
    heading: str
    text: str


def _sections(text: str) -> list[_Section]:
    sections: list[_Section] = []
    heading, fence = "(start)", False
    lines: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        match = None if fence else _HEADING.match(line)
        if match:
            if any(x.strip() for x in lines):
                sections.append(_Section(heading, "\n".join(lines).strip()))
            heading, lines = line.strip(), []
        else:
            lines.append(line)
    if any(x.strip() for x in lines):
        sections.append(_Section(heading, "\n".join(lines).strip()))
    return sections


def bounded_document(text: str, task_text: str, limit: int) -> str:
    """``text`` whole when it fits in ``limit``, else its outline and the most relevant sections."""
    if len(text) <= limit:
        return text.strip()
    sections = _sections(text)
    outline = "\n".join(s.heading for s in sections if s.heading != "(start)")
    wanted = set(_WORD.findall(task_text.lower()))

    def overlap(section: _Section) -> int:
        return len(wanted & set(_WORD.findall(f"{section.heading} {section.text}".lower())))

    ranked = sorted((s for s in sections if overlap(s) > 0), key=lambda s: -overlap(s))
    parts = [f"Outline:\n{outline}" if outline else "", "Sections relevant to this task:"]
    used = sum(len(p) for p in parts)
    for section in ranked:
        piece = f"{section.heading}\n{section.text}"
        if used + len(piece) > limit:
            piece = piece[: max(limit - used, 0)].rstrip()
            if len(piece) > 200:
                parts.append(piece + "\n[...]")
            break
        parts.append(piece)
        used += len(piece)
    if len(parts) == 2:
        parts.append("(none share words with the task; read the document for the rest)")
    return "\n\n".join(p for p in parts if p)


def context_package(
    *,
    spec_dir: str,
    documents: Mapping[str, str],
    limit: int,
    phase: str,
    done: Sequence[str],
    task: Mapping[str, Any],
    checkpoints: Sequence[str],
    checks: Sequence[str],
    others: Sequence[str],
    plan: str,
    state_file: str,
) -> str:
    """The bounded prompt of one task (seed 004's Agent Invocation Pattern)."""
    title = str(task.get("title", ""))
    details = str(task.get("details") or "").strip()
    task_text = f"{title}\n{details}"
    context = [f"Specification: {spec_dir}/ ({', '.join(documents) or 'no BRD, PRD or SDD'})"]
    for name, text in documents.items():
        body = bounded_document(text, task_text, limit)
        context.append(f"--- {spec_dir}/{name} ---\n{body}")
    context.append(f"Plan phase: {phase}")
    context.append("Dependencies completed: " + ("; ".join(done) if done else "none (first task)"))
    success = [
        "Task complete when every sub-item above is done",
        "the project's checks pass" + (f" ({', '.join(checks)})" if checks else ""),
    ]
    success += [f"the phase's validation holds: {c}" for c in checkpoints]
    lines = [
        "CONTEXT:",
        "\n\n".join(context),
        "",
        "TASK:",
        title + (f"\n{details}" if details else ""),
        "",
        "SUCCESS: " + "; ".join(success) + ".",
        "",
        "EXCLUDE: "
        + "; ".join(
            [
                "the other tasks of the plan, which come in their own turn"
                + (
                    f" ({'; '.join(others[:12])}{'; ...' if len(others) > 12 else ''})"
                    if others
                    else ""
                ),
                f"ticking checkboxes in {plan} (phasegate ticks them once the task is approved)",
                f"editing {state_file} or .phasegate/",
            ]
        )
        + ".",
    ]
    return "\n".join(lines)


def _listed(titles: Sequence[str], shown: int = 12) -> str:
    if not titles:
        return ""
    more = "; ..." if len(titles) > shown else ""
    return f" ({'; '.join(titles[:shown])}{more})"


def review_request(
    *,
    cycle: int,
    max_cycles: int,
    task: str,
    implementer: str,
    summary: str,
    files: Sequence[str],
    focus: Sequence[str],
    previous: Sequence[str],
    aspects: Sequence[str],
) -> str:
    """Seed 004's reviewer prompt (Review Selection Pattern, step 4)."""
    changed = (summary.strip() or "(the implementer gave no summary)") + (
        f"\nFiles changed: {', '.join(files)}" if files else "\nFiles changed: none found"
    )
    lines = [
        f"REVIEW REQUEST [Cycle: {cycle}/{max_cycles}]",
        f"Original Task: {task}",
        f"Implemented by: {implementer}",
        f"Changes Made: {changed}",
        f"Focus Areas: {', '.join(focus) or 'general quality'}",
    ]
    if previous:
        lines.append("Previous Issues: " + "; ".join(previous))
    lines.append(
        "Please review for: " + (", ".join(aspects) or "correctness, tests, and the task's scope")
    )
    return "\n".join(lines)
