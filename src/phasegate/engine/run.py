"""The graph walk: one run of one work item, node by node, one commit per step.

A workflow's nodes are walked from the cursor the state records; each node
kind's handler (:mod:`phasegate.engine.nodes`) is a generator that yields
*effects* (an agent call, a check round) and returns an outcome; the outcome's
edge (``on``) names the next node. Effects are performed by the driver, which
runs them one at a time here and several at once for a parallel foreach;
state is only ever changed and committed on the engine's thread, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any

from phasegate.engine.calls import Backends, call_agent, relative_to
from phasegate.engine.checks import run_check_round
from phasegate.engine.item import WorkItem
from phasegate.engine.plugin_api import PluginContext, Task, plugin
from phasegate.engine.recorded import move_key
from phasegate.engine.run_rules import NodeRules
from phasegate.engine.state import EngineState
from phasegate.engine.status import REFUSED
from phasegate.engine.walk import (
    Asker,
    Call,
    CaughtUp,
    Cursor,
    Effect,
    End,
    NoTerminal,
    Outcome,
    RunOptions,
    RunStop,
    TopCursor,
    Workspace,
    definition_path,
)
from phasegate.errors import BadInputError, BlockedError
from phasegate.state.journal import utc_now
from phasegate.workflow.model import AgentNode, AnyNode, EndNode
from phasegate.workflow.parts import BLOCKED_TARGET, Budget
from phasegate.workflow.routing import target_of


class Run(NodeRules):
    """One run of one work item (under its run lock)."""

    def __init__(
        self,
        item: WorkItem,
        state: EngineState,
        backends: Backends,
        asker: Asker | None = None,
        options: RunOptions | None = None,
    ) -> None:
        self.item = item
        self.state = state
        self.backends = backends
        self.asker: Asker = asker or NoTerminal()
        self.options = options or RunOptions()
        # What refused the last run (see ``refused``) no longer stands: this run tries again.
        state.d.pop(REFUSED, None)
        # An answer a run killed after acting on it already gave: not given to the next
        # visit of its gate by the same command run again to resume (that visit is asked).
        self.presets: dict[str, str] = {
            decision: raw
            for decision, raw in self.options.answers.items()
            if not self._answer_spent(decision, raw)
        }
        self.workflow = item.workflow
        #: Labels at which this run stops before executing the node (a command's stops).
        self.stop_labels: set[str] = set()
        self.started_labels: set[str] = set()
        #: While a resumed run catches up with its journal (see ``Runner``): how many moves
        #: of the top level the interrupted run made after its last state commit. They are
        #: walked again (their results reused) with no stop, then the walk stops.
        self.replay_moves: int | None = None
        self._top_moves = 0
        #: Node path prefixes (``tasks[T3]/``) of parallel items, and where each works.
        self.workspaces: dict[str, Workspace] = {}
        #: Each node path's label (the workflow does not change during a run).
        self._labels: dict[str, str] = {}
        #: (target, base) -> ``target`` relative to ``base``, where that is path arithmetic.
        self._relative: dict[tuple[Path, Path], str] = {}

    # -- small helpers -------------------------------------------------------------------

    def _answer_spent(self, decision: str, raw: str) -> bool:
        """Whether ``--answer DECISION=raw`` is what the decision's latest visit, answered
        and not asked again since, was answered with by a flag."""
        from phasegate.engine.answers import split_choice

        record = self.state.decisions.get(decision)
        visit, answer = 0, None
        if isinstance(record, dict) and isinstance(record.get("visit"), int):
            visit = record["visit"]
            answer = record.get("answer") if record.get("status") == "answered" else None
        recorded = self.item.recorded()
        later = recorded.last_visit(decision)
        if later is not None and later >= visit:
            answer = recorded.answer(decision, later)
        return (
            isinstance(answer, Mapping)
            and answer.get("by") == "flag"
            and answer.get("choice") == split_choice(raw)[0]
        )

    def label(self, path: str) -> str:
        known = self._labels.get(path)
        if known is None:
            known = self._labels[path] = self.workflow.label_of(definition_path(path))
        return known

    def save(self, *, lazy: bool = False, durable: bool = False) -> None:
        self.item.save(self.state, lazy=lazy, durable=durable)

    def context(
        self, path: str, node: AnyNode | None, task: Task | None, settings: Mapping[str, Any]
    ) -> PluginContext:
        return PluginContext(
            self.item,
            self.state,
            path,
            node,
            task,
            settings,
            answers=self.presets,
            workspace=self.workspace_dir(path),
        )

    def workspace(self, path: str) -> Workspace | None:
        """The workspace of the parallel item ``path`` belongs to, if it belongs to one."""
        for prefix, space in self.workspaces.items():
            if path.startswith(prefix):
                return space
        return None

    def workspace_dir(self, path: str) -> Path | None:
        space = self.workspace(path) if self.workspaces else None
        return space.workdir if space is not None else None

    def workdir(self, path: str = "") -> Path:
        """Where the agents of node ``path`` work."""
        return self.workspace_dir(path) or self.item.workdir(self.state)

    def rel(self, path: str, target: Path) -> str:
        """``target`` as the agents of node ``path`` see it (relative to where they work)."""
        base = self.workdir(path) if self.workspaces else self.item.workdir(self.state)
        key = (target, base)
        known = self._relative.get(key)
        if known is not None:
            return known
        try:
            known = str(target.relative_to(base))
        except ValueError:
            return relative_to(target, base)  # through symlinks: asked again each time
        if len(self._relative) < 1024:
            self._relative[key] = known
        return known

    def limit(self, path: str, node: AgentNode, reviewer: str | None = None) -> int:
        """How many review iterations ``node`` may use (its budget, extensions included)."""
        budget: Budget = node.budget
        peeked = self.state.peek(path)
        extra = int(peeked.get("extra_budget", 0)) if peeked is not None else 0
        if budget.revisions is not None:
            base = budget.revisions + 1
        elif isinstance(budget.max, int):
            base = budget.max
        elif budget.max == "mode":
            base = self.workflow.max_iterations(self.state.mode)
        else:
            raw = self.state.data.get(budget.max)
            base = (
                int(raw)
                if isinstance(raw, int) and raw > 0
                else (self.workflow.max_iterations(self.state.mode))
            )
        return base + extra

    def classifier(self, question: Any) -> Callable[[str], str] | None:
        node_id = getattr(question, "context", "")
        try:
            node = self.workflow.node(definition_path(node_id)) if node_id else None
        except KeyError:
            node = None
        name = getattr(node, "classify", None)
        if not name:
            return None
        predicate = plugin("predicates", name)

        def classify(raw: str) -> str:
            ctx = self.context(node_id, node, None, {"answer": raw})
            found = predicate(ctx)
            return str(found) if found else raw

        return classify

    # -- the walk -----------------------------------------------------------------------

    def drive(self, steps: Generator[Effect, Any, Any]) -> Any:
        """Run a generator of effects to its end, performing each effect in turn."""
        value: Any = None
        while True:
            try:
                effect = steps.send(value)
            except StopIteration as done:
                return done.value
            value = self.perform(effect)

    def perform(self, effect: Effect) -> Any:
        result: Any
        if isinstance(effect, Call):
            result = call_agent(self.item, self.state, self.backends, effect.spec)
            key = effect.spec.key
        else:
            result = run_check_round(self.item, self.state, effect.round)
            key = effect.round.key
        # Delivered to the node, which applies it before its next commit.
        self.item.applied(key)
        return result

    def walk(self) -> End:
        """Walk the top-level graph from the cursor to an end node (or a stop)."""
        nodes = tuple(self.workflow.nodes)
        start = self.workflow.start_node(self.state.mode)
        try:
            return self.drive(self.frame("", "", nodes, TopCursor(self.state), start, None))  # type: ignore[no-any-return]
        except (BlockedError, BadInputError) as exc:
            self.refused(exc)
            raise

    def refused(self, exc: BlockedError | BadInputError) -> None:
        """A step that refused to go on (an action, a loop's items, a worktree to run them
        in): journaled and kept under the state's ``refused`` (status says it blocks the
        item, and why) unless what stopped it says so already (a node's blocked outcome,
        a prerequisite, a budget stop, a merge conflict waiting on a person)."""
        from phasegate.engine.live_run import last_event
        from phasegate.engine.nodes.parallel_conflicts import ConflictStopped

        at = self.state.at
        if isinstance(exc, ConflictStopped) or not at or at.startswith("@"):
            return
        last = last_event(self.item.journal.path) or {}
        if last.get("event") in ("node.blocked", "transition.blocked", "budget.stopped"):
            return
        if any(
            (f := self.state.peek(p)) is not None and f.get("blocked") for p in self.state.paths()
        ):
            return
        message = str(exc)
        self.state.d[REFUSED] = {"node": at, "message": message}
        self.item.record("transition.blocked", to=at, current=at, message=message, sync_now=True)
        self.save(durable=True)

    def frame(
        self,
        def_prefix: str,
        run_prefix: str,
        scope: tuple[Any, ...],
        cursor: Cursor,
        start: str,
        task: Task | None,
    ) -> Generator[Effect, Any, End]:
        """Walk one scope (the top level, or one foreach item's body) to an end node."""
        ids = [n.id for n in scope]
        while True:
            node_id = cursor.get()
            if node_id is None:
                node_id = start
                cursor.set(node_id)
                self.enter(run_prefix + node_id, None)
                self.save(lazy=True)
            index = ids.index(node_id)
            node = scope[index]
            path = run_prefix + node_id
            found = self.state.peek(path)
            if found is None or not found.get("visit"):
                self.enter(path, None)  # a cursor put here by hand (or by a view) enters fresh
            if isinstance(node, EndNode):
                return self.reach_end(path, node)
            if not def_prefix:
                self.before_node(path, node)
            mode_skips = not def_prefix and node.id in self.workflow.modes[self.state.mode].skip
            if mode_skips or self.unwanted(path, node, task):
                outcome = self.skip(path, node)
            else:
                outcome = yield from self.execute(path, node, task)
            target = outcome.target or target_of(scope, index, outcome.name)
            if target is None:  # validate() prevents it; a hand-edited state could not
                raise BlockedError(f"{self.item.name}: no way on from {path} ({outcome.name})")
            if target == BLOCKED_TARGET:
                self.blocked(path, outcome)
            self.move(path, run_prefix + target, outcome, cursor, target)
            if not def_prefix:
                self.after_node(path, node, outcome)

    def enter(
        self, path: str, incoming: Mapping[str, Any] | None, start_with: str | None = None
    ) -> None:
        """Start a fresh visit of ``path``: its state reset, the incoming issues kept."""
        self.enter_visit(path, incoming, start_with)

    def move(
        self, path: str, target_path: str, outcome: Outcome, cursor: Cursor, target: str
    ) -> None:
        """Follow ``outcome``'s edge from ``path`` to ``target``."""
        before, after = self.label(path), self.label(target_path)
        incoming = {"from": path, "outcome": outcome.name, "issues": outcome.issues}
        visit = self.state.node(path).visit  # the visit that moves on (``target`` may be it)
        cursor.set(target)
        if isinstance(cursor, TopCursor):
            self._top_moves += 1
        self.withdraw_left(path, f"the run went on from {before} ({outcome.name}) without it")
        if outcome.extend is not None and self.state.peek(target_path) is not None:
            self.resume_loop(target_path, outcome.extend, outcome.issues)
        else:
            self.enter(target_path, incoming if outcome.issues else None, outcome.start_with)
        self.item.record(
            "node.transition", node=path, to=target_path, outcome=outcome.name, visit=visit
        )
        if self.replay_moves is not None:
            self.item.applied(move_key(path, visit))  # the interrupted run's move, made again
        if before != after:
            cause = outcome.cause or f"{path} {outcome.name}"
            self.state.d.setdefault("history", []).append(
                {"at": utc_now(), "from": before, "to": after, "cause": cause}
            )
            self.item.record(
                "label.changed",
                from_label=before,
                to=after,
                node=path,
                outcome=outcome.name,
                cause=cause,
            )
        self.save(lazy=True)

    def withdraw_left(self, left: str | None, reason: str) -> None:
        """Decisions still pending at node ``left`` (or inside it; ``None``: anywhere) that the
        run leaves without them: they no longer wait for anyone. Each is journaled as
        withdrawn (an answer to it is refused as too late) and kept, marked ``skipped`` with
        ``reason``, under the state's ``skipped_decisions``."""
        for key, record in list(self.state.decisions.items()):
            context = str(record.get("context") or "")
            if record.get("status") != "pending" or not (
                left is None or context == left or context.startswith((f"{left}/", f"{left}["))
            ):
                continue
            del self.state.decisions[key]
            skipped = {**record, "status": "skipped", "skipped_at": utc_now(), "reason": reason}
            self.state.d.setdefault("skipped_decisions", []).append(skipped)
            self.item.record(
                "decision.withdrawn", id=key, visit=int(record.get("visit", 0)), reason=reason
            )

    def resume_loop(self, path: str, extra: int, issues: list[dict[str, Any]]) -> None:
        """Continue an agent node's revise loop with ``extra`` more iterations (one answer,
        one extension)."""
        ns = self.state.node(path)
        node = self.workflow.node(definition_path(path))
        budget = node.budget.max if isinstance(node, AgentNode) else "mode"
        if isinstance(budget, str) and budget != "mode" and budget in self.state.data:
            # A number a view reads back (STATE.yaml's planning_iterations): it grows there.
            self.state.data[budget] = int(self.state.data[budget]) + extra
        else:
            ns["extra_budget"] = int(ns.get("extra_budget", 0)) + extra
        records = ns.records("iterations")
        last = [r for r in records if not r.get("approved")]
        said = list(last[-1].get("issues") or []) if last else []
        if last and last[-1].get("unclear"):
            # An unclear review is no issue to fix: the note, then that the review could not
            # be read, the last readable review's issues and what the reviewer wrote.
            from phasegate.engine.nodes.agent_outcome import unclear_feedback

            reviewer, why = str(last[-1].get("reviewer")), str(last[-1].get("summary") or "")
            feedback = [*issues, *unclear_feedback(records, reviewer, why, said)]
        else:
            feedback = issues or said
        ns.iteration = ns.iteration + 1
        ns.stage = "execute"
        ns["feedback"] = feedback
        for key in ("outcome", "target", "completed", "review", "notes", "summary", "issues"):
            ns.d.pop(key, None)
        limit = self.limit(path, node) if isinstance(node, AgentNode) else None
        self.item.record(
            "node.extended", node=path, phase=self.label(path), extra=extra, limit=limit
        )

    def execute(
        self, path: str, node: AnyNode, task: Task | None
    ) -> Generator[Effect, Any, Outcome]:
        """Run ``node`` (or take the outcome it already recorded) and record how it ended."""
        from phasegate.engine.nodes import handler_for

        ns = self.state.node(path)
        if ns.get("outcome") is not None:
            if not ns.get("blocked"):
                return Outcome(
                    str(ns.get("outcome")),
                    ns.get("target"),
                    list(ns.get("issues") or []),
                    extend=ns.get("extend"),
                    start_with=ns.get("start_with"),
                    cause=ns.get("cause"),
                )
            self.retry(path)
            ns = self.state.node(path)
        if not ns.get("started"):
            self.start(path, node)
        outcome: Outcome = yield from handler_for(node)(self, path, node, task)
        ns = self.state.node(path)
        ns["outcome"] = outcome.name
        ns["target"] = outcome.target
        for key in ("extend", "start_with", "cause"):
            if getattr(outcome, key) is not None:
                ns[key] = getattr(outcome, key)
        if outcome.issues:
            ns["issues"] = outcome.issues
        ns["completed"] = ns.get("completed") or utc_now()
        self.save(lazy=True)
        return outcome

    def reach_end(self, path: str, node: EndNode) -> End:
        self.item.record("node.end", node=path, status=node.status, outcome=node.outcome)
        return End(node.outcome, node.status, node.message, path, self.label(path))

    # -- stops and hooks of the top level -------------------------------------------------

    def before_node(self, path: str, node: AnyNode) -> None:
        label = self.label(path)
        if self.replay_moves is not None:
            if self._top_moves >= self.replay_moves:
                raise CaughtUp(path)
            self.started_labels.add(label)  # the interrupted run went on past it
            return
        if label in self.stop_labels and label not in self.started_labels:
            raise RunStop("stopped", label)
        self.started_labels.add(label)

    def after_node(self, path: str, node: AnyNode, outcome: Outcome) -> None:
        if self.replay_moves is not None:
            return  # the interrupted run went on: this run's options apply from where it was
        label = self.label(path)
        if self.options.until is not None and label == self.options.until:
            raise RunStop("phase-done", f"stopped after {label} (--until)")
        if self.options.phase is not None and label == self.options.phase:
            raise RunStop("phase-done", f"phase {label} complete")
