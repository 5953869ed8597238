"""The ``change`` workflow (seed 002): ``plan``, ``impl`` and ``archive`` over STATE.yaml's phase.

See ``docs/change-workflow.md``. The engine pieces underneath (work item,
journal, state store, durable dispatch, backends) are the same as the
``feature`` workflow's; the phase-only state machine is this package's own.
"""

from phasegate.change.api import Changes
from phasegate.change.archiving import ArchiveConflict, ArchiveOutcome, archive_change
from phasegate.change.handle import Change, open_change
from phasegate.change.implementing import ImplOptions, ImplOutcome, implement_change
from phasegate.change.phases import TRANSITIONS, ChangeNotReady, ChangePhase
from phasegate.change.planning import PlanOptions, PlanOutcome, plan_change
from phasegate.change.review import RecordedReview, ReviewVerdict, read_review
from phasegate.change.specdelta import SpecDeltaError
from phasegate.change.specmerge import MergeResult, merge_spec
from phasegate.change.state import ChangeState
from phasegate.change.tasks import Layer, Task, TaskList, parse_tasks, read_tasks
from phasegate.change.tools import ChangeTools, ToolCallError

__all__ = [
    "TRANSITIONS",
    "ArchiveConflict",
    "ArchiveOutcome",
    "Change",
    "ChangeNotReady",
    "ChangePhase",
    "ChangeState",
    "ChangeTools",
    "Changes",
    "ImplOptions",
    "ImplOutcome",
    "Layer",
    "MergeResult",
    "PlanOptions",
    "PlanOutcome",
    "RecordedReview",
    "ReviewVerdict",
    "SpecDeltaError",
    "Task",
    "TaskList",
    "ToolCallError",
    "archive_change",
    "implement_change",
    "merge_spec",
    "open_change",
    "parse_tasks",
    "plan_change",
    "read_review",
    "read_tasks",
]
