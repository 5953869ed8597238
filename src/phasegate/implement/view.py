"""The implement workflow's state view: seed 004's ``.the-startup/review-cycles.json``.

The file holds one session per work item (its name is the session id):
``sessions.<id>.tasks.<task-hash>`` with description, current_cycle,
max_cycles, implementer, reviewers (agent, cycle, status, feedback, timestamp)
and pattern_tracking (same_issue_count, recurring_patterns); then
``sessions.<id>.global_patterns`` (reviewer_failure_rates, common_issues); and
``updated_at``. Other sessions in the file are kept as they are. Every write
is atomic and made under a lock, so two items never lose each other's session.

Before a run, the file must be readable (a corrupt one stops the run, exit 5,
and is never overwritten; deleting it loses nothing, as each item's next run
writes its session again from the engine state), the settings are read into the item's data (the
engine reads the review budget and time limits there), and PLAN.md's
checkboxes are read again: a task ticked by hand since is not done again, a task or
phase added to the plan while a run was interrupted joins the loops the resumed run
walks, and a completed item whose plan has open tasks again (added, or unticked) is
reopened at its first node, so the run does them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import filelock

from phasegate.engine.plugin_api import StateView
from phasegate.engine.state import EngineState
from phasegate.errors import BadInputError, StateCorruptError, os_reason
from phasegate.implement import cycles
from phasegate.implement.parallel import watch_plan
from phasegate.implement.plan import Plan, PlanPhase, parse_plan
from phasegate.implement.settings import implement_settings
from phasegate.implement.status import interrupted, stopped, task_rows
from phasegate.implement.where import (
    CONTEXT_NODE,
    PHASE_ALIASES,
    PHASES,
    REOPENED,
    TASK_END,
    TASKS,
    WAITING_GATES,
    WITHDRAWN_BY_TICK,
    known_phases,
    plan_rel,
)
from phasegate.state.atomic import atomic_write_bytes
from phasegate.state.journal import utc_now


class ImplementView(StateView):
    """``.the-startup/review-cycles.json``, rendered from the engine state."""

    name = "implement"

    def __init__(self, item: Any, settings: Mapping[str, Any]) -> None:
        super().__init__(item, settings)
        self._written: str | None = None

    @property
    def path(self) -> Path:
        return self.item.repo / implement_settings(self.item.config, self.item.repo).state_file

    def files(self) -> list[Path]:
        return [self.path]

    def watch_node(self, node: str) -> Callable[[], list[str]] | None:
        """An executor's call in the work tree: PLAN.md put back after it, and kept on disk
        with the guard's record while it runs (see :func:`~.parallel.watch_plan`)."""
        return watch_plan(self.item, node)

    # -- before a run ----------------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {"sessions": {}}
        except OSError as exc:
            raise StateCorruptError(
                f"state file {self.path} cannot be read: {os_reason(exc)}"
            ) from None
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise StateCorruptError(
                f"state file {self.path} is corrupt ({str(exc).splitlines()[0]}); it was left "
                "untouched: delete it (the next run of each work item writes its part again "
                "from the item's engine state) or fix it by hand"
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("sessions", {}), dict):
            raise StateCorruptError(
                f"state file {self.path} has no 'sessions' object; it was left untouched: "
                "delete it (the next run of each work item writes its part again from the "
                "item's engine state) or fix it by hand"
            )
        return data

    def check(self, state: EngineState) -> None:
        settings = implement_settings(self.item.config, self.item.repo)
        state.data["max_cycles"] = settings.max_cycles
        state.data["review_timeout"] = settings.review_timeout_minutes * 60
        state.data["escalation_timeout_minutes"] = settings.escalation.timeout_minutes or 0
        state.data["escalation"] = settings.escalation.model_dump(mode="json")
        self._read()
        plan = self._plan(state)
        if plan is not None:
            plan = self._renamed_phases(state, plan)
            self._ticked_by_hand(state, plan)
            if state.status == "completed":
                self._reopen(state, plan)
            elif state.status == "active" and state.at == PHASES:
                self._added_meanwhile(state, plan)

    def _plan(self, state: EngineState) -> Plan | None:
        try:
            path = self.item.workdir(state) / plan_rel(state)
            plan = parse_plan(path.read_bytes().decode("utf-8"), path)
        except (OSError, UnicodeDecodeError, BadInputError):
            return None  # the run's first node reports it with its path
        return known_phases(plan, state)

    @staticmethod
    def _renamed_phases(state: EngineState, plan: Plan) -> Plan:
        """Phases whose heading a person renamed since the run began (a new heading is a new
        key): a phase the run had begun (or finished) is the plan's phase holding its tasks
        now, and goes on (or stays done) under the key the run knows it by, with its new
        title; a phase not begun yet that the plan no longer has (renamed, or taken out) is
        dropped: the plan's phases the run does not know are added to it, so a renamed one
        is read anew and listed once, under its new title.

        Only the state in memory changes here: a run commits it, a ``status`` shows it.
        """
        from phasegate.engine.nodes.foreach import safe_key

        phases = state.peek(PHASES)
        if phases is None:
            return plan
        entries = phases.get("items") or {}
        order = phases.get("order") or []
        in_plan = {safe_key(p.key) for p in plan.phases}
        aliases = dict(state.data.get(PHASE_ALIASES) or {})
        for old in list(order):
            entry = entries.get(old) or {}
            if old in in_plan:
                continue
            tasks = state.peek(f"{PHASES}[{old}]/{TASKS}")
            known = set((tasks.get("items") or {}) if tasks is not None else ())
            now = next(
                (
                    p
                    for p in plan.phases
                    if safe_key(p.key) not in entries and known & {safe_key(t.key) for t in p.tasks}
                ),
                None,
            )
            if now is not None:
                aliases[now.key] = old
                in_plan.add(old)
                entry["title"] = now.title
                state.touched(PHASES)
            elif (
                tasks is None
                and entry.get("status") in ("pending", "skipped")
                and state.status == "active"
                and state.at == PHASES
            ):
                # Never begun: nothing of it was done, nothing but its place in the loop
                # is recorded. The plan's phase (under its new heading, if it was renamed)
                # is read anew in its place (see _added_meanwhile); ``status`` no longer
                # lists the old heading.
                order.remove(old)
                entries.pop(old, None)
                state.touched(PHASES)
            elif entry.get("status") == "pending" and not entry.get("done"):
                entry["done"] = True  # skipped when the phases loop comes to it
                entry["skip_reason"] = f"no longer in {plan_rel(state)}"
                state.touched(PHASES)
        if aliases != (state.data.get(PHASE_ALIASES) or {}):
            state.data[PHASE_ALIASES] = aliases
        return known_phases(plan, state)

    def _ticked_by_hand(self, state: EngineState, plan: Plan) -> None:
        """Pending phases and tasks that are ticked in PLAN.md now count as done."""
        phases = state.peek(PHASES)
        if phases is None:
            return
        items = phases.get("items") or {}
        for phase_key in phases.get("order") or []:
            entry = items.get(phase_key) or {}
            found = plan.phase(phase_key)
            if found is not None and found.done and entry.get("status") == "pending":
                entry["done"] = True
                state.touched(PHASES)
            tasks = state.peek(f"{PHASES}[{phase_key}]/{TASKS}")
            if tasks is None:
                continue
            for key in tasks.get("order") or []:
                task = (tasks.get("items") or {}).get(key) or {}
                now = plan.task(key)
                path = f"{PHASES}[{phase_key}]/{TASKS}"
                if now is None:
                    self._removed(state, path, key, task)
                    continue
                if not now.done:
                    continue
                if task.get("status") == "pending":
                    task["done"] = True
                    state.touched(path)
                elif task.get("status") == "running" and (
                    task.get("at") in WAITING_GATES
                    or self._past_agent_call(state, f"{path}[{key}]/{task.get('at')}")
                ):
                    self._released(state, path, key, task)

    def _past_agent_call(self, state: EngineState, path: str) -> bool:
        """Whether the task's agent node at ``path`` was past its agent's call when the last
        run ended (its reviewer chosen, a review under way): PLAN.md was put back right after
        that call, so a tick in it since is a person's, never the agent's. The journal's
        tail (what happened after the state was last committed) has the last word."""
        node = state.peek(path)
        stage = node.stage if node is not None else ""
        past = stage == "checks" or stage.startswith("review:")
        try:
            for _, _, event in self.item.journal.tail(
                state.journal_offset, state.journal_lines + 1
            ):
                if event.get("event") == "reviewer.selected" and event.get("node") == path:
                    past = True
                elif event.get("path") == path and event.get("stage") == "execute":
                    past = False  # its agent was called again (a revision) after that
        except StateCorruptError:
            return False  # a corrupt journal: the item's load reports it with its line
        return past

    @staticmethod
    def _removed(state: EngineState, path: str, key: str, task: dict[str, Any]) -> None:
        """A task no longer in PLAN.md (deleted, or renamed: a new title is a new task) that
        the run had not finished: it is not run (nor its agent called again), a decision it
        waited on is withdrawn, and it ends where it stands (its work so far stays, a
        parallel task's is merged as any other's); ``status`` no longer lists it.

        Only the state in memory changes here: a run commits it, a ``status`` shows it.
        """
        status = task.get("status")
        if status not in ("pending", "running") or task.get("removed"):
            return
        task["removed"] = True
        entry = cycles.peek_task(state, key)
        if entry is not None:
            cycles.outcome(entry, cycles.REMOVED)
        if status == "pending":
            task["done"] = True  # skipped when its loop comes to it
            task["skip_reason"] = f"no longer in {plan_rel(state)}"
            state.touched(path)
            return
        reason = f"task {key} is no longer in {plan_rel(state)}"
        gate = f"{path}[{key}]/"
        withdrawn = list(state.data.get(WITHDRAWN_BY_TICK) or [])
        for name, record in list(state.decisions.items()):
            context = str(record.get("context") or "")
            if context.startswith(gate) and record.get("status") == "pending":
                del state.decisions[name]
                withdrawn.append(
                    {"id": name, "visit": record.get("visit"), "task": key, "reason": reason}
                )
        if withdrawn:
            state.data[WITHDRAWN_BY_TICK] = withdrawn
        task["at"] = TASK_END
        loop = state.peek(path)
        if loop is None or not loop.get("fanout"):
            # It ran in the work tree: nothing of it is left to run, and a task with
            # nothing to run must not make its phase's other tasks fan out into worktrees.
            task["status"] = "done"
        state.touched(path)

    @staticmethod
    def _released(state: EngineState, path: str, key: str, task: dict[str, Any]) -> None:
        """A task waiting for a person (escalated, paused for a fix by hand, aborted, its
        review unclear) that a person ticked in PLAN.md meanwhile: it is done, and the
        decision it waited on is withdrawn. An answer already given to it stands: the run
        acts on it.

        Only the state in memory changes here: a run commits it (and journals the
        withdrawal, see :meth:`prepare`), a ``status`` shows it.
        """
        gate = f"{path}[{key}]/{task['at']}"
        node = state.peek(gate)
        visit = node.visit if node is not None else None
        asked = [
            (name, record)
            for name, record in state.decisions.items()
            if record.get("context") == gate and record.get("visit") == visit
        ]
        if any(record.get("status") != "pending" for _, record in asked):
            return
        withdrawn = list(state.data.get(WITHDRAWN_BY_TICK) or [])
        for name, record in asked:
            del state.decisions[name]
            withdrawn.append({"id": name, "visit": record.get("visit"), "task": key})
        if withdrawn:
            state.data[WITHDRAWN_BY_TICK] = withdrawn
        entry = cycles.task_entry(state, key, str(task.get("title") or ""))
        cycles.outcome(entry, cycles.TICKED_BY_HAND)
        # It ends at its end node: its loop finishes it as any task that ended (a parallel
        # task's work is merged as any other's).
        task["at"] = TASK_END
        state.touched(path)

    def prepare(self, state: EngineState) -> None:
        """Before a commit: the decisions withdrawn for tasks ticked by hand, journaled."""
        withdrawn = state.data.pop(WITHDRAWN_BY_TICK, None)
        for found in withdrawn or []:
            self.item.record(
                "decision.withdrawn",
                id=found.get("id"),
                visit=found.get("visit"),
                reason=found.get("reason")
                or f"task {found.get('task')} was ticked in {plan_rel(state)} by hand",
                sync_now=True,
            )

    def _added_meanwhile(self, state: EngineState, plan: Plan) -> None:
        """An interrupted run resumes with the phases and tasks added to PLAN.md since its
        loops read the plan: a new phase joins the phases, a new task its phase's tasks
        (where its place in the plan puts it; the tasks not started yet wait for it as the
        plan says), and a phase that had ended runs again for its new tasks. A task that was
        running resumes where it was.

        Only the state in memory changes here: a run commits it, a ``status`` shows it.
        """
        from phasegate.engine.nodes.foreach import safe_key

        phases = state.peek(PHASES)
        if phases is None or not isinstance(phases.get("order"), list):
            return  # the phases are read from the plan when the loop starts
        order: list[str] = phases["order"]
        entries: dict[str, Any] = phases.mapping("items")
        for index, found in enumerate(plan.phases):
            key = safe_key(found.key)
            if key in entries:
                continue
            before = [safe_key(p.key) for p in plan.phases[:index]]
            order.insert(_place(order, before), key)
            entries[key] = {
                "status": "pending",
                "at": None,
                "title": found.title,
                "deps": [],
                "done": found.done,
                "line": found.line,
                "data": {},
                "parallel": found.parallel,
            }
            state.touched(PHASES)
        for found in plan.phases:
            key = safe_key(found.key)
            entry = entries[key]
            path = f"{PHASES}[{key}]/{TASKS}"
            tasks = state.peek(path)
            status = entry.get("status")
            if status == "running":
                if tasks is None or not isinstance(tasks.get("order"), list):
                    continue  # its tasks loop has not read the plan yet: it reads it anew
                known = tasks.mapping("items")
                if any(not t.done and safe_key(t.key) not in known for t in found.tasks):
                    self._add_tasks(state, path, tasks, found)
                    if entry.get("at") != TASKS:  # past its loop (at the checkpoint): back
                        entry["at"] = TASKS
                        state.touched(PHASES)
            elif any(not t.done for t in found.tasks) and (
                status in ("done", "skipped") or (status == "pending" and entry.get("done"))
            ):
                # Ended, or skipped as done, before these tasks were added: it runs again,
                # its tasks read anew (the ticked ones skipped).
                entry.update(status="pending", at=None, done=False)
                state.touched(PHASES)

    @staticmethod
    def _add_tasks(state: EngineState, path: str, tasks: Any, phase: PlanPhase) -> None:
        """The tasks of ``phase`` its running loop does not know, put in it."""
        from phasegate.engine.nodes.foreach import dependency_order, safe_key
        from phasegate.implement.plugins import phase_items

        order: list[str] = tasks["order"]
        known: dict[str, Any] = tasks["items"]
        items = [
            replace(t, key=safe_key(t.key), deps=tuple(safe_key(d) for d in t.deps))
            for t in dependency_order(phase_items(phase), plan_rel(state))
        ]
        keys = [t.key for t in items]
        for index, item in enumerate(items):
            entry = known.get(item.key)
            if entry is None:
                order.insert(_place(order, keys[:index]), item.key)
                known[item.key] = {"status": "pending", "at": None, **item.to_dict()}
            elif entry.get("status") == "pending" and not entry.get("started_at"):
                entry["deps"] = list(item.deps)  # it waits for the tasks added before it
        state.touched(path)

    def _reopen(self, state: EngineState, plan: Plan) -> None:
        """A completed item whose PLAN.md has open tasks again (added, or unticked by hand)
        goes back to its first node: the run reads the plan anew and does the open tasks,
        the ticked ones skipped (seed 004: ``/s:implement`` works through the open tasks).

        Only the state in memory changes here: a run commits it, a ``status`` shows it.
        """
        from phasegate.engine.walk import enter_node  # only here: status reads stay light

        open_tasks = [t for t in plan.tasks() if not t.done and not t.checkpoint]
        if not open_tasks:
            return
        for task in open_tasks:
            entry = cycles.peek_task(state, task.key)
            if entry is not None:  # an unticked task: what it changes is measured afresh
                entry.pop("_base_tree", None)
        titles = [t.title for t in open_tasks]
        cause = f"{plan_rel(state)} has {len(titles)} open task(s) again"
        history = state.d.setdefault("history", [])
        history.append(
            {
                "at": utc_now(),
                "from": state.data.get("end_label") or "done",
                "to": CONTEXT_NODE,
                "cause": cause,
            }
        )
        state.status = "active"
        state["completed"] = None
        state["summary"] = None
        state.data.pop("end_label", None)
        state.data[REOPENED] = titles
        state.at = CONTEXT_NODE
        enter_node(self.item.workflow, state, CONTEXT_NODE)

    # -- rendering -------------------------------------------------------------------------

    def completed(self, state: EngineState) -> None:
        """A run of a completed item writes its session again when the file is gone (it
        was deleted, e.g. after it was found corrupt): the engine state holds all of it."""
        if not self.path.exists():
            self._written = None
            self.render(state)

    def render(self, state: EngineState) -> None:
        session = cycles.session_document(state)
        text = json.dumps(session, sort_keys=True, ensure_ascii=False)
        if text == self._written:
            return
        lock = self.item.repo / ".phasegate" / "locks" / "review-cycles.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        with filelock.FileLock(str(lock), timeout=30):
            data = self._read()
            data.setdefault("sessions", {})[state.item] = session
            data["updated_at"] = utc_now()
            payload = json.dumps(self.item.redactor.data(data), indent=2, ensure_ascii=False)
            atomic_write_bytes(self.path, (payload + "\n").encode("utf-8"), durable=False)
        self._written = text

    def summary(self, state: EngineState) -> str | None:
        rows = task_rows(self.item, state, self._plan(state))
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["state"]] = counts.get(row["state"], 0) + 1
        record = cycles.session_document(state)["tasks"]
        reviews = sum(len(t.get("reviewers") or []) for t in record.values())
        parts = [f"{n} {how}" for how, n in counts.items()]
        tasks = f"{len(rows)} task{'s' if len(rows) != 1 else ''}"
        return f"{tasks} ({', '.join(parts)}) in {reviews} review{'s' if reviews != 1 else ''}."

    def status_fields(self, state: EngineState) -> dict[str, Any]:
        from phasegate.engine.live_run import last_failure, live_path, read_live

        rows = task_rows(self.item, state, self._plan(state))
        if read_live(live_path(self.item.run_lock_path)) is None:
            # The task whose agent call its last run stopped on (every attempt failed)
            # is ``stopped`` on it, as ``status`` says of the item; the others it left
            # working on are ``interrupted``.
            stopped(rows, last_failure(self.item.journal.path))
            interrupted(rows)  # no run goes on: what its last run left working is not
        return {"tasks": rows, "reviewCycles": str(self.path)}


def _place(order: Sequence[str], before: Sequence[str]) -> int:
    """Where an item goes in ``order``: right after the last of ``before`` (the items the
    plan puts before it) that ``order`` holds, else first."""
    known = set(before)
    for index in range(len(order) - 1, -1, -1):
        if order[index] in known:
            return index + 1
    return 0
