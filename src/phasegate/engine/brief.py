"""An item's brief, brought up to date at every state commit from what changed.

The brief (label, progress, concerns, pending decisions, next command: see
:func:`phasegate.engine.status.brief_of`) is stored with the state and read
by ``phasegate status`` and the SessionStart hook. Computing it from a full
status would walk every node on every commit; instead :class:`Progress`
keeps, per top-level node, what the brief sums up (started, review
iterations, open reviewer notes) and updates only the nodes the state marked
changed, so a commit costs the same with 5 nodes or 200. The result is the
same as ``brief(item_status(...))`` (a test holds them equal).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from phasegate.engine.state import EngineState
from phasegate.engine.status import UNREVIEWED, brief_of, item_head
from phasegate.workflow.model import AgentNode, EndNode, Workflow

_KEY = "progress"


class Progress:
    """Per top-level node of ``workflow``: started, review iterations, reviewer notes."""

    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        nodes = list(workflow.nodes)
        #: Node id -> its position, its name in status, whether review iterations count.
        self._position = {node.id: index for index, node in enumerate(nodes)}
        self._name = {node.id: node.label or node.id for node in nodes}
        self._counted = {node.id for node in nodes if isinstance(node, AgentNode)}
        self._listed = {node.id for node in nodes if not isinstance(node, EndNode)}
        self._started: set[int] = set()
        self._iterations: dict[str, int] = {}
        self._notes: dict[str, list[Any]] = {}
        self.iterations = 0

    @classmethod
    def of(cls, workflow: Workflow, state: EngineState) -> Progress:
        """The progress of ``state``, updated for the nodes changed since it was last asked."""
        found = state.derived.get(_KEY)
        if not isinstance(found, Progress) or found.workflow is not workflow:
            found = cls(workflow)
            state.derived[_KEY] = found
            changed = set(state.paths())
            state.take_changed(_KEY)
        else:
            changed = state.take_changed(_KEY)
        for path in changed:
            if path in found._position:
                found._update(path, state)
        return found

    def _update(self, node_id: str, state: EngineState) -> None:
        found = state.peek(node_id)
        started = found is not None and bool(found.get("started"))
        position = self._position[node_id]
        if started:
            self._started.add(position)
        else:
            self._started.discard(position)
        count = found.iteration if started and found is not None else 0
        if found is not None and found.get("review") in UNREVIEWED:
            count = 0  # no reviewer looked at it: no review iteration
        if node_id in self._counted:
            self.iterations += count - self._iterations.get(node_id, 0)
            self._iterations[node_id] = count
        notes = list(found.get("notes") or []) if found is not None else []
        if notes and node_id in self._listed:
            self._notes[node_id] = notes
        else:
            self._notes.pop(node_id, None)

    def shown_iterations(self, head: Mapping[str, Any]) -> int:
        """The review iterations as status counts them (``head``: the item's, with
        ``inProgress``): at a node whose next call a budget cap holds, not the iteration
        that call would start."""
        progress = head.get("inProgress") or {}
        node_id = progress.get("node")
        counted = self._iterations.get(str(node_id), 0)
        if not progress.get("budget") or progress.get("kind") != "agent" or not counted:
            return self.iterations
        return self.iterations - counted + int(progress.get("iteration") or 0)

    def current_phase(self, state: EngineState) -> str | None:
        """The last phase started (seed 000's ``currentPhase``): the cursor's, if started."""
        at = state.at
        if at and not at.startswith("@"):
            found = state.peek(at)
            if found is not None and found.get("started"):
                return self.workflow.label_of(at)
        if not self._started:
            return None
        return self._name[self.workflow.nodes[max(self._started)].id]

    def concerns(self) -> list[tuple[str, Any]]:
        """``(phase, note)`` of every open reviewer note, in workflow order."""
        ordered = sorted(self._notes, key=self._position.__getitem__)
        return [(self._name[node_id], note) for node_id in ordered for note in self._notes[node_id]]


def item_brief(
    workflow: Workflow,
    state: EngineState,
    *,
    artifacts: Mapping[str, bool] | Callable[[], Mapping[str, bool]],
    view_fields: Mapping[str, Any],
) -> dict[str, Any]:
    """The brief of ``state``: equal to ``brief(item_status(...) | view_fields)``."""
    progress = Progress.of(workflow, state)
    head = item_head(workflow, state, artifacts=artifacts)
    head["currentPhase"] = progress.current_phase(state)
    head.update(view_fields)
    concerns = progress.concerns()
    if "unresolvedConcerns" in view_fields:  # the workflow's own say (team: known issues)
        concerns = [(c["phase"], c["note"]) for c in view_fields["unresolvedConcerns"]]
    return brief_of(head, iterations=progress.shown_iterations(head), concerns=concerns)
