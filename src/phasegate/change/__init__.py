"""The ``change`` workflow (seed 002): ``plan``, ``impl`` and ``archive`` over STATE.yaml's phase.

See ``docs/change-workflow.md``. The workflow itself is a definition on the
engine (``workflow/builtin/change.yaml``); this package holds only what is its
own: the tasks.md parser, spec order and merge, the archive action, the
REVIEW.md reader, the MCP server and its tools, and the STATE.yaml view.
"""

from phasegate.change.api import (
    ArchiveOutcome,
    Changes,
    ImplOptions,
    ImplOutcome,
    PlanOptions,
    PlanOutcome,
)
from phasegate.change.archive import ArchiveConflict
from phasegate.change.phases import TRANSITIONS, ChangeNotReady, ChangePhase
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
    "merge_spec",
    "parse_tasks",
    "read_review",
    "read_tasks",
]
