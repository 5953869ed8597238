"""What the walk checks around a node: its prerequisites and visit budget when it starts,
its ``when`` predicate, a skip, and an outcome that blocks the run.

Visits are counted since the item's last retry of a blocked node: the state's
``retries`` counts those retries, and a node entered after one records which
(``allowance``) and how many of its visits came before it (``visits_before``).
So a person who re-runs a blocked item gives every node a new allowance of
visits, while a resumed run (after a crash) counts exactly as before.

:class:`NodeRules` is mixed into :class:`phasegate.engine.run.Run`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from phasegate.engine.item import has_content
from phasegate.engine.plugin_api import Task, plugin
from phasegate.engine.status import again_command
from phasegate.engine.walk import Outcome, definition_path, enter_node
from phasegate.errors import BackendUnavailable, BlockedError, ConfigError
from phasegate.state.journal import utc_now
from phasegate.workflow.model import AgentNode, AnyNode, ForeachNode
from phasegate.workflow.transitions import validate_transition

if TYPE_CHECKING:
    from phasegate.engine.calls import Backends
    from phasegate.engine.item import WorkItem
    from phasegate.engine.plugin_api import PluginContext
    from phasegate.engine.run import Run
    from phasegate.engine.state import EngineState
    from phasegate.engine.walk import RunOptions
    from phasegate.workflow.model import Workflow

#: The state's count of blocked nodes retried (visits are counted since the last one).
RETRIES = "retries"


class NodeRules:
    """The rules the walk applies around each node (mixed into ``Run``)."""

    if TYPE_CHECKING:
        item: WorkItem
        state: EngineState
        options: RunOptions
        workflow: Workflow
        backends: Backends

        def label(self, path: str) -> str: ...
        def save(self, *, lazy: bool = False, durable: bool = False) -> None: ...
        def limit(self, path: str, node: AgentNode, reviewer: str | None = None) -> int: ...
        def context(
            self,
            path: str,
            node: AnyNode | None,
            task: Task | None,
            settings: Mapping[str, Any],
        ) -> PluginContext: ...

    def _executor_backend(self, node: AgentNode) -> None:
        """Make the backend of ``node``'s executor before the node starts: one that cannot be
        made (a scripted agent's script missing or broken, a misspelt setting) stops the run
        now, with nothing of the node journaled, as its first call would have stopped it
        after (the next run then asked what to do with a phase left half done). An executor
        chosen at run time is made at its call."""
        if node.executor_selector is not None:
            return
        role = str(node.executor)
        try:
            self.backends.for_role(role)
        except (ConfigError, BackendUnavailable) as exc:
            raise type(exc)(f"{role}: {exc}") from None

    def enter_visit(
        self, path: str, incoming: Mapping[str, Any] | None, start_with: str | None = None
    ) -> None:
        """Start a fresh visit of ``path``, counted in the allowance of the last retry."""
        previous = self.state.peek(path)
        retries = int(self.state.d.get(RETRIES, 0))
        before = 0
        if previous is not None and retries:
            if int(previous.get("allowance", 0)) == retries:
                before = int(previous.get("visits_before", 0))
            else:
                before = previous.visit  # its visits before the retry are not counted
        enter_node(self.workflow, self.state, path, incoming, start_with)
        if retries:
            ns = self.state.node(path)
            ns["allowance"] = retries
            if before:
                ns["visits_before"] = before

    def retry(self, path: str) -> None:
        """Enter a blocked node afresh (its issues as its feedback): the person who runs the
        item again gives every node a new allowance of visits."""
        ns = self.state.node(path)
        after, outcome = ns.get("blocked"), ns.get("outcome")
        issues = list(ns.get("issues") or [])
        self.state.d[RETRIES] = int(self.state.d.get(RETRIES, 0)) + 1
        self.enter_visit(path, {"from": path, "outcome": outcome, "issues": issues})
        self.item.record("node.retried", node=path, after=after)

    def visits(self, path: str) -> int:
        """The visits of ``path`` counted against its limit (since the last retry)."""
        found = self.state.peek(path)
        return found.visit - int(found.get("visits_before", 0)) if found is not None else 0

    def over_visit_limit(self, path: str) -> bool:
        """Whether this visit of ``path`` is one more than its visit limit allows."""
        limit = self.workflow.visit_limit(definition_path(path))
        return limit is not None and self.visits(path) > limit

    def start(self, path: str, node: AnyNode) -> None:
        """Check ``node``'s prerequisites and its visit budget, then mark it started."""
        ns = self.state.node(path)
        if not definition_path(path).count("/"):
            self.check_prerequisites(path, node)
        if self.over_visit_limit(path):
            ns["started"] = utc_now()
            self.item.record(
                "node.exhausted",
                node=path,
                visits=self.visits(path),
                visit=ns.visit,
                max=self.workflow.visit_limit(definition_path(path)),
            )
            return
        if isinstance(node, AgentNode):
            self._executor_backend(node)
        ns["started"] = utc_now()
        self.item.record(
            "node.started",
            node=path,
            kind=node.kind,
            phase=self.label(path),
            visit=ns.visit,
            mode=self.state.mode,
            max_iterations=self.limit(path, node) if isinstance(node, AgentNode) else None,
            no_review=self.options.no_review,
        )
        self.save(lazy=True)

    def check_prerequisites(self, path: str, node: AnyNode) -> None:
        """Hard prerequisites block (exit 4), as a required previous artifact a completed node
        made and that is gone since does; a missing soft one is a warning to confirm."""
        from phasegate.engine.builtin_gates import confirm_warning

        needs = node.prerequisites.hard or node.prerequisites.soft
        if not needs and not getattr(node, "previous_required", False):
            return
        result = validate_transition(
            self.workflow,
            None,
            node.id,
            self.artifacts(),
            completed=self.completed_nodes(),
            skipped=self.workflow.modes[self.state.mode].skip,
            item=self.item.name,
        )
        if result.type == "blocked":
            self.item.record(
                "transition.blocked", to=node.id, message=result.message, sync_now=True
            )
            raise BlockedError(result.message or f"cannot start {node.id}")
        soft = [m for m in (result.message or "").split("; ") if "soft prerequisite" in m]
        if soft:
            confirm_warning(cast("Run", self), node.id, "; ".join(soft))  # only Run mixes this in

    def artifacts(self) -> dict[str, bool]:
        files = {
            o.file for _, n in self.workflow.walk() if isinstance(n, AgentNode) for o in n.outputs
        }
        # A prerequisite is met by an artifact with content: an empty (or blank) file is
        # as missing as no file (seed 000: a hard block without spec.md).
        return {f: has_content(self.item.item_dir / f) for f in files}

    def completed_nodes(self) -> set[str]:
        return {
            n.id
            for n in self.workflow.nodes
            if (peeked := self.state.peek(n.id)) is not None
            and peeked.get("completed")
            and peeked.get("outcome") is not None
        }

    def unwanted(self, path: str, node: AnyNode, task: Task | None) -> bool:
        """Whether ``node``'s ``when`` predicate says to skip it (asked before it starts only)."""
        if node.when is None:
            return False
        found = self.state.peek(path)
        if found is not None and (found.get("started") or found.get("outcome") is not None):
            return False
        return not plugin("predicates", node.when)(self.context(path, node, task, {}))

    def skip(self, path: str, node: AnyNode) -> Outcome:
        self.item.record("node.skipped", node=path, mode=self.state.mode, when=node.when)
        ns = self.state.node(path)
        ns["skipped"] = True
        return Outcome("done" if isinstance(node, ForeachNode) else "pass")

    def blocked(self, path: str, outcome: Outcome) -> None:
        """An outcome mapped to ``@blocked``: stop the run (exit 4), resumable after a fix."""
        ns = self.state.node(path)
        # The first line of each issue (a failing check's "... exit code 3:" without its
        # colon: its output is shown with the block, not in this line).
        details = "; ".join(
            first.rstrip(":")
            for i in outcome.issues
            if (first := next(iter(str(i.get("description") or "").splitlines()), ""))
        )
        if outcome.name == "exhausted" and not details:
            details = self.visit_limit_reached(path)
        # A node of a loop's item is named by its path (``tasks[T1]/code``): which item and
        # which of its nodes, not only the loop's label.
        where = path if "[" in path else self.label(path)
        message = f"{self.item.name}: {where} ended {outcome.name}" + (
            f": {details}" if details else ""
        )
        ns["blocked"] = message
        # What failed beyond each first line (a failing check's output) is shown with it.
        output = [
            "\n".join(str(i.get("description", "")).splitlines()[1:]).strip()
            for i in outcome.issues
        ]
        self.item.record(
            "node.blocked",
            node=path,
            outcome=outcome.name,
            message=message,
            output=[o for o in output if o],
            sync_now=True,
        )
        self.save(durable=True)
        again = again_command(self.workflow, self.item.name, self.label(path))
        raise BlockedError(message.rstrip(".") + f". Fix it, then run again: {again}")

    def visit_limit_reached(self, path: str) -> str:
        """Why a node ended ``exhausted``: its limit, and where that limit comes from."""
        limit = self.workflow.visit_limit(definition_path(path))
        if self.workflow.node(definition_path(path)).max_visits is not None:
            source = f"max_visits {limit}"
        else:
            source = (
                f"{limit} visits, the default for a node on a cycle; set max_visits to change it"
            )
        return (
            f"it reached its visit limit ({source}); the next run retries it with a new allowance"
        )
