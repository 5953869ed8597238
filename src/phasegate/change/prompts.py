"""What each agent of the change workflow is shown: its template plus only the inputs it needs.

Templates ship in ``workflow/builtin/prompts/change/`` and can be overridden
file by file in ``.phasegate/prompts/change/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from phasegate.agents.base import PromptPart
from phasegate.change.handle import Change
from phasegate.change.review import CREATE_REVIEW_SCHEMA, Finding
from phasegate.change.state import ChallengeIssue, ChangeState
from phasegate.change.tasks import Layer
from phasegate.engine.prompting import MAX_ARTIFACT_CHARS, clip, implementation_changes
from phasegate.workflow.prompts import render

Prompt = tuple[str, tuple[PromptPart, ...]]


def _read(path: Any) -> str | None:
    try:
        return str(path.read_text(encoding="utf-8", errors="replace"))
    except (FileNotFoundError, IsADirectoryError):
        return None


def _instructions(
    change: Change,
    state: ChangeState,
    template: str,
    step: str,
    role: str,
    artifact: str,
    limit: int,
) -> str:
    if role in ("implementer", "reviewer"):
        iteration = state.impl.iteration if state.impl else 1
    else:
        iteration = state.plan.iteration if state.plan else 1
    values = {
        "item": change.id,
        "description": state.description,
        "workflow": change.loaded.workflow.name,
        "phase": step,
        "mode": state.mode,
        "artifact": artifact,
        "artifact_path": change.rel(change.dir / artifact) if artifact else "",
        "item_dir": change.rel(change.dir),
        "iteration": iteration,
        "max_iterations": limit,
        "role": role,
    }
    text = change.loaded.template(template).read_text(encoding="utf-8")
    return render(text, values)


def _change_part(
    change: Change, state: ChangeState, step: str, writes: Sequence[str]
) -> PromptPart:
    lines = [
        f"- Change: {change.id}",
        f"- Request: {state.description or '(none given)'}",
        f"- Phase (STATE.yaml): {state.phase.value}; step: {step}",
        f"- Change folder: {change.rel(change.dir)}",
        f"- Living specs: {change.rel(change.living_specs_dir)}",
    ]
    if writes:
        lines.append("- Write: " + ", ".join(change.rel(change.dir / w) for w in writes))
    return PromptPart("Change", "\n".join(lines))


def _file_part(change: Change, title: str, relative: str) -> PromptPart | None:
    text = _read(change.dir / relative)
    if text is None:
        return None
    return PromptPart(
        f"{title}: {change.rel(change.dir / relative)}", clip(text, MAX_ARTIFACT_CHARS)
    )


def _specs_parts(change: Change, names: Iterable[str] | None = None) -> list[PromptPart]:
    wanted = change.spec_files() if names is None else list(names)
    parts = []
    for name in wanted:
        part = _file_part(change, "Change spec", f"specs/{name}")
        if part is not None:
            parts.append(part)
    return parts


def _living_index(change: Change) -> PromptPart:
    root = change.living_specs_dir
    names = (
        sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")) if root.is_dir() else []
    )
    body = "\n".join(f"- {change.rel(root / n)}" for n in names) or "(none yet)"
    return PromptPart("Living specs (read those this change touches)", body)


def _finish(change: Change, instructions: str, parts: list[PromptPart | None]) -> Prompt:
    redactor = change.item.redactor
    kept = tuple(PromptPart(p.title, redactor.text(p.body)) for p in parts if p is not None)
    return redactor.text(instructions), kept


def proposal_prompt(change: Change, state: ChangeState, limit: int) -> Prompt:
    text = _instructions(
        change, state, "proposal.md", "proposal", "proposal-author", "proposal.md", limit
    )
    return _finish(
        change,
        text,
        [_change_part(change, state, "proposal", ["proposal.md"]), _living_index(change)],
    )


def spec_prompt(
    change: Change, state: ChangeState, name: str | None, done: Sequence[str], limit: int
) -> Prompt:
    """One spec (``name``) after the ``done`` ones, or every spec at once when ``name`` is None."""
    artifact = f"specs/{name}" if name else "specs/"
    text = _instructions(change, state, "spec.md", "specs", "proposal-author", artifact, limit)
    parts: list[PromptPart | None] = [
        _change_part(change, state, "specs", [artifact]),
        _file_part(change, "Proposal", "proposal.md"),
        *_specs_parts(change, done),
    ]
    if name is not None:
        living = _read(change.living_specs_dir / name)
        parts.append(
            PromptPart(
                f"Living spec now: {change.rel(change.living_specs_dir / name)}",
                clip(living, MAX_ARTIFACT_CHARS) if living is not None else "(does not exist yet)",
            )
        )
    else:
        parts.append(_living_index(change))
    return _finish(change, text, parts)


def tasks_prompt(change: Change, state: ChangeState, limit: int) -> Prompt:
    text = _instructions(change, state, "tasks.md", "tasks", "proposal-author", "tasks.md", limit)
    parts: list[PromptPart | None] = [
        _change_part(change, state, "tasks", ["tasks.md"]),
        _file_part(change, "Proposal", "proposal.md"),
        *_specs_parts(change),
    ]
    return _finish(change, text, parts)


def _plan_parts(change: Change) -> list[PromptPart | None]:
    return [
        _file_part(change, "Proposal", "proposal.md"),
        *_specs_parts(change),
        _file_part(change, "Tasks", "tasks.md"),
    ]


def challenge_prompt(
    change: Change, state: ChangeState, limit: int, schema: dict[str, Any]
) -> Prompt:
    text = _instructions(change, state, "challenger.md", "challenge", "challenger", "", limit)
    answer = PromptPart(
        "Your answer",
        "Answer with only a JSON object matching this schema. APPROVED only when no issue is "
        "high-severity.\n\n```json\n" + json.dumps(schema, indent=2) + "\n```",
    )
    return _finish(
        change, text, [_change_part(change, state, "challenge", []), *_plan_parts(change), answer]
    )


def reproposal_prompt(
    change: Change, state: ChangeState, issues: Sequence[ChallengeIssue], limit: int
) -> Prompt:
    text = _instructions(
        change, state, "reproposal.md", "reproposal", "proposal-author", "proposal.md", limit
    )
    lines = ["The challenger asked for revision. Address every issue below:", ""]
    for issue in issues:
        where = f" (at {issue.location})" if issue.location else ""
        lines.append(f"- [{issue.severity}] {issue.description}{where}")
    if state.plan and state.plan.summary:
        lines += ["", f"Challenger's summary: {state.plan.summary}"]
    feedback = PromptPart("Feedback to address", "\n".join(lines))
    writes = ["proposal.md", "specs/", "tasks.md"]
    return _finish(
        change,
        text,
        [_change_part(change, state, "reproposal", writes), *_plan_parts(change), feedback],
    )


def _findings_part(title: str, findings: Sequence[Finding]) -> PromptPart:
    body = "\n".join(f"- {f.render()}" for f in findings) or "(none)"
    return PromptPart(title, body)


def implement_prompt(
    change: Change, state: ChangeState, layer: Layer, done_layers: Sequence[str], limit: int
) -> Prompt:
    text = _instructions(
        change, state, "implement.md", f"implement:{layer.key}", "implementer", "", limit
    )
    tasks = "\n".join(f"- [ ] {t.text} (tasks.md line {t.line})" for t in layer.open_tasks)
    layer_part = PromptPart(
        f"Your layer now: {layer.title}",
        f"Work only on these tasks of tasks.md ({', '.join(layer.headings) or layer.title}):\n\n"
        f"{tasks}\n\nLayers already done: {', '.join(done_layers) or 'none'}.",
    )
    parts: list[PromptPart | None] = [
        _change_part(change, state, f"implement:{layer.key}", []),
        *_plan_parts(change),
        layer_part,
    ]
    if state.impl and state.impl.findings:
        parts.append(
            _findings_part("Open findings of the last review (fix them too)", state.impl.findings)
        )
    return _finish(change, text, parts)


def fix_prompt(change: Change, state: ChangeState, limit: int) -> Prompt:
    text = _instructions(change, state, "fix.md", "fix", "implementer", "", limit)
    findings = state.impl.findings if state.impl else []
    parts: list[PromptPart | None] = [
        _change_part(change, state, "fix", []),
        _file_part(change, "Tasks", "tasks.md"),
        *_specs_parts(change),
        _findings_part("Findings to fix (from REVIEW.md)", findings),
        PromptPart("Reviewer's summary", (state.impl.summary if state.impl else "") or "(none)"),
    ]
    return _finish(change, text, parts)


def review_prompt(change: Change, state: ChangeState, limit: int, round_id: str) -> Prompt:
    text = _instructions(change, state, "reviewer.md", "review", "reviewer", "REVIEW.md", limit)
    changes = implementation_changes(change.item, state)
    submit = PromptPart(
        "How to submit your review",
        f"Call the `create_review` tool of the `phasegate` MCP server exactly once, with "
        f"change_id {change.id!r}. Its arguments:\n\n```json\n"
        + json.dumps(CREATE_REVIEW_SCHEMA, indent=2)
        + f"\n```\n\nOnly that call records a review (round {round_id}); a review given only "
        "as text is not recorded and the change is not approved.",
    )
    parts: list[PromptPart | None] = [
        _change_part(change, state, "review", []),
        *_plan_parts(change),
        PromptPart("Implementation changes", changes or "(no changes found in the work tree)"),
        submit,
    ]
    return _finish(change, text, parts)
