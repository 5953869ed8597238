"""Durable agent calls for the change workflow, on the engine's ``dispatch``.

Every call is keyed by (role, step, epoch, iteration, stage): a run killed
after an agent's result was journaled finds it there when it runs again and
does not call the agent a second time. A call whose agent "succeeded" without
writing the file it had to write is tried again under a new epoch, then
reported as an agent failure naming the missing file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from phasegate.agents.base import Access, AgentResult
from phasegate.change.handle import Change
from phasegate.change.state import ChangeState
from phasegate.change.tools import server_for_role
from phasegate.engine.dispatch import Backends, CallSpec, PromptBuilder, dispatch
from phasegate.errors import AgentError
from phasegate.faults import crash_point
from phasegate.state.item import Stage

#: Says which required outputs are missing after a call (empty: all there).
OutputCheck = Callable[[], list[str]]


class AgentCalls:
    """Makes the change's agent calls and keeps its usage totals."""

    def __init__(self, change: Change, backends: Backends) -> None:
        self.change = change
        self.backends = backends

    def access(self, role: str) -> Access:
        return Access(self.change.loaded.workflow.roles[role].access)

    def call(
        self,
        state: ChangeState,
        *,
        role: str,
        step: str,
        iteration: int,
        stage: Stage,
        build: PromptBuilder,
        output_schema: Mapping[str, Any] | None = None,
    ) -> AgentResult:
        """One agent call (or its journaled result); AgentError when retries run out."""
        spec = CallSpec(
            role=role,
            phase=step,
            epoch=state.epoch,
            iteration=iteration,
            stage=stage,
            access=self.access(role),
            output_schema=output_schema,
            build_prompt=build,
            mcp_servers=server_for_role(self.change.repo, self.change.id, role),
        )
        # dispatch() looks for a journaled result first: keys are unique per
        # logical call, so a match can only be this call made by an interrupted run.
        result = dispatch(self.change.item, state, self.backends, spec)
        # The result is journaled but not yet applied: where a resumed run must recover it.
        crash_point("change.agent_returned")
        state.usage.add(
            result.usage.input_tokens,
            result.usage.output_tokens,
            result.cost_usd,
            result.usage.cache_read_tokens,
            result.usage.cache_write_tokens,
        )
        return result

    def produce(
        self,
        state: ChangeState,
        *,
        role: str,
        step: str,
        iteration: int,
        build: PromptBuilder,
        missing: OutputCheck,
    ) -> AgentResult:
        """A writing call that must leave its files behind; retried under a new epoch if not."""
        limit = self.backends.config.retries.agent + 1
        absent: list[str] = []
        for attempt in range(1, limit + 1):
            result = self.call(
                state, role=role, step=step, iteration=iteration, stage="execute", build=build
            )
            absent = missing()
            if not absent:
                return result
            self.change.record(
                "step.output_missing",
                step=step,
                role=role,
                missing=absent,
                attempt=attempt,
                of=limit,
                sync_now=True,
            )
            # A new epoch makes the next try a fresh call, not the journaled one.
            state.epoch += 1
            self.change.save(state)
        raise AgentError(
            f"{role} ({self.backends.describe(role)}) finished step {step} of change "
            f"{self.change.id!r} {limit} time{'s' if limit > 1 else ''} without writing "
            f"{', '.join(absent)}; run the same command again to retry"
        )


def missing_files(change: Change, *relative: str) -> OutputCheck:
    """An output check: which of ``relative`` (in the change folder) are absent or empty."""

    def check() -> list[str]:
        absent = []
        for name in relative:
            path = change.dir / name
            try:
                empty = not path.read_text(encoding="utf-8", errors="replace").strip()
            except (FileNotFoundError, IsADirectoryError):
                empty = True
            if empty:
                absent.append(change.rel(path))
        return absent

    return check
