"""The change workflow for scripts and tests: seed 002's plan / impl / archive interfaces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from phasegate.agents.base import Backend
from phasegate.change.archiving import ArchiveOutcome, archive_change
from phasegate.change.handle import Change, open_change
from phasegate.change.implementing import ImplOptions, ImplOutcome, implement_change
from phasegate.change.planning import PlanOptions, PlanOutcome, plan_change
from phasegate.change.state import ChangeState
from phasegate.config import Config
from phasegate.engine.dispatch import Backends
from phasegate.engine.runner import Asker
from phasegate.engine.workitem import EventSink


@dataclass
class Changes:
    """The changes of one repository (``backends`` override config per role, or ``default``)."""

    root: Path
    config: Config = field(default_factory=Config)

    def change(self, change_id: str, sink: EventSink | None = None) -> Change:
        """The handle of a change (it may not exist yet)."""
        return open_change(self.root, change_id, self.config, sink=sink)

    def state(self, change_id: str) -> ChangeState:
        """What STATE.yaml records about ``change_id``."""
        return self.change(change_id).load()

    def plan(
        self,
        change_id: str,
        description: str | None = None,
        *,
        backends: Mapping[str, Backend] | None = None,
        options: PlanOptions | None = None,
        asker: Asker | None = None,
        sink: EventSink | None = None,
    ) -> PlanOutcome:
        """``plan_workflow(change_id, description)``: create or continue planning."""
        opts = options or PlanOptions()
        if description is not None:
            opts = replace(opts, description=description)
        change = self.change(change_id, sink)
        return plan_change(change, Backends(self.config, self.root, backends), asker, opts)

    def impl(
        self,
        change_id: str,
        *,
        backends: Mapping[str, Backend] | None = None,
        options: ImplOptions | None = None,
        sink: EventSink | None = None,
    ) -> ImplOutcome:
        """``impl_workflow(change_id)``: implement, review, fix."""
        change = self.change(change_id, sink)
        return implement_change(change, Backends(self.config, self.root, backends), options)

    def archive(
        self, change_id: str, *, resolved: bool = False, sink: EventSink | None = None
    ) -> ArchiveOutcome:
        """``archive_workflow(change_id)``: merge specs, move to the archive."""
        return archive_change(self.change(change_id, sink), resolved=resolved)
