"""The change workflow for scripts and tests: seed 002's plan / impl / archive interfaces.

Each is a command of the ``change`` workflow run by the engine
(``phasegate run ID --command plan``); their flags answer the workflow's
gates (``--on-limit`` the planning limit, ``--rechallenge`` the rejected
plan, ``--review-only`` a manual fix, ``--resolved`` an archive conflict).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from phasegate.agents.base import Backend
from phasegate.change.archive import ArchiveConflict
from phasegate.change.paths import ARCHIVE_DIR, ChangePaths, archived_folder
from phasegate.change.phases import LIMIT_CHOICES as LIMIT_CHOICES  # plan's --on-limit
from phasegate.change.phases import LimitChoice, limit_answer, next_command
from phasegate.change.review import RecordedReview, read_review
from phasegate.change.state import ChangeState
from phasegate.change.tasks import read_tasks
from phasegate.config import Config
from phasegate.engine.calls import Backends
from phasegate.engine.item import EventSink, WorkItem, items_dir, validate_item_name
from phasegate.engine.items import create_item
from phasegate.engine.runner import CommandRefused, Runner, RunOutcome
from phasegate.engine.status import current_label
from phasegate.engine.walk import Asker, RunOptions
from phasegate.errors import (
    BadInputError,
    BlockedError,
    NotFoundError,
    PhasegateError,
    WaitingForHuman,
)
from phasegate.state.store import parse_state
from phasegate.workflow.registry import WorkflowRegistry

WORKFLOW = "change"
PlanAction = Literal["challenged", "rejected", "waiting", "already-planned", "beyond-planning"]


@dataclass(frozen=True)
class PlanOptions:
    """Flags of ``phasegate plan``."""

    description: str | None = None
    mode: str | None = None
    rechallenge: bool = False
    on_limit: LimitChoice | None = None
    #: Shows a person the plan and the last challenge (the seed's "View").
    viewer: Callable[[str], None] | None = None


@dataclass(frozen=True)
class PlanOutcome:
    """How ``plan`` ended (the seed's ``WorkflowAction``)."""

    action: PlanAction
    state: ChangeState
    message: str


@dataclass(frozen=True)
class ImplOptions:
    """Flags of ``phasegate impl``."""

    #: After a manual fix: skip implementing and go straight to a new review.
    review_only: bool = False


@dataclass(frozen=True)
class ImplOutcome:
    """How ``impl`` ended: complete, or stopped for a person (findings in ``review``)."""

    status: Literal["complete", "stopped"]
    state: ChangeState
    message: str
    review: RecordedReview | None


@dataclass(frozen=True)
class ArchiveOutcome:
    """What ``archive`` did."""

    action: Literal["archived", "already-archived"]
    merged: tuple[str, ...]
    archived_to: Path
    message: str


def read_change_state(path: Path) -> ChangeState:
    """The STATE.yaml at ``path`` (NotFoundError, exit 2, when the change does not exist)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        change = path.parent.name
        raise NotFoundError(
            f"no change named {change!r} ({path.parent} has no STATE.yaml); "
            f'create it with: phasegate plan {change} "DESCRIPTION"'
        ) from None
    return ChangeState.from_document(parse_state(data, path, "yaml"), path)


def next_for_change(item: WorkItem) -> str | None:
    """The command ``phasegate status`` names next for change ``item`` (``impl ID
    --review-only`` after a review stop...); ``None`` when its STATE.yaml cannot be read."""
    try:
        state = read_change_state(ChangePaths(item.repo, item.name, item.item_dir).state_path)
    except PhasegateError:
        return None
    return next_command(state.phase, item.name, state)


#: Commands that only read a work item: they find an archived change in the archive.
READS_ARCHIVED = frozenset({"status", "decisions", "logs"})


def archived_change(
    repo: Path, name: str, registry: WorkflowRegistry, config: Config, command: str | None
) -> WorkItem | None:
    """The work item of change ``name`` in the archive, for a command that reads it
    (``status``, ``decisions``, ``logs``); ``None`` when no change of that name was archived.

    Any other command (``answer``...) is refused in one line saying where the change is:
    an archived change has nothing left to answer or run.
    """
    try:
        loaded = registry.get(WORKFLOW)
    except PhasegateError:
        return None
    folder = archived_folder(repo / items_dir(loaded.workflow, config), name)
    if folder is None:
        return None
    if command in READS_ARCHIVED:
        return WorkItem(repo, name, loaded, config, folder=folder)
    where = ChangePaths(repo, name, folder).rel(folder)
    left = "nothing to answer" if command == "answer" else "nothing is left to run"
    raise BadInputError(
        f"{name!r} is an archived change ({where}): {left}; phasegate status {name} shows it"
    )


@dataclass
class Changes:
    """The changes of one repository (``backends`` override config per role, or ``default``)."""

    root: Path
    config: Config = field(default_factory=Config)

    def __post_init__(self) -> None:
        self.registry = WorkflowRegistry(self.root)

    @property
    def changes_root(self) -> Path:
        return self.root / items_dir(self.registry.get(WORKFLOW).workflow, self.config)

    def item(self, change_id: str, sink: EventSink | None = None) -> WorkItem:
        """The work item of a change (it may not exist yet), found in the archive if archived."""
        validate_item_name(change_id)
        if change_id == ARCHIVE_DIR:
            raise BadInputError(
                f"{ARCHIVE_DIR!r} cannot be a change id: it names the archive folder"
            )
        loaded = self.registry.get(WORKFLOW)
        item = WorkItem(self.root, change_id, loaded, self.config, sink=sink)
        if not item.exists():
            archived = archived_folder(self.changes_root, change_id)
            if archived is not None:
                item = WorkItem(
                    self.root, change_id, loaded, self.config, sink=sink, folder=archived
                )
        return item

    def paths(self, change_id: str) -> ChangePaths:
        item = self.item(change_id)
        return ChangePaths(self.root, change_id, item.item_dir)

    def state(self, change_id: str) -> ChangeState:
        """What STATE.yaml records about ``change_id``."""
        paths = self.paths(change_id)
        if not paths.state_path.is_file():
            raise NotFoundError(
                f"change {change_id!r} has no state file at {paths.rel(paths.state_path)}"
            )
        return read_change_state(paths.state_path)

    def _run(
        self,
        item: WorkItem,
        command: str,
        backends: Mapping[str, Backend] | None,
        asker: Asker | None,
        answers: Mapping[str, str],
        viewer: Callable[[str], None] | None = None,
        default_answers: frozenset[str] = frozenset(),
    ) -> RunOutcome:
        options = RunOptions(
            command=command, answers=dict(answers), default_answers=default_answers, viewer=viewer
        )
        try:
            outcome = Runner(item, Backends(self.config, self.root, backends), asker, options).run()
        except CommandRefused as exc:  # not ready: "Next:" as status names it for the change
            if type(exc) is not CommandRefused:
                raise
            raise CommandRefused(self._next_as_status(item, str(exc))) from None
        if outcome.status == "stopped":
            return replace(outcome, message=self._next_as_status(item, outcome.message))
        return outcome

    def _next_as_status(self, item: WorkItem, message: str) -> str:
        """``message`` whose ``Next:`` names the phase's usual command, naming instead what
        ``phasegate status`` names for this change: ``impl ID --review-only`` after a stop,
        ``archive ID --resolved`` after archive's conflicts, ``plan ID --on-limit ...`` at
        the planning limit."""
        try:
            state = self.state(item.name)
        except PhasegateError:
            return message
        usual = next_command(state.phase, item.name)
        wanted = next_command(state.phase, item.name, state)
        if wanted == usual or wanted in message or f"Next: {usual}" not in message:
            return message
        return message.replace(f"Next: {usual}", f"Next: {wanted}")

    # -- plan -------------------------------------------------------------------------------

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
        text = (description if description is not None else opts.description or "").strip()
        item = self.item(change_id, sink)
        if text and ChangePaths(self.root, change_id, item.item_dir).archived:
            # A description names a new change: the archived one keeps its folder, the
            # name is free again in changes/ (archive dates the folders it moves there).
            item = WorkItem(self.root, change_id, item.loaded, self.config, sink=sink)
        if not item.exists():
            if not text:
                raise BadInputError(
                    f"change {change_id!r} does not exist yet: give a description "
                    f'(phasegate plan {change_id} "what the change is about")'
                )
            create_item(
                self.root,
                change_id,
                item.loaded,
                self.config,
                mode=opts.mode,
                description=text,
                through_command=True,
            )
            item = self.item(change_id, sink)
        answers: dict[str, str] = {}
        if opts.on_limit is not None and not self._limit_answered(item, opts.on_limit):
            answers["planning-limit"] = opts.on_limit
        if opts.rechallenge:
            answers["rechallenge"] = "rechallenge"
            if self._limit_pending(item):
                # At the planning limit (proposed): the plan was edited by hand, so it is
                # challenged again as it is, without a reproposal.
                if opts.on_limit is not None:
                    raise BadInputError(
                        f"--rechallenge and --on-limit {opts.on_limit} both answer the "
                        f"planning limit of {change_id}; give one of them"
                    )
                answers["planning-limit"] = "rechallenge"
        before = len(self.state(change_id).history)
        try:
            outcome = self._run(item, "plan", backends, asker, answers, opts.viewer)
        except WaitingForHuman:
            return PlanOutcome("waiting", self.state(change_id), self._limit_message(item))
        except BlockedError as exc:
            state = self.state(change_id)
            if state.phase.value == "rejected" and not isinstance(exc, ArchiveConflict):
                return PlanOutcome("rejected", state, self._rejected(change_id, state))
            raise
        state = self.state(change_id)
        if state.phase.value == "challenged":
            moved = state.history[before:]
            if not moved:
                return PlanOutcome("already-planned", state, outcome.message)
            return PlanOutcome(
                "challenged",
                state,
                f"{change_id} is challenged ({moved[-1].cause}). Next: phasegate impl {change_id}",
            )
        return PlanOutcome("beyond-planning", state, outcome.message)

    def _limit_pending(self, item: WorkItem) -> bool:
        """Whether the planning-limit question waits for an answer."""
        decision = item.load(read_journal=False).decisions.get("planning-limit") or {}
        return decision.get("status") == "pending"

    def _limit_answered(self, item: WorkItem, choice: str) -> bool:
        """Whether the planning limit the change stands at is already answered (with
        ``phasegate answer``), so ``--on-limit`` has nothing left to answer: the recorded
        answer is acted on once. A different choice is refused (exit 2)."""
        state = item.load(read_journal=False)
        decision = state.decisions.get("planning-limit") or {}
        if state.at != "planning-limit" or decision.get("status") != "answered":
            return False
        answered = str((decision.get("answer") or {}).get("choice") or "")
        if answered and answered != choice:
            raise BadInputError(
                f"the planning limit of {item.name} is already answered {answered}; "
                f"--on-limit {choice} cannot answer it again. Run phasegate plan {item.name}"
            )
        return True

    def _limit_message(self, item: WorkItem) -> str:
        """The pending question: the planning limit is answered with ``plan``'s own flags,
        any other decision (a budget cap...) with ``phasegate answer``."""
        from phasegate.engine.answers import record_command

        decisions = item.load(read_journal=False).decisions
        waiting = [d for d in decisions.values() if d.get("status") == "pending"]
        other = [d for d in waiting if d.get("id") != "planning-limit"]
        if other:
            record = other[0]
            return f"{record.get('question', '')} Answer with: {record_command(item.name, record)}"
        decision = decisions.get("planning-limit") or {}
        name = item.name
        return (
            f"{decision.get('question', '')} Answer with: "
            f"{limit_answer(name, list(decision.get('choices') or {}))} "
            f"(or edit the plan and run phasegate plan {name} --rechallenge)"
        )

    def _rejected(self, change_id: str, state: ChangeState) -> str:
        summary = state.plan.summary if state.plan else ""
        return (
            f"{change_id} was REJECTED by the challenger"
            + (f": {summary}" if summary else "")
            + f". Next: edit the plan by hand, then phasegate plan {change_id} --rechallenge "
            "(the challenger's verdict is at the end of proposal.md)"
        )

    # -- impl -------------------------------------------------------------------------------

    def impl(
        self,
        change_id: str,
        *,
        backends: Mapping[str, Backend] | None = None,
        options: ImplOptions | None = None,
        sink: EventSink | None = None,
        asker: Asker | None = None,
    ) -> ImplOutcome:
        """``impl_workflow(change_id)``: implement, review, fix."""
        item = self.item(change_id, sink)
        if not item.exists():
            raise BlockedError(
                f"change {change_id!r} does not exist in "
                f"{ChangePaths(self.root, change_id, item.item_dir).rel(self.changes_root)}; "
                f'plan it first: phasegate plan {change_id} "what the change is about"'
            )
        opts = options or ImplOptions()
        answers: dict[str, str] = {}
        self._ready_to_implement(change_id, opts)
        before = item.load(read_journal=False)
        pending = before.decisions.get("manual-fix") or {}
        if pending.get("status") == "pending":
            # After a stop for a manual fix, running impl again answers it: implement the
            # tasks again with the open findings, or (--review-only) go straight to a review.
            answers["manual-fix"] = "review-only" if opts.review_only else "implement"
        # ``impl`` without --review-only implements again: its default, not a flag.
        defaulted = frozenset() if opts.review_only else frozenset({"manual-fix"})
        paths = ChangePaths(self.root, change_id, item.item_dir)
        try:
            ran = self._run(item, "impl", backends, asker, answers, default_answers=defaulted)
        except BlockedError as exc:
            state = self.state(change_id)
            if state.impl is not None and state.impl.step == "stopped":
                review = read_review(paths.review_path)
                reason = state.impl.stop_reason or "manual fix required"
                if reason.startswith("the implementer changed no files"):
                    message = (
                        f"{change_id}: {reason}. Make the changes {paths.rel(paths.tasks_path)} "
                        "asks for (by hand, or with the implementer's backend in "
                        f".phasegate/config.yaml set to one that edits files), then run "
                        f"phasegate impl {change_id} --review-only"
                    )
                    return ImplOutcome("stopped", state, message, review)
                findings = len(review.findings) if review else 0
                message = (
                    f"{change_id}: manual fix required: {reason} ({findings} finding(s), see "
                    f"{paths.rel(paths.review_path)}). Fix them, then run phasegate impl "
                    f"{change_id} --review-only"
                )
                return ImplOutcome("stopped", state, message, review)
            raise exc from None
        state = self.state(change_id)
        message = f"{change_id} is complete. Next: phasegate archive {change_id}"
        if current_label(item.workflow, before) == "complete":  # nothing was left to do
            message = ran.message
        return ImplOutcome("complete", state, message, read_review(paths.review_path))

    def _ready_to_implement(self, change_id: str, opts: ImplOptions) -> None:
        """Refuse, before anything runs (the phase stays as it is), what ``impl`` cannot
        start: ``--review-only`` before anything was implemented, or implementing without
        tasks.md's tasks."""
        state = self.state(change_id)
        phase = state.phase.value
        step = state.impl.step if state.impl is not None else None
        implementing = phase == "implementing"
        if phase not in ("challenged", "implementing"):
            return  # the workflow's own answer for that phase
        if opts.review_only and (not implementing or step == "implement"):
            where = f"phase {phase}" + (f", step {step}" if implementing else "")
            raise BlockedError(
                f"{change_id} has nothing to review yet ({where}): --review-only reviews "
                f"work impl has implemented; run phasegate impl {change_id} to implement it"
            )
        if opts.review_only or (implementing and step not in ("implement", "stopped")):
            return
        paths = self.paths(change_id)
        tasks = paths.rel(paths.tasks_path)
        if not paths.tasks_path.is_file():
            raise BlockedError(
                f"{tasks} does not exist, so {change_id} cannot be implemented; restore it "
                f"or write it (tasks under headings such as '## 1. Data Layer'), then run "
                f"phasegate impl {change_id}"
            )
        if read_tasks(paths.tasks_path).task_count == 0:
            raise BlockedError(
                f"{tasks} lists no tasks, so {change_id} cannot be implemented; add them "
                f"(under headings such as '## 1. Data Layer'), then run phasegate impl {change_id}"
            )

    # -- archive ----------------------------------------------------------------------------

    def archive(
        self, change_id: str, *, resolved: bool = False, sink: EventSink | None = None
    ) -> ArchiveOutcome:
        """``archive_workflow(change_id)``: merge specs, move to the archive."""
        item = self.item(change_id, sink)
        if not item.exists():
            raise NotFoundError(
                f"no change {change_id!r} in "
                f"{ChangePaths(self.root, change_id, item.item_dir).rel(self.changes_root)} "
                "or its archive"
            )
        paths = ChangePaths(self.root, change_id, item.item_dir)
        if paths.archived:
            return ArchiveOutcome(
                "already-archived",
                (),
                paths.dir,
                f"{change_id} is already archived at {paths.rel(paths.dir)}",
            )
        answers = {"archive-conflict": "resolved"} if resolved else {}
        state = item.load(read_journal=False)
        if state.status == "completed":
            # Archived, but a run stopped before the folder moved: finish the move.
            with item.run_lock():
                item.view.completed(state)
        else:
            state = self._run(item, "archive", None, None, answers).state
        merged = tuple(state.data.get("merged") or ())
        target = self.root / str(state.data.get("archived_to"))
        specs = ", ".join(merged) if merged else "no spec changes"
        return ArchiveOutcome(
            "archived",
            merged,
            target,
            f"{change_id} archived to {paths.rel(target)} ({specs})",
        )
