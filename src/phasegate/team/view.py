"""The ``team`` state view: seed 003's ``status.json``, written from the engine state.

After every commit phasegate rewrites ``.agents-work/<session>/status.json``
(``current_state``, ``user_decisions``, ``gate_tracking``, ``runtime_flags``,
``retry_counts``, the tasks' statuses from tasks.yaml, known issues). Before
every run (and every command that reads the session) the file is read back
and checked against its schema: a corrupt file stops the command with exit 5
and is never overwritten. ``runtime_flags`` is detected when the session
starts and detected again whenever the file on disk lacks it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from phasegate.engine.plugin_api import StateView
from phasegate.engine.state import EngineState
from phasegate.state.atomic import atomic_write_bytes
from phasegate.state.journal import utc_now
from phasegate.team.guarded import watch_documents, watch_task_statuses
from phasegate.team.session import (
    REVIEW_STRATEGY,
    WELL_KNOWN,
    accepted_notes,
    current_state,
    decision_entry,
    known_issue,
    last_ci_result,
    retry_counts,
    team_data,
    track_corrections,
)
from phasegate.team.status_file import (
    HISTORY_FILE,
    STATUS_FILE,
    STRATEGIES,
    TeamStatus,
    dump_status,
    parse_status,
)
from phasegate.team.tasks import read_tasks

COPILOT_INSTRUCTIONS = Path(".github") / "copilot-instructions.md"
#: IMPLEMENT_LOOP's loops over tasks.yaml (per-batch and lean; single-final).
TASK_LOOPS = ("tasks", "tasks-single")
#: Where a session at DONE with tasks not completed goes back to: the strategy's loop.
REOPEN_NODE = "strategy-route"
#: The Planner's node: a failed gate there, with tasks.yaml fixed by hand, goes on from it.
PLAN_NODE = "plan"


def _digest(path: Path) -> str | None:
    """A fingerprint of the file at ``path`` (``None`` when it cannot be read)."""
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _say(message: str) -> None:
    """One line on stderr, once per process (``check`` runs more than once a command)."""
    if message in _SAID:
        return
    _SAID.add(message)
    sys.stderr.write(f"phasegate: warning: {message}\n")
    sys.stderr.flush()


_SAID: set[str] = set()


def copilot_flags(workdir: Path) -> dict[str, Any]:
    """``runtime_flags`` as the file system says now."""
    return {
        "copilot_instructions_exists": (workdir / COPILOT_INSTRUCTIONS).is_file(),
        "copilot_checked_at": utc_now(),
    }


class TeamView(StateView):
    """status.json (and the append-only approve-design history) of a ``team`` session."""

    name = "team"

    def __init__(self, item: Any, settings: Mapping[str, Any]) -> None:
        super().__init__(item, settings)
        self._written: bytes | None = None
        self._tasks_key: tuple[int, int] | None = None
        self._tasks: list[dict[str, Any]] = []
        self._tasks_problems: list[str] = []

    @classmethod
    def file_names(cls, settings: Mapping[str, Any]) -> list[str]:
        return [STATUS_FILE, HISTORY_FILE]

    @property
    def path(self) -> Path:
        return self.item.item_dir / STATUS_FILE

    def watch_call(self, role: str) -> Callable[[], list[str]] | None:
        """acceptance.json and tasks.yaml's owned fields (see :mod:`phasegate.team.guarded`)."""
        return watch_documents(self.item.item_dir, self._folder_shown(), role)

    def watch_node(self, node: str) -> Callable[[], list[str]] | None:
        """A call of a task's node (``tasks[T1]/code``) may change that task's status in
        tasks.yaml, no other task's (see :func:`phasegate.team.guarded.watch_task_statuses`)."""
        loop, sep, rest = node.partition("[")
        task = rest.split("]", 1)[0] if sep and "]/" in rest else ""
        if loop not in TASK_LOOPS or not task:
            return None
        return watch_task_statuses(self.item.item_dir, self._folder_shown(), task)

    def _folder_shown(self) -> str:
        """The item's folder as messages show it: relative to the repository when inside it."""
        folder = self.item.item_dir
        try:
            return folder.relative_to(self.item.repo).as_posix()
        except ValueError:
            return str(folder)

    def check(self, state: EngineState) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            from phasegate.errors import StateCorruptError, os_reason

            raise StateCorruptError(
                f"state file {self.path} cannot be read: {os_reason(exc)}"
            ) from None
        found = parse_status(raw, self.path)
        self._written = raw
        if found.runtime_flags is None:
            team_data(state).pop("runtime_flags", None)  # detected again before the next write
        if state.status == "active" and state.at in TASK_LOOPS and state.mode != "lean":
            self._tasks_added_meanwhile(state, state.at)
        elif state.status == "active" and state.at == PLAN_NODE:
            self._plan_fixed_by_hand(state)
        elif state.status == "completed":
            self._reopen(state)

    def _reopen(self, state: EngineState) -> None:
        """A session at DONE whose tasks.yaml has tasks that are not ``completed`` (added,
        or set back by a person) goes back to IMPLEMENT_LOOP: the run does those tasks
        (the completed ones are skipped), then the final pass (full mode), INTEGRATE,
        RELEASE and DONE again (seed 003: DONE needs every task ``completed``).

        Only the state in memory changes here: a run commits it, a ``status`` shows it.
        """
        from phasegate.engine.walk import enter_node  # only here: status reads stay light

        tasks, problems = read_tasks(self.item.item_dir / "tasks.yaml")
        open_tasks = [t.id for t in tasks if t.status != "completed"]
        if not open_tasks and (problems == ["it is missing or empty"] or not problems):
            return
        # A tasks.yaml a person edited into a problem (a new task's unknown dependency,
        # say) reopens too: the loop, reading it, stops naming the problem.
        cause = (
            f"tasks.yaml has task(s) not completed: {', '.join(open_tasks)}"
            if open_tasks and not problems
            else f"tasks.yaml changed: {'; '.join(problems)}"
        )
        state.d.setdefault("history", []).append(
            {
                "at": utc_now(),
                "from": state.data.get("end_label") or "done",
                "to": REOPEN_NODE,
                "cause": cause,
            }
        )
        state.status = "active"
        state["completed"] = None
        state["summary"] = None
        state.data.pop("end_label", None)
        state.at = REOPEN_NODE
        enter_node(self.item.workflow, state, REOPEN_NODE)

    def _plan_fixed_by_hand(self, state: EngineState) -> None:
        """A session stopped by PLAN's failed gate whose tasks.yaml a person changed since
        (and made valid) goes on from it: PLAN is entered again at its checks, so the
        Planner is not called and the fixed tasks.yaml is not overwritten. A tasks.yaml
        that is unchanged, or still has a problem, has the Planner run again.

        Only the state in memory changes here: a run commits it, a ``status`` shows it.
        """
        from phasegate.engine.walk import enter_node  # only here: status reads stay light

        ns = state.peek(PLAN_NODE)
        failed = team_data(state).get("plan_failed")
        if ns is None or not ns.get("blocked") or not isinstance(failed, dict):
            return
        path = self.item.item_dir / "tasks.yaml"
        now = _digest(path)
        if failed.get("visit") != ns.visit or now is None or now == failed.get("tasks"):
            return
        if read_tasks(path)[1]:
            return
        enter_node(self.item.workflow, state, PLAN_NODE, start_with="review")
        try:
            shown = path.relative_to(self.item.repo).as_posix()
        except ValueError:
            shown = str(path)
        _say(
            f"{state.item}: {shown} was changed since PLAN's gate failed and is valid now: "
            "the session goes on from it (the Planner is not called again)"
        )

    def _tasks_added_meanwhile(self, state: EngineState, loop: str) -> None:
        """Tasks added to tasks.yaml while the session was stopped inside IMPLEMENT_LOOP (at
        a decision, say) join the loop, after the tasks they depend on, so the loop does
        them before the final review (seed 003: every task reaches ``completed`` first);
        a task not begun yet that was taken out of it is skipped. A tasks.yaml with
        problems is left to the loop's own checks, and a lean session's one task to its
        own.

        Only the state in memory changes here: a run commits it, a ``status`` shows it.
        """
        from phasegate.engine.nodes.foreach import dependency_order, safe_key
        from phasegate.engine.plugin_api import Task

        ns = state.peek(loop)
        if ns is None or not isinstance(ns.get("order"), list):
            return  # the loop reads tasks.yaml when it starts
        path = self.item.item_dir / "tasks.yaml"
        tasks, problems = read_tasks(path)
        if problems:
            return
        entries: dict[str, Any] = ns.mapping("items")
        added = [
            Task(
                key=safe_key(t.id),
                title=t.title,
                deps=tuple(safe_key(d) for d in t.dependencies),
                data={"goal": t.goal, "files": list(t.files), "status": t.status},
            )
            for t in tasks
            if safe_key(t.id) not in entries and t.status != "completed"
        ]
        for task in dependency_order(added, str(path)):
            # At the end: after the tasks it depends on, whether already in the loop or added.
            ns["order"].append(task.key)
            entries[task.key] = {"status": "pending", "at": None, **task.to_dict()}
            state.touched(loop)
        listed = {safe_key(t.id) for t in tasks}
        for key, entry in entries.items():
            if key not in listed and entry.get("status") == "pending" and not entry.get("done"):
                # Taken out of tasks.yaml before its turn: skipped, its Coder never called.
                entry["done"] = True
                entry["skip_reason"] = "no longer in tasks.yaml"
                state.touched(loop)

    def prepare(self, state: EngineState) -> None:
        data = team_data(state)
        ns = state.peek(PLAN_NODE)
        if state.at == PLAN_NODE and ns is not None and ns.get("blocked"):
            # What tasks.yaml was when PLAN's gate failed: a person's fix is told from it.
            failed = data.get("plan_failed")
            if not isinstance(failed, dict) or failed.get("visit") != ns.visit:
                tasks = _digest(self.item.item_dir / "tasks.yaml")
                data["plan_failed"] = {"visit": ns.visit, "tasks": tasks}
        if not isinstance(data.get("runtime_flags"), dict):
            data["runtime_flags"] = copilot_flags(self.item.workdir(state))
        track_corrections(state)
        self._remember_decisions(state, data)

    def _remember_decisions(self, state: EngineState, data: dict[str, Any]) -> None:
        """Keep an ad-hoc decision's earlier rounds when its gate is asked again."""
        seen: dict[str, Any] = data.setdefault("decisions_seen", {})
        past: list[Any] = data.setdefault("past_decisions", [])
        workflow = self.item.workflow
        skipped = {
            (str(r.get("id")), int(r.get("visit") or 1)): r
            for r in state.d.get("skipped_decisions") or []
            if isinstance(r, dict)
        }
        for decision_id, before in list(seen.items()):
            # Withdrawn while it waited (the run left its gate): kept as skipped, not pending.
            visit = int(before["entry"]["visit"])
            record = state.decisions.get(decision_id)
            withdrawn = skipped.get((decision_id, visit))
            if withdrawn is None or (record is not None and int(record.get("visit") or 1) == visit):
                continue
            entry = decision_entry(workflow, withdrawn)
            entry["status"] = "skipped"
            entry["resolved_at"] = withdrawn.get("skipped_at") or utc_now()
            entry["resolution_reason"] = str(withdrawn.get("reason") or "withdrawn")
            past.append({"entry": entry, "known_issue": None})
            del seen[decision_id]
        for decision_id, record in state.decisions.items():
            if decision_id in WELL_KNOWN:
                continue
            visit = int(record.get("visit") or 1)
            before = seen.get(decision_id)
            if before is not None and int(before["entry"]["visit"]) != visit:
                past.append(before)
            seen[decision_id] = {
                "entry": decision_entry(workflow, record),
                "known_issue": known_issue(state, record),
            }

    def document(self, state: EngineState) -> TeamStatus:
        workflow = self.item.workflow
        data = team_data(state)
        name, blocker = current_state(workflow, state)
        past = [p for p in data.get("past_decisions") or [] if isinstance(p, dict)]
        decisions = [p["entry"] for p in past]
        decisions += [decision_entry(workflow, r) for r in state.decisions.values()]
        issues = [p["known_issue"] for p in past if p.get("known_issue")]
        issues += [i for r in state.decisions.values() if (i := known_issue(state, r))]
        track = data.get("approve_design") or {}
        usage = state.get("usage_by_role") or {}
        return TeamStatus.model_validate(
            {
                "session": state.item,
                "workflow": "team",
                "mode": state.mode,
                "current_state": name,
                "blocker": blocker,
                "review_strategy": self._strategy(state),
                "user_decisions": decisions,
                "gate_tracking": {
                    "APPROVE_DESIGN": {
                        "correction_status": track.get("correction_status", "none"),
                        "round": int(track.get("round") or 0),
                        "last_correction_dispatch": track.get("last") or {},
                    }
                },
                "runtime_flags": data.get("runtime_flags"),
                "retry_counts": retry_counts(state),
                "tasks": self._task_list(),
                "known_issues": issues,
                "agents_run": sorted(r for r, u in usage.items() if int(u.get("calls", 0)) > 0),
                "last_ci_result": last_ci_result(state),
                "last_update": state.get("updated") or utc_now(),
            }
        )

    def _strategy(self, state: EngineState) -> str | None:
        if state.mode == "lean":
            return "per-batch"  # lean mode reviews every task (seed 003): no gate asks
        record = state.decisions.get(REVIEW_STRATEGY) or {}
        choice = (record.get("answer") or {}).get("choice")
        return choice if record.get("status") == "answered" and choice in STRATEGIES else None

    def _task_list(self) -> list[dict[str, Any]]:
        path = self.item.item_dir / "tasks.yaml"
        try:
            stat = path.stat()
        except OSError:
            self._tasks_key, self._tasks_problems = None, ["it is missing or empty"]
            return []
        key = (stat.st_mtime_ns, stat.st_size)
        if key != self._tasks_key:
            tasks, self._tasks_problems = read_tasks(path)
            self._tasks = [{"id": t.id, "title": t.title, "status": t.status} for t in tasks]
            self._tasks_key = key
        return list(self._tasks)

    def render(self, state: EngineState) -> None:
        # Redacted field by field: phasegate's own words are never rewritten.
        payload = dump_status(self.document(state), self.item.redactor)
        if payload != self._written:
            # Rebuilt from the engine state at every commit: no fsync needed.
            atomic_write_bytes(self.path, payload, durable=False)
            self._written = payload

    def rewrite(self, state: EngineState) -> None:
        """Write status.json from ``state`` even if the last write looked the same."""
        self._written = None
        self.render(state)

    def completed(self, state: EngineState) -> None:
        self.render(state)

    def status_fields(self, state: EngineState) -> dict[str, Any]:
        from phasegate.engine.status import current_label

        workflow = self.item.workflow
        name, _ = current_state(workflow, state)
        # The phase is the state the session is at, DONE once completed: "the last phase
        # started" would name INTAKE_LEAN, lean mode's first step but last in the graph.
        phase = "DONE" if state.status == "completed" else current_label(workflow, state)
        fields: dict[str, Any] = {
            "currentState": name,
            "currentPhase": phase,
            "stateFile": str(self.path),
        }
        if state.status == "active" and state.at in TASK_LOOPS:
            self._task_list()
            if self._tasks_problems:  # a person's edit: the next run stops on it
                path = self.item.relative(self.item.item_dir / "tasks.yaml", state)
                fields["blocked"] = (
                    f"{path} cannot be used: {'; '.join(self._tasks_problems)}; "
                    "fix it, then run again"
                )
        accepted = accepted_notes(state)
        if accepted:
            # Notes a person accepted (seed 003: "accept with known issues") are known
            # issues, not unresolved reviewer concerns.
            fields["unresolvedConcerns"] = [
                {"phase": node.label or node.id, "note": note}
                for node in workflow.nodes
                if node.kind != "end" and node.id not in accepted
                for note in _notes(state, node.id)
            ]
            fields["knownIssues"] = self._known_issues(state)
        return fields

    def summary(self, state: EngineState) -> str | None:
        from phasegate.engine.status import completion_summary

        accepted = accepted_notes(state)
        if not accepted:
            return None
        return completion_summary(self.item.workflow, state, accepted=accepted)

    def _known_issues(self, state: EngineState) -> list[str]:
        """status.json's ``known_issues``: what the person accepted, oldest first."""
        past = [p for p in team_data(state).get("past_decisions") or [] if isinstance(p, dict)]
        issues = [str(p["known_issue"]) for p in past if p.get("known_issue")]
        return issues + [i for r in state.decisions.values() if (i := known_issue(state, r))]


def _notes(state: EngineState, node_id: str) -> list[Any]:
    """The reviewer notes (or failing checks) node ``node_id`` left open."""
    found = state.peek(node_id)
    return list(found.get("notes") or []) if found is not None else []
