"""Build what each agent is shown: its instructions plus only the inputs its phase needs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from phasegate.agents.base import PromptPart
from phasegate.agents.verdict import VERDICT_SCHEMA
from phasegate.engine.workitem import Placed, WorkItem
from phasegate.state.item import Cursor, IssueRecord, ItemState
from phasegate.workflow.model import Phase
from phasegate.workflow.prompts import render

MAX_ARTIFACT_CHARS = 60_000
MAX_DIFF_CHARS = 120_000
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ANSWER_PART = PromptPart(
    "Your answer",
    "Answer with only a JSON object matching this schema. `approved` is true only "
    "when no issue is a blocker.\n\n```json\n" + json.dumps(VERDICT_SCHEMA, indent=2) + "\n```",
)


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n\n[... {len(text) - limit} more characters not shown ...]\n"


def read_artifact(item: WorkItem, name: str) -> str | None:
    """The text of artifact ``name`` in the item folder, or ``None`` if absent."""
    try:
        return item.artifact_path(name).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return None


def template_values(
    item: WorkItem, state: ItemState, phase: Phase, iteration: int
) -> dict[str, object]:
    artifact_path = (
        item.relative(item.artifact_path(phase.artifact), state) if phase.artifact else ""
    )
    return {
        "item": item.name,
        "description": state.description,
        "workflow": item.workflow.name,
        "phase": phase.name,
        "mode": state.mode,
        "artifact": phase.artifact or "",
        "artifact_path": artifact_path,
        "item_dir": item.relative(item.item_dir, state),
        "iteration": iteration,
        "max_iterations": item.workflow.max_iterations(state.mode),
    }


def _instructions(item: WorkItem, template: str, values: dict[str, object]) -> str:
    text = item.loaded.template(template).read_text(encoding="utf-8")
    return render(text, values)


def _work_item_part(item: WorkItem, state: ItemState, phase: Phase, iteration: int) -> PromptPart:
    limit = item.workflow.max_iterations(state.mode)
    lines = [
        f"- Work item: {item.name} (workflow {item.workflow.name}, mode {state.mode})",
        f"- Request: {state.description or '(none given)'}",
        f"- Phase: {phase.name} - {phase.description}".rstrip(" -"),
        f"- Item folder: {item.relative(item.item_dir, state)}",
        f"- Review iteration: {iteration} of at most {limit}",
    ]
    if phase.artifact:
        lines.append(
            f"- Artifact to produce: {item.relative(item.artifact_path(phase.artifact), state)}"
        )
    return PromptPart("Work item", "\n".join(lines))


def _feedback_part(feedback: list[IssueRecord]) -> PromptPart:
    lines = ["The previous iteration was not approved. Address every issue below:", ""]
    for issue in feedback:
        where = f" (at {issue.location})" if issue.location else ""
        lines.append(f"- [{issue.severity}] {issue.description}{where}")
    return PromptPart("Feedback to address", "\n".join(lines))


def executor_prompt(
    item: WorkItem, state: ItemState, phase: Phase, cursor: Cursor
) -> tuple[str, tuple[PromptPart, ...]]:
    """Instructions and prompt parts for the executor of ``phase``."""
    values = template_values(item, state, phase, cursor.iteration)
    instructions = _instructions(item, phase.executor_prompt or f"{phase.name}.md", values)
    parts = [_work_item_part(item, state, phase, cursor.iteration)]
    for name in phase.inputs:
        text = read_artifact(item, name)
        if text is not None:
            parts.append(PromptPart(f"Input: {name}", clip(text, MAX_ARTIFACT_CHARS)))
    if cursor.feedback:
        parts.append(_feedback_part(cursor.feedback))
        if phase.artifact and read_artifact(item, phase.artifact) is not None:
            parts.append(
                PromptPart(
                    f"Current {phase.artifact} (revise it)",
                    clip(read_artifact(item, phase.artifact) or "", MAX_ARTIFACT_CHARS),
                )
            )
    return item.redactor.text(instructions), _redacted(item, parts)


def reviewer_prompt(
    item: WorkItem, state: ItemState, phase: Phase, cursor: Cursor, changes: str | None
) -> tuple[str, tuple[PromptPart, ...]]:
    """Instructions and prompt parts for the reviewer of ``phase``."""
    assert phase.reviewer is not None
    values = template_values(item, state, phase, cursor.iteration)
    instructions = _instructions(item, phase.reviewer_prompt or f"{phase.reviewer}.md", values)
    parts = [_work_item_part(item, state, phase, cursor.iteration)]
    if phase.previous:
        previous = read_artifact(item, phase.previous)
        parts.append(
            PromptPart(
                f"Previous artifact: {phase.previous}",
                clip(previous, MAX_ARTIFACT_CHARS) if previous is not None else "(none)",
            )
        )
    if phase.artifact:
        current = read_artifact(item, phase.artifact) or ""
        parts.append(
            PromptPart(f"Current artifact: {phase.artifact}", clip(current, MAX_ARTIFACT_CHARS))
        )
    if changes is not None:
        parts.append(PromptPart("Implementation changes", changes))
    parts.append(PromptPart("What the next phase needs", phase.expectations or "(not stated)"))
    parts.append(ANSWER_PART)
    return item.redactor.text(instructions), _redacted(item, parts)


def _redacted(item: WorkItem, parts: list[PromptPart]) -> tuple[PromptPart, ...]:
    return tuple(PromptPart(p.title, item.redactor.text(p.body)) for p in parts)


def implementation_changes(item: WorkItem, state: Placed) -> str:
    """The work tree's changes since the item began (diff plus new files), item folder excluded."""
    workdir = item.workdir(state)
    excludes = [":(exclude).phasegate"]
    item_dir = item.relative(item.item_dir, state)
    if not Path(item_dir).is_absolute():  # a pathspec outside the worktree fails the diff
        excludes.append(f":(exclude){item_dir}")
    base = state.base_commit or EMPTY_TREE
    diff = _git(workdir, ["diff", "--no-color", "--no-ext-diff", base, "--", ".", *excludes])
    untracked = _git(workdir, ["ls-files", "--others", "--exclude-standard", "--", ".", *excludes])
    sections: list[str] = []
    if diff.strip():
        sections.append("```diff\n" + diff.rstrip() + "\n```")
    for name in [n for n in untracked.splitlines() if n.strip()]:
        path = workdir / name
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except (OSError, IsADirectoryError):
            continue
        sections.append(f"New file `{name}`:\n\n```\n{content.rstrip()}\n```")
    return clip("\n\n".join(sections), MAX_DIFF_CHARS)


def _git(workdir: Path, args: list[str]) -> str:
    out = subprocess.run(
        ["git", "-C", str(workdir), *args],
        capture_output=True,
        text=True,
        check=False,
        errors="replace",
    )
    return out.stdout if out.returncode == 0 else ""
