"""Workflow definitions as data: a graph of nodes whose outcomes say where to go next.

Field-level rules live on these models (the parts nodes are made of in
:mod:`phasegate.workflow.parts`); rules about the whole graph (every outcome
mapped, every node reachable, a terminal reachable from each node, every
plug-in installed) live in :mod:`phasegate.workflow.graph`. See
``docs/workflows.md`` for every field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, PrivateAttr, Tag, field_validator

from phasegate.workflow.parts import (
    PASS,
    REVISE,
    Budget,
    CheckRef,
    Choice,
    Command,
    Conflicts,
    GateTimeout,
    InputFile,
    ItemsSource,
    Label,
    Mode,
    OutputFile,
    PluginRef,
    PluginSettings,
    Prerequisites,
    Reviewer,
    Role,
    Strict,
    Unanswered,
    WholeNumber,
    as_file,
    check_name,
    confined_path,
    plugin_ref,
)


class _Node(Strict):
    id: str
    label: str | None = None
    description: str = ""
    on: dict[str, str] = Field(default_factory=dict)
    prerequisites: Prerequisites = Prerequisites()
    #: At most this many visits; one more ends the node with outcome ``exhausted``. A node
    #: on a cycle that sets none has 10 (``routing.DEFAULT_CYCLE_VISITS``); a retry of a
    #: blocked node starts a new allowance (see :meth:`Workflow.visit_limit`).
    max_visits: WholeNumber | None = Field(default=None, ge=1)
    #: Nodes a person may run next instead (``run --phase``) without a skip warning.
    also: tuple[str, ...] = ()
    #: A predicate plug-in, asked when the node is about to start: when it does not hold,
    #: the node is skipped (journaled ``node.skipped``) and ends ``pass`` (``done`` for a
    #: foreach). A node already started is never skipped on resume.
    when: str | None = None

    _id = field_validator("id")(check_name)


class AgentNode(_Node):
    """An executor call, its checks, then zero or more reviewers, in a budgeted revise loop."""

    kind: Literal["agent"] = "agent"
    executor: str | None = None
    #: A selector plug-in that picks, at run time, the agent who plays ``executor``.
    executor_selector: PluginRef | None = None
    prompt: str | None = None
    revise_prompt: str | None = None
    #: ``review``: the first round starts with the reviewers (the work is already there).
    start_with: Literal["execute", "review"] = "execute"
    inputs: tuple[InputFile, ...] = ()
    previous: str | None = None
    previous_required: bool = False
    outputs: tuple[OutputFile, ...] = ()
    #: The executor may change its outputs and nothing else: whatever else its call
    #: changes (code, another node's artifact) is put back (journaled; the call stands).
    writes_only_outputs: bool = False
    reviews_code: bool = False
    checks: tuple[CheckRef, ...] = ()
    #: More check commands, listed by a parser plug-in (e.g. acceptance checks of a file).
    checks_from: ItemsSource | None = None
    #: The executor's call is made at most once: its intent is committed before the
    #: call, and a run resuming after dying inside the call (no result journaled) does not
    #: call again; the node ends with outcome ``interrupted`` instead (default: blocked).
    at_most_once: bool = False
    expectations: str = ""
    reviewer: str | None = None
    reviewer_prompt: str | None = None
    reviewers: tuple[Reviewer, ...] = ()
    budget: Budget = Budget()
    context: tuple[PluginRef, ...] = ()
    #: Actions run when a visit starts, after each executor call, after each verdict.
    on_enter: tuple[PluginRef, ...] = ()
    after_execute: tuple[PluginRef, ...] = ()
    after_verdict: tuple[PluginRef, ...] = ()

    _inputs = field_validator("inputs", mode="before")(
        lambda v: [as_file(x) for x in v] if isinstance(v, list | tuple) else v
    )
    _outputs = field_validator("outputs", mode="before")(
        lambda v: [as_file(x) for x in v] if isinstance(v, list | tuple) else v
    )
    _refs = field_validator("context", "on_enter", "after_execute", "after_verdict", mode="before")(
        lambda v: [plugin_ref(x) for x in v] if isinstance(v, list | tuple) else v
    )
    _executor_selector = field_validator("executor_selector", mode="before")(plugin_ref)
    _previous = field_validator("previous")(lambda v: confined_path(v) if v else v)

    def all_reviewers(self) -> tuple[Reviewer, ...]:
        """``reviewers``, or the one ``reviewer`` shorthand (seed 000's approval review)."""
        if self.reviewer is None:
            return self.reviewers
        shorthand = Reviewer(
            role=self.reviewer,
            prompt=self.reviewer_prompt,
            reader="approval",
            on={"APPROVED": PASS, "REJECTED": REVISE, "UNCLEAR": REVISE},
        )
        return (shorthand, *self.reviewers)


class GateNode(_Node):
    """A human decision, persisted as pending before it is asked and answered before acting."""

    kind: Literal["gate"]
    decision: str | None = None
    question: str
    #: A predicate plug-in whose text fills ``{{ detail }}`` in the question.
    detail: str | None = None
    #: Files of the item folder shown with the question (globs list every match).
    show: tuple[str, ...] = ()
    choices: dict[str, Choice]
    default: str | None = None
    timeout: GateTimeout | None = None
    #: A predicate plug-in turning a person's words into a canonical choice (``"looks
    #: good"`` -> ``approved``; it reads ``settings["answer"]``), applied to every answer:
    #: at a terminal, by ``phasegate answer`` and by ``--answer``.
    classify: str | None = None
    #: A predicate plug-in naming the recommended choice (shown, and used in the answer
    #: command ``status`` and ``decisions`` print).
    recommend: str | None = None
    #: ``terminal``: asked at a terminal; ``command``: only answered by a command or flag.
    ask: Literal["terminal", "command"] = "terminal"
    unanswered: Unanswered = Unanswered()
    #: Invalid answers at a terminal before the gate ends with outcome ``invalid``.
    attempts: WholeNumber = Field(default=3, ge=1)
    #: The answer must be typed: at a terminal an empty answer takes no default or
    #: recommendation; it counts as no answer and is asked again (a mandatory gate).
    explicit: bool = False
    #: The choices that let a run past this gate: no node after it (in the workflow's order)
    #: is started with ``--phase`` until its decision holds one of them (a mandatory gate).
    required: tuple[str, ...] = ()

    _choices = field_validator("choices", mode="before")(
        lambda v: (
            {k: {"to": x} if isinstance(x, str) else x for k, x in v.items()}
            if isinstance(v, dict)
            else v
        )
    )
    _show = field_validator("show")(lambda v: tuple(confined_path(x) for x in v))

    @field_validator("question")
    @classmethod
    def _asks_something(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a gate's question cannot be empty: it is what a person is asked")
        return value

    @field_validator("choices")
    @classmethod
    def _answerable(cls, value: dict[str, Choice]) -> dict[str, Choice]:
        """A choice is answered by its name, and ``CHOICE: note`` adds a note: a name that
        is empty, holds a ``:`` or is padded with spaces could never be answered."""
        for name in value:
            if not name.strip() or ":" in name or name != name.strip():
                raise ValueError(
                    f"choice {name!r} could never be answered: a choice is answered by its "
                    "name ('CHOICE: note' adds a note), so it is not empty, holds no ':' and "
                    "has no spaces around it"
                )
        return value

    def decision_template(self, in_body: bool) -> str:
        """The decision id before it is filled: ``decision``, else the node id, followed
        inside a foreach body by ``-{{ task }}`` so each item is asked on its own."""
        if self.decision is not None:
            return self.decision
        return f"{self.id}-{{{{ task }}}}" if in_body else self.id


class CheckNode(_Node):
    """Shell commands as a gate: outcome ``pass`` or ``fail``."""

    kind: Literal["check"]
    run: tuple[CheckRef, ...] = ()
    #: A plug-in (item parser) that lists more commands (e.g. acceptance checks).
    commands_from: ItemsSource | None = None


class ActionNode(_Node):
    """A plug-in step (a spec merge, a report, a checkbox update) with declared outcomes."""

    kind: Literal["action"]
    action: str
    with_: PluginSettings = Field(default_factory=dict, alias="with")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class EndNode(_Node):
    """A terminal: the work item (or, inside a foreach, the current item) ends here."""

    kind: Literal["end"]
    status: Literal["completed", "blocked", "stopped"] = "completed"
    outcome: str = "done"
    message: str = ""


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("kind", "agent"))
    return str(getattr(value, "kind", "agent"))


class ForeachNode(_Node):
    """A body of nodes run once per item a parser finds, in document or dependency order.

    With ``parallel`` above 1, items whose dependencies are done run at the same
    time (at most ``parallel``), each in its own git worktree (``isolation:
    worktree``) or all in the one work tree (``isolation: none``, for bodies
    that never write the same files).
    """

    kind: Literal["foreach"]
    items: ItemsSource
    order: Literal["document", "deps"] = "document"
    skip_done: bool = True
    #: The items' keys are unique across the loops around this one: a gate's ``{{ task }}``
    #: in its decision id is the item's key alone, not led by the outer items' keys.
    unique_keys: bool = False
    parallel: WholeNumber = Field(default=1, ge=1, le=64)
    isolation: Literal["worktree", "none"] = "worktree"
    conflicts: Conflicts = Conflicts()
    body: tuple[Node, ...] = Field(min_length=1)


Node = Annotated[
    Annotated[AgentNode, Tag("agent")]
    | Annotated[GateNode, Tag("gate")]
    | Annotated[ForeachNode, Tag("foreach")]
    | Annotated[CheckNode, Tag("check")]
    | Annotated[ActionNode, Tag("action")]
    | Annotated[EndNode, Tag("end")],
    Discriminator(_kind),
]
ForeachNode.model_rebuild()
AnyNode = AgentNode | GateNode | ForeachNode | CheckNode | ActionNode | EndNode


class Workflow(Strict):
    """A whole workflow definition."""

    name: str
    description: str = ""
    items_dir: str = "work"
    view: PluginRef = PluginRef(plugin="generic")
    journal_file: str = ".journal.jsonl"
    default_mode: str = "standard"
    modes: dict[str, Mode]
    roles: dict[str, Role]
    labels: dict[str, Label] = Field(default_factory=dict)
    commands: dict[str, Command] = Field(default_factory=dict)
    #: A node started but not completed when a run begins: ask (continue, fresh,
    #: review) or just continue.
    partial: Literal["ask", "continue"] = "continue"
    #: ``run --no-review`` is allowed; ``false``: refused (the reviewers are part of
    #: what completes an item, and skipping them could never finish it).
    allow_no_review: bool = True
    start: str | None = None
    nodes: tuple[Node, ...] = Field(min_length=1)
    _by_path: dict[str, AnyNode] = PrivateAttr(default_factory=dict)
    _label_by_path: dict[str, str] = PrivateAttr(default_factory=dict)
    _visit_limits: dict[str, int | None] = PrivateAttr(default_factory=dict)

    _name = field_validator("name")(check_name)
    _view = field_validator("view", mode="before")(plugin_ref)
    _paths = field_validator("items_dir", "journal_file")(confined_path)

    @field_validator("modes", "roles", "commands")
    @classmethod
    def _names_valid(cls, value: dict[str, object]) -> dict[str, object]:
        for key in value:
            check_name(key)
        return value

    # -- lookups --------------------------------------------------------------------

    def walk(self) -> Iterator[tuple[str, AnyNode]]:
        """Every node with its path (``foreach-id/body-id`` inside a foreach), in document order."""
        yield from _walk(self.nodes, "")

    def scope_of(self, path: str) -> tuple[AnyNode, ...]:
        """The nodes of the scope holding ``path`` (the top level, or a foreach body)."""
        parent = path.rpartition("/")[0]
        if not parent:
            return tuple(self.nodes)
        found = self.node(parent)
        assert isinstance(found, ForeachNode)
        return tuple(found.body)

    def node(self, path: str) -> AnyNode:
        """The node at ``path`` (KeyError if none)."""
        # Looked up on every step: remembered, so a lookup costs the same however many
        # nodes the workflow has (the model is frozen, its nodes never change). The
        # remembered lookups are read from the private attributes directly: reading
        # ``self._by_path`` goes through pydantic's ``__getattr__``, several times slower.
        known_nodes = _lookups(self, "_by_path")
        known = known_nodes.get(path)
        if known is not None:
            return known  # type: ignore[no-any-return]
        scope: tuple[Any, ...] = self.nodes
        found: Any = None
        for part in path.split("/"):
            found = next((n for n in scope if n.id == part), None)
            if found is None:
                raise KeyError(path)
            scope = found.body if isinstance(found, ForeachNode) else ()
        known_nodes[path] = found
        return found  # type: ignore[no-any-return]

    def label_of(self, path: str) -> str:
        """The label a view writes for ``path`` (its own, its foreach's, or its id)."""
        labels = _lookups(self, "_label_by_path")
        known = labels.get(path)
        if known is not None:
            return known  # type: ignore[no-any-return]
        parts = path.split("/")
        label = parts[0]
        for depth in range(len(parts), 0, -1):
            node = self.node("/".join(parts[:depth]))
            if node.label:
                label = node.label
                break
        if len(labels) < 4096:  # runtime paths of foreach items are many: bounded
            labels[path] = label
        return label

    def visit_limit(self, path: str) -> int | None:
        """How many visits the node at ``path`` may have (``None``: no limit).

        Its ``max_visits``; without one, a node on a cycle of its scope (one its outcomes
        and choices can lead back to) has ``DEFAULT_CYCLE_VISITS``: no loop runs without
        end. Visits are counted since the item's last retry of a blocked node.
        """
        limits = _lookups(self, "_visit_limits")
        if path in limits:
            return limits[path]  # type: ignore[no-any-return]
        from phasegate.workflow.routing import DEFAULT_CYCLE_VISITS, cyclic

        node = self.node(path)
        limit = node.max_visits
        if limit is None and node.id in cyclic(self.scope_of(path)):
            limit = DEFAULT_CYCLE_VISITS
        limits[path] = limit
        return limit

    def successors_of(self, node_id: str) -> list[str]:
        """The top-level nodes ``node_id`` leads to, by any outcome or choice."""
        from phasegate.workflow.routing import edges

        scope = list(self.nodes)
        index = next(i for i, n in enumerate(scope) if n.id == node_id)
        return list(dict.fromkeys(t for _, t in edges(scope, index)))

    def start_node(self, mode: str) -> str:
        return self.modes[mode].start or self.start or self.nodes[0].id

    def max_iterations(self, mode: str) -> int:
        return self.modes[mode].max_iterations

    @property
    def label_names(self) -> list[str]:
        """Every label in graph order (a node's label, else its id, top level only)."""
        seen: list[str] = []
        for node in self.nodes:
            if isinstance(node, EndNode) and not node.label:
                continue
            name = node.label or node.id
            if name not in seen:
                seen.append(name)
        return seen


def _lookups(workflow: Workflow, name: str) -> dict[str, Any]:
    """The workflow's remembered lookups ``name`` (a private attribute), read directly."""
    private = workflow.__pydantic_private__
    found = private.get(name) if private is not None else None
    if found is None:
        found = {}
        if private is not None:
            private[name] = found
    return found


def _walk(nodes: tuple[Any, ...], prefix: str) -> Iterator[tuple[str, AnyNode]]:
    for node in nodes:
        path = f"{prefix}{node.id}"
        yield path, node
        if isinstance(node, ForeachNode):
            yield from _walk(tuple(node.body), f"{path}/")
