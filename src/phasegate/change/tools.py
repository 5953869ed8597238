"""The tools phasegate's MCP server offers agents: ``create_review`` and two read tools.

The MCP server (:mod:`phasegate.change.mcp_server`) is a thin adapter over
:class:`ChangeTools`; tests and scripted agents call the same methods. Every
bad call raises :class:`ToolCallError` with one clear line and writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.change.paths import ChangePaths, archived_folder
from phasegate.change.phases import ChangePhase, next_command
from phasegate.change.review import (
    CREATE_REVIEW_SCHEMA,
    RecordedReview,
    validate_submission,
    write_review,
)
from phasegate.change.state import ChangeState
from phasegate.change.tasks import read_tasks
from phasegate.config import Config, load_config
from phasegate.engine.item import items_dir, validate_item_name
from phasegate.errors import BadInputError, PhasegateError
from phasegate.redact import Redactor
from phasegate.state.journal import utc_now
from phasegate.state.store import parse_state
from phasegate.workflow.registry import WorkflowRegistry

#: The MCP server's name, as agents' CLIs prefix its tools (``mcp__phasegate__create_review``).
SERVER_NAME = "phasegate"


class ToolCallError(BadInputError):
    """A tool call that was refused; nothing was written."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool as agents see it: name, description, JSON schema of its arguments."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


_CHANGE_ONLY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["change_id"],
    "properties": {"change_id": {"type": "string", "description": "The change's id."}},
}

TOOLS: dict[str, ToolSpec] = {
    "create_review": ToolSpec(
        "create_review",
        "Submit your structured review of a change's implementation. It writes the change's "
        "REVIEW.md (verdict, findings with severity, file and line, tests run); only this call "
        "records a review. Allowed only while the change awaits a review.",
        CREATE_REVIEW_SCHEMA,
    ),
    "get_change": ToolSpec(
        "get_change",
        "The change's phase (STATE.yaml), request, iteration limits and files.",
        _CHANGE_ONLY,
    ),
    "get_tasks": ToolSpec(
        "get_tasks",
        "The change's tasks.md in the groups impl works through (layers Data, Logic, "
        "Integration, Testing when its sections name them, else its sections in order), "
        "each task with its line, id, parallel marker and whether it is done.",
        _CHANGE_ONLY,
    ),
}


class ChangeTools:
    """The tools, bound to a repository and optionally to one change and a tool allow-list."""

    def __init__(
        self,
        repo: Path,
        *,
        change_id: str | None = None,
        allowed: Sequence[str] | None = None,
        config: Config | None = None,
    ) -> None:
        self.repo = repo
        self.change_id = change_id
        unknown = sorted(set(allowed or ()) - set(TOOLS))
        if unknown:
            raise BadInputError(f"unknown tool(s) {', '.join(unknown)} (tools: {', '.join(TOOLS)})")
        self.allowed = tuple(allowed) if allowed is not None else tuple(TOOLS)
        self.config = config if config is not None else load_config(repo)
        self.registry = WorkflowRegistry(repo)
        self.redactor = Redactor()

    def specs(self) -> list[ToolSpec]:
        """The tools this server offers (only the allowed ones)."""
        return [TOOLS[name] for name in self.allowed]

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Run tool ``name``; raise :class:`ToolCallError` for a refused call."""
        if name not in TOOLS:
            raise ToolCallError(f"unknown tool {name!r} (tools: {', '.join(self.allowed)})")
        if name not in self.allowed:
            raise ToolCallError(
                f"tool {name!r} is not allowed here (allowed: {', '.join(self.allowed)})"
            )
        args = dict(arguments or {})
        try:
            if name == "create_review":
                result = self.create_review(args)
            elif name == "get_change":
                result = self.get_change(args)
            else:
                result = self.get_tasks(args)
        except PhasegateError as exc:
            text = self.redactor.text(str(exc))
            raise ToolCallError(
                text if text.startswith(f"{name}:") else f"{name}: {text}"
            ) from None
        # Whatever a tool returns reaches an agent: secrets in the change's files never do.
        redacted: dict[str, Any] = self.redactor.data(result)
        return redacted

    # -- the tools ------------------------------------------------------------------

    def served_change(self) -> ChangePaths | None:
        """The change this server is bound to, checked: a valid name of a change that
        exists (not archived); :class:`BadInputError` says why not."""
        if self.change_id is None:
            return None
        validate_item_name(self.change_id)
        try:
            return self._change({"change_id": self.change_id}, "get_change")
        except ToolCallError as exc:
            raise BadInputError(str(exc).removeprefix("get_change: ")) from None

    def _change(self, args: Mapping[str, Any], tool: str) -> ChangePaths:
        if tool != "create_review":  # its model refuses unknown fields the same way
            for key in args:
                if key not in _CHANGE_ONLY["properties"]:
                    raise ToolCallError(f"{tool}: {key}: unknown field")
        change_id = args.get("change_id")
        if change_id is None or change_id == "":
            raise ToolCallError(f"{tool}: change_id: required field is missing")
        if not isinstance(change_id, str):
            raise ToolCallError(
                f"{tool}: change_id: must be a string, not {type(change_id).__name__} "
                f"({change_id!r})"
            )
        if self.change_id is not None and change_id != self.change_id:
            raise ToolCallError(
                f"{tool}: change_id {change_id!r} is not the change this server serves "
                f"({self.change_id!r})"
            )
        validate_item_name(change_id)
        workflow = self.registry.get("change").workflow
        root = self.repo / items_dir(workflow, self.config)
        change = ChangePaths(self.repo, change_id, root / change_id)
        if not change.state_path.is_file():
            where = archived_folder(root, change_id)
            state = f"it was archived to {change.rel(where)}" if where else "no such change"
            raise ToolCallError(f"{tool}: change {change_id!r}: {state}")
        return change

    def _state(self, change: ChangePaths) -> ChangeState:
        path = change.state_path
        return ChangeState.from_document(parse_state(path.read_bytes(), path, "yaml"), path)

    def create_review(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Validate the review, check the change awaits one, write REVIEW.md atomically."""
        args = self.redactor.data(dict(args))
        change = self._change(args, "create_review")
        review = validate_submission(_relative_files(args, change))
        state = self._state(change)
        awaiting = (
            state.phase is ChangePhase.IMPLEMENTING
            and state.impl is not None
            and state.impl.step == "review"
        )
        if not awaiting:
            step = f", step {state.impl.step}" if state.impl else ""
            raise ToolCallError(
                f"create_review: change {change.id!r} is not awaiting a review "
                f"(phase {state.phase.value}{step}); nothing was written"
            )
        assert state.impl is not None
        round_id = state.impl.round or f"{state.epoch}.{state.impl.iteration}"
        recorded = RecordedReview(
            change_id=change.id,
            round=round_id,
            iteration=state.impl.iteration,
            created=utc_now(),
            verdict=review.verdict,
            summary=review.summary,
            findings=review.findings,
            tests_run=review.tests_run,
        )
        # The engine journals the verdict it reads from REVIEW.md after the call; the
        # journal itself is phasegate's engine's alone while an agent works.
        write_review(change.review_path, recorded)
        return {
            "written": change.rel(change.review_path),
            "change_id": change.id,
            "round": round_id,
            "verdict": review.verdict.value,
            "findings": len(review.findings),
        }

    def get_change(self, args: Mapping[str, Any]) -> dict[str, Any]:
        change = self._change(args, "get_change")
        state = self._state(change)
        files = [
            change.rel(p)
            for p in (change.proposal_path, change.tasks_path, change.review_path)
            if p.is_file()
        ] + [change.rel(change.specs_dir / n) for n in change.spec_files()]
        return {
            "change_id": change.id,
            "phase": state.phase.value,
            "description": state.description,
            "planning_iterations": state.planning_iterations,
            "implementation_iterations": state.implementation_iterations,
            "plan_step": state.plan.step if state.plan else None,
            "impl_step": state.impl.step if state.impl else None,
            "impl_iteration": state.impl.iteration if state.impl else None,
            "files": files,
            "next": next_command(state.phase, change.id, state),
        }

    def get_tasks(self, args: Mapping[str, Any]) -> dict[str, Any]:
        change = self._change(args, "get_tasks")
        tasks = read_tasks(change.tasks_path)
        return {
            "change_id": tasks.change_id,
            "change_id_from": tasks.change_id_from,
            "order": tasks.order,
            "layers": [
                {
                    "layer": layer.key,
                    "title": layer.title,
                    "tasks": [
                        {
                            "text": t.text,
                            "done": t.done,
                            "line": t.line,
                            "id": t.id,
                            "parallel": t.parallel,
                        }
                        for t in layer.tasks
                    ],
                }
                for layer in tasks.layers
            ],
        }


def _relative_files(args: Mapping[str, Any], change: ChangePaths) -> dict[str, Any]:
    """Findings may name files by absolute path inside the repository: make them relative."""
    fixed = dict(args)
    findings = fixed.get("findings")
    if not isinstance(findings, list):
        return fixed
    roots = [change.repo.resolve()]
    out: list[Any] = []
    for finding in findings:
        if isinstance(finding, dict) and isinstance(finding.get("file"), str):
            path = Path(finding["file"])
            if path.is_absolute():
                for root in roots:
                    try:
                        finding = {**finding, "file": path.resolve().relative_to(root).as_posix()}
                        break
                    except ValueError:
                        continue
        out.append(finding)
    fixed["findings"] = out
    return fixed
