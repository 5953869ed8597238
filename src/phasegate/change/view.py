"""The ``change`` state view: seed 002's STATE.yaml, rendered from the engine state.

``phase`` is the label of the node the change is at; ``plan`` and ``impl`` say
where inside ``plan`` and ``impl`` it stands; ``history`` lists every phase
change with its cause. Before every run STATE.yaml is read back: a person
may set ``phase`` by hand (the change then continues from that phase's entry
node), and change ``planning_iterations`` / ``implementation_iterations``.
A STATE.yaml written by hand with no engine state behind it is adopted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from phasegate.change.paths import ChangePaths
from phasegate.change.phases import (
    ChangePhase,
    archive_conflict_command,
    limit_answer,
    manual_fix_command,
    next_command,
)
from phasegate.change.plan_guard import Undo, watch_added_specs, watch_tasks
from phasegate.change.reader import close_review, review_open
from phasegate.change.state import ChangeState
from phasegate.engine.answers import record_command
from phasegate.engine.node_state import NodeState
from phasegate.engine.plugin_api import StateView
from phasegate.engine.state import EngineState
from phasegate.engine.status import current_label
from phasegate.engine.walk import enter_node
from phasegate.errors import StateCorruptError, os_reason
from phasegate.faults import crash_point
from phasegate.state.atomic import atomic_write_bytes, fsync_dir, remove_leftover_temp_files
from phasegate.state.journal import utc_now
from phasegate.state.store import dump_state, parse_state

PLAN_NODES = ("proposal", "specs", "tasks", "planning-limit")
BUDGETS = ("planning_iterations", "implementation_iterations")
#: The cause of the first history entry, the change's creation by ``plan`` (seed 002).
INIT_CAUSE = "plan (init)"
#: The cause of ``challenged -> implementing``: ``impl`` started implementing.
IMPL_CAUSE = "impl"


class ChangeView(StateView):
    """STATE.yaml of a change."""

    name = "change"

    def __init__(self, item: Any, settings: Mapping[str, Any]) -> None:
        super().__init__(item, settings)
        self._written: bytes | None = None

    @classmethod
    def file_names(cls, settings: Mapping[str, Any]) -> list[str]:
        return ["STATE.yaml"]

    def files(self) -> list[Path]:
        """STATE.yaml, and REVIEW.md except while a reviewer's call may record a review
        (``create_review`` writes it then): any other agent's edit of it is put back."""
        files = [self.item.item_dir / name for name in self.file_names(self.settings)]
        review = self.paths.review_path
        if not review_open(review):
            files.append(review)
        # The merge bases archive merges against: phasegate writes each once, no agent.
        base = self.paths.base_dir
        if base.is_dir():
            files += sorted(p for p in base.rglob("*") if p.is_file() or p.is_symlink())
        if self._planned():
            # The challenged plan is what archive merges: no agent rewrites it after planning.
            paths = self.paths
            files += [paths.proposal_path, *(paths.specs_dir / n for n in paths.spec_files())]
        return files

    def watch_call(self, role: str) -> Callable[[], list[str]] | None:
        """After planning: a spec file an agent adds to the challenged plan is removed, and
        a tasks.md it dropped a challenged task from put back."""
        if not self._planned():
            return None
        paths, repo = self.paths, self.item.repo
        watches = (watch_added_specs(paths.specs_dir, repo), watch_tasks(paths.tasks_path, repo))
        recorded = {path: copy for undo in watches for path, copy in undo.recorded.items()}
        return Undo(lambda: [words for undo in watches for words in undo()], recorded)

    def _planned(self) -> bool:
        """Whether STATE.yaml says planning is over (implementing or complete)."""
        try:
            document = parse_state(
                self.paths.state_path.read_bytes(), self.paths.state_path, "yaml"
            )
        except (OSError, StateCorruptError):
            return False
        return document.get("phase") in (ChangePhase.IMPLEMENTING.value, ChangePhase.COMPLETE.value)

    @property
    def paths(self) -> ChangePaths:
        return ChangePaths(self.item.repo, self.item.name, self.item.item_dir)

    # -- reading back --------------------------------------------------------------------

    def _read(self) -> ChangeState | None:
        path = self.paths.state_path
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateCorruptError(f"state file {path} cannot be read: {os_reason(exc)}") from None
        self._written = raw
        return ChangeState.from_document(parse_state(raw, path, "yaml"), path)

    def adoptable(self) -> bool:
        return self.paths.state_path.is_file()

    def adopt(self) -> EngineState | None:
        found = self._read()
        if found is None:
            return None
        workflow = self.item.workflow
        mode = found.mode if found.mode in workflow.modes else workflow.default_mode
        state = EngineState.new(
            item=self.item.name,
            workflow=workflow.name,
            mode=mode,
            description=found.description,
            created=found.created or utc_now(),
            base_commit=found.base_commit,
        )
        state["history"] = [h.model_dump(mode="json", by_alias=True) for h in found.history]
        # Written by a person, not created by ``plan``: its history is its own (no ``init``).
        state.data["adopted"] = True
        state.data["spec_bases"] = dict(found.spec_bases)
        if found.plan is not None:
            state.data["adopted_plan"] = found.plan.model_dump(mode="json")
        if found.impl is not None:
            state.data["adopted_impl"] = found.impl.model_dump(mode="json")
            state.data["epoch"] = found.epoch
        for key in BUDGETS:
            state.data[key] = getattr(found, key)
        self._position(state, found.phase.value)
        return state

    def check(self, state: EngineState) -> None:
        found = self._read()
        if found is None:
            return
        for key in BUDGETS:
            state.data[key] = getattr(found, key)
        engine_label = current_label(self.item.workflow, state)
        # What the last commits rendered: a STATE.yaml still showing one of them is not a
        # hand edit (a run may have stopped between its commit and the render).
        rendered = {state.data.get("view_phase"), state.data.get("view_phase_before"), engine_label}
        if found.phase.value not in rendered:
            self.item.record(
                "state.phase_edited",
                from_label=engine_label,
                to=found.phase.value,
                file=self.paths.rel(self.paths.state_path),
            )
            self._position(state, found.phase.value)

    def _position(self, state: EngineState, phase: str) -> None:
        """Put the cursor at the node a change in ``phase`` continues from."""
        workflow = self.item.workflow
        label = workflow.labels.get(phase)
        if phase == ChangePhase.ARCHIVED.value:
            state.at = "@end"
            state.status = "completed"
            state.data["end_label"] = phase
            return
        entry = label.entry if label is not None else None
        if entry is None:
            return
        state.at = entry
        state.status = "active"
        enter_node(workflow, state, entry, None, label.start_with if label else None)

    # -- rendering -----------------------------------------------------------------------

    def prepare(self, state: EngineState) -> None:
        phase = current_label(self.item.workflow, state)
        if state.data.get("view_phase") != phase:
            state.data["view_phase_before"] = state.data.get("view_phase")
            state.data["view_phase"] = phase
        else:  # the render before this commit happened: only the last one can lag
            state.data["view_phase_before"] = None

    def document(self, state: EngineState) -> dict[str, Any]:
        workflow = self.item.workflow
        phase = current_label(workflow, state) or ChangePhase.PROPOSED.value
        usage = state.get("usage") or {}
        data = state.data
        document: dict[str, Any] = {
            "change_id": state.item,
            "phase": phase,
            "description": state.get("description", ""),
            "mode": state.mode,
            "planning_iterations": int(
                data.get("planning_iterations") or workflow.max_iterations(state.mode)
            ),
            "implementation_iterations": int(
                data.get("implementation_iterations") or workflow.max_iterations(state.mode)
            ),
            "created": state.get("created"),
            "updated": state.get("updated"),
            "base_commit": state.base_commit,
            "worktree": state.worktree,
            "plan": self._plan(state),
            "impl": self._impl(state),
            "spec_bases": dict(data.get("spec_bases") or {}),
            "archived_to": data.get("archived_to"),
            "history": _history(state),
            "usage": {
                k: usage.get(k, 0)
                for k in (
                    "calls",
                    "input_tokens",
                    "output_tokens",
                    "cache_read_tokens",
                    "cache_write_tokens",
                    "cost_usd",
                )
            },
        }
        if data.get("archive_conflicts"):  # what the last archive refused, until it archives
            keys = list(document)
            keys.insert(keys.index("archived_to") + 1, "archive_conflicts")
            document["archive_conflicts"] = list(data["archive_conflicts"])
            document = {key: document[key] for key in keys}
        return document

    def _plan(self, state: EngineState) -> dict[str, Any] | None:
        tasks = state.peek("tasks")
        specs = state.peek("specs")
        at = state.at or "proposal"
        if all(state.peek(n) is None for n in PLAN_NODES):
            adopted = state.data.get("adopted_plan")
            return dict(adopted) if isinstance(adopted, dict) else None
        if at == "proposal":
            step = "proposal"
        elif at == "specs":
            step = "specs"
        elif at == "tasks" and tasks is not None:
            stage = tasks.stage
            if stage.startswith("review"):
                step = "challenge"
            else:
                step = "tasks" if tasks.iteration <= 1 else "reproposal"
        elif at == "planning-limit":
            step = "decide"
        else:
            step = "done"
        plan: dict[str, Any] = {
            "step": step,
            "iteration": tasks.iteration if tasks is not None else 1,
            "specs_done": _done_items(specs),
            "verdict": None,
            "summary": "",
            "issues": [],
            "question": None,
        }
        last = _last_record(tasks, "challenger")
        if last is not None:
            word = str(last.get("word"))
            plan["verdict"] = word if word in ("APPROVED", "REJECTED") else "NEEDS_REVISION"
            plan["summary"] = last.get("summary") or ""
            plan["issues"] = [_challenge_issue(i) for i in last.get("issues") or []]
        decision = state.decisions.get("planning-limit")
        if decision is not None and decision.get("status") == "pending":
            plan["question"] = decision.get("question")
        return plan

    def _impl(self, state: EngineState) -> dict[str, Any] | None:
        implement = state.peek("implement")
        review = state.peek("review")
        if implement is None and review is None:
            adopted = state.data.get("adopted_impl")
            return dict(adopted) if isinstance(adopted, dict) else None
        at = state.at or ""
        if at == "implement":
            step = "implement"
        elif at == "review" and review is not None:
            step = "review" if review.stage.startswith("review") else "fix"
        elif at == "manual-fix":
            step = "stopped"
        else:
            step = "done"
        impl: dict[str, Any] = {
            "step": step,
            "iteration": review.iteration if review is not None else 1,
            "round": f"{review.visit}.{review.iteration}" if review is not None else None,
            "layers_done": _done_items(implement),
            "verdict": None,
            "summary": "",
            "findings": list(review.get("findings") or []) if review is not None else [],
            "stop_reason": None,
        }
        last = _last_record(review, "reviewer")
        if last is not None and last.get("word") in ("APPROVED", "NEEDS_FIX", "MAJOR_ISSUES"):
            impl["verdict"] = last.get("word")
            impl["summary"] = last.get("summary") or ""
        if step == "stopped" and review is not None:
            if review.get("outcome") == "major-issues":
                impl["stop_reason"] = "the reviewer found MAJOR_ISSUES"
            elif no_changes(review):
                impl["stop_reason"] = (
                    f"the implementer changed no files in {review.iteration} round(s), "
                    "so no reviewer was asked"
                )
            else:
                limit = state.data.get("implementation_iterations") or "?"
                impl["stop_reason"] = (
                    f"the review still says NEEDS_FIX after {review.iteration} round(s) "
                    f"(implementation_iterations {limit})"
                )
        return impl

    def render(self, state: EngineState) -> None:
        document = _with_kept_keys(self.document(state), self._previous())
        impl = document.get("impl") or {}
        if document.get("phase") != ChangePhase.IMPLEMENTING.value or impl.get("step") != "review":
            close_review(self.paths.review_path)  # no review awaited: no call may write it
        payload = dump_state(self.item.redactor.data(document), "yaml")
        if payload != self._written:
            atomic_write_bytes(self.paths.state_path, payload, durable=False)
            self._written = payload

    def _previous(self) -> dict[str, Any]:
        """The STATE.yaml there is (as last read or written), for the keys a person added."""
        path = self.paths.state_path
        raw = self._written
        if raw is None:
            try:
                raw = path.read_bytes()
            except OSError:
                return {}
        try:
            found = parse_state(raw, path, "yaml")
        except StateCorruptError:
            return {}
        return found if isinstance(found, dict) else {}

    def status_fields(self, state: EngineState) -> dict[str, Any]:
        phase = current_label(self.item.workflow, state)
        fields: dict[str, Any] = {
            "status": phase,
            "currentPhase": phase,
            "stateFile": str(self.paths.state_path),
        }
        at = state.at if state.status == "active" else None
        if at is not None and self.item.workflow.label_of(at) == phase:
            # The next node is the phase's own (``archive`` of a complete change, the
            # challenge of a proposed one): no phase comes next until the command it
            # names (``nextCommand``) ran.
            fields["nextPhase"] = None
        # The gates ``impl`` and ``plan --rechallenge`` answer themselves, and the command
        # ``phasegate change status`` names for each (also the one its pending decision
        # names): a rejected plan is edited by hand before it is challenged again.
        gate = {
            "manual-fix": "manual-fix",
            "rejected": "rechallenge",
            "planning-limit": "planning-limit",
        }.get(str(state.at))
        decision = state.decisions.get(gate or "") or {}
        if gate is not None and decision.get("status") == "pending":
            if gate == "manual-fix":
                command = manual_fix_command(self.item.name)
            elif gate == "rechallenge":
                command = next_command(ChangePhase.REJECTED, self.item.name)
            else:  # as ``plan`` names it: one command answers and acts on the answer
                command = limit_answer(self.item.name, list(decision.get("choices") or {}))
            fields["nextCommand"] = command
            fields["pendingDecisions"] = [
                {
                    "id": d["id"],
                    "question": d.get("question"),
                    "choices": list(d.get("choices") or {}),
                    "command": command
                    if d.get("id") == gate
                    else record_command(self.item.name, d),
                }
                for d in state.decisions.values()
                if d.get("status") == "pending"
            ]
        conflicts = state.data.get("archive_conflicts")
        if state.at == "archive" and not conflicts:
            # The archive action runs whole within one command: one that stopped (refused,
            # or killed) is not in progress; the next ``archive`` starts it again.
            fields["inProgress"] = None
        if conflicts and state.at == "archive":
            fields["nextCommand"] = archive_conflict_command(self.item.name)
            # Nothing runs: the archive waits on a merge by hand, then `archive --resolved`.
            fields["inProgress"] = {
                "phase": phase,
                "node": "archive",
                "kind": "action",
                "iteration": 1,
                "maxIterations": 1,
                "stage": "conflict",
                "conflicts": [str(c) for c in conflicts],
            }
        return fields

    def completed(self, state: EngineState) -> None:
        """An archived change's folder moves into the archive (once, even after a crash)."""
        self.render(state)
        target_rel = state.data.get("archived_to")
        if not target_rel or self.paths.archived:
            return
        target = self.item.repo / str(target_rel)
        if target.exists():
            raise StateCorruptError(
                f"cannot move {self.paths.dir} to {target}: the target already exists; "
                "both were left untouched"
            )
        # A killed write's leftovers, in any subfolder, are not moved into the archive.
        self.item.remove_stale_temp_files()
        remove_leftover_temp_files(self.paths.dir, recursive=True)
        crash_point("change.before_move")
        source = self.paths.dir
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)
        fsync_dir(source.parent)
        fsync_dir(target.parent)
        self.item.moved_to(target)


def _history(state: EngineState) -> list[dict[str, Any]]:
    """Every phase change, starting with the seed's ``[*] --> proposed: plan (init)`` for a
    change ``plan`` created."""
    history = [
        {"at": h.get("at"), "from": h.get("from"), "to": h.get("to"), "cause": _cause(h)}
        for h in state.get("history") or []
    ]
    created = not history or history[0]["from"] is not None
    if created and not state.data.get("adopted"):
        init = {"at": state.get("created"), "from": None, "to": "proposed", "cause": INIT_CAUSE}
        history.insert(0, init)
    return history


#: The causes seed 002 names for a move the engine records under its node's outcome.
SEED_CAUSES: dict[tuple[Any, Any, str], str] = {
    ("challenged", "implementing", "challenged done"): IMPL_CAUSE
}


def _cause(entry: Mapping[str, Any]) -> str:
    cause = str(entry.get("cause", ""))
    return SEED_CAUSES.get((entry.get("from"), entry.get("to"), cause), cause)


def _with_kept_keys(document: dict[str, Any], previous: Mapping[str, Any]) -> dict[str, Any]:
    """``document`` plus the top-level keys a person added to STATE.yaml, each kept after
    the key it followed there."""
    known = set(document) | set(ChangeState.model_fields)
    extras = [key for key in previous if key not in known]
    if not extras:
        return document
    order = list(document)
    earlier = list(previous)
    for key in extras:
        anchors = [k for k in earlier[: earlier.index(key)] if k in order]
        order.insert(order.index(anchors[-1]) + 1 if anchors else 0, key)
    return {key: document[key] if key in document else previous[key] for key in order}


def _done_items(node: NodeState | None) -> list[str]:
    if node is None:
        return []
    items = node.get("items") or {}
    return [
        k for k in node.get("order") or [] if items.get(k, {}).get("status") in ("done", "skipped")
    ]


def no_changes(review: NodeState) -> bool:
    """Whether the last review round was decided by phasegate without a reviewer, because
    the work tree held no implementation changes to review."""
    records = list(review.get("iterations") or [])
    return bool(records) and records[-1].get("source") == "engine"


def _last_record(node: NodeState | None, reviewer: str) -> dict[str, Any] | None:
    if node is None:
        return None
    records = [r for r in node.get("iterations") or [] if r.get("reviewer") in (reviewer, "engine")]
    return records[-1] if records else None


def _challenge_issue(issue: Mapping[str, Any]) -> dict[str, Any]:
    severity = str(issue.get("severity", "high")).lower()
    if severity not in ("high", "medium", "low"):
        severity = "high" if severity in ("blocker", "critical") else "medium"
    return {
        "severity": severity,
        "description": issue.get("description", ""),
        "location": issue.get("location"),
    }
