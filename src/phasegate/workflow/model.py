"""Workflow definitions as data: a graph of nodes whose outcomes say where to go next.

Field-level rules live on these models; rules about the whole graph (every
outcome mapped, every node reachable, a terminal reachable from each node,
every plug-in installed) live in :mod:`phasegate.workflow.graph`. See
``docs/workflows.md`` for every field.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, PrivateAttr, Tag, field_validator

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")

#: Targets every node may use besides node ids: end the run, blocked (exit 4).
BLOCKED_TARGET = "@blocked"
#: Reviewer actions besides an outcome name.
PASS, REVISE = "pass", "revise"
#: An agent node's outcome when its budget runs out and the policy is to complete.
COMPLETE = "complete"


def _check_name(value: str) -> str:
    if not NAME_PATTERN.match(value):
        raise ValueError(
            f"{value!r} is not a valid name (lowercase letters, digits, '-' or '_', "
            "starting with a letter)"
        )
    return value


def confined_path(value: str) -> str:
    """``value`` if it is a relative path that stays inside its folder, else ValueError."""
    if (
        not value
        or value.startswith(("/", "\\", "~"))
        or re.match(r"^[A-Za-z]:", value)
        or ".." in re.split(r"[\\/]", value)
        or "\0" in value
    ):
        raise ValueError(f"{value!r} must be a relative path inside the repository (no '..')")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


PluginSettings = dict[str, Any]


class PluginRef(_Strict):
    """A plug-in by name, with settings (``{plugin: name, with: {...}}``, or just ``name``)."""

    plugin: str
    with_: PluginSettings = Field(default_factory=dict, alias="with")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _plugin_ref(value: object) -> object:
    return {"plugin": value} if isinstance(value, str) else value


class Mode(_Strict):
    """A mode: the review budget of agent nodes, the nodes it skips, where it starts."""

    max_iterations: int = Field(ge=1, le=50)
    description: str = ""
    skip: tuple[str, ...] = ()
    start: str | None = None


class Role(_Strict):
    """An agent role. Reviewers are read-only; executors may write in the work tree.

    ``mcp`` lists the tools of phasegate's MCP server the role is given (and
    the only ones it may call).
    """

    description: str = ""
    access: Literal["read-only", "write"] = "read-only"
    mcp: tuple[str, ...] = ()


class Label(_Strict):
    """What a label (the phase a view writes) means to a person: description, next command.

    ``entry`` is the node an item continues from when a person sets this label by
    hand (STATE.yaml's ``phase``), entered at its reviewers with ``start_with: review``.
    """

    description: str = ""
    next: str = ""
    entry: str | None = None
    start_with: Literal["execute", "review"] | None = None


class InlineCheck(_Strict):
    """A check command written in the workflow itself."""

    name: str
    run: str
    cwd: str | None = None

    _name = field_validator("name")(_check_name)
    _cwd = field_validator("cwd")(lambda v: confined_path(v) if v is not None else v)


CheckRef = str | InlineCheck


class InputFile(_Strict):
    """Files shown to an agent: a path or glob in the item folder, and the part's title."""

    file: str
    title: str | None = None

    _file = field_validator("file")(confined_path)


class OutputFile(_Strict):
    """A file the executor must leave (non-empty); with ``parser``, holding ``min_items``."""

    file: str
    parser: str | None = None
    min_items: int = Field(default=1, ge=0)
    #: A missing or empty output: ``revise`` (a blocker decided in code, fed back to the
    #: executor as a review iteration) or ``retry`` (the call failed; it is made again).
    missing: Literal["revise", "retry"] = "revise"

    _file = field_validator("file")(confined_path)


def _as_file(value: object) -> object:
    return {"file": value} if isinstance(value, str) else value


class Prerequisites(_Strict):
    """Files a node needs: ``hard`` ones block it, ``soft`` ones warn (a gate)."""

    hard: tuple[str, ...] = ()
    soft: tuple[str, ...] = ()


class Budget(_Strict):
    """How many revise rounds an agent node gets, and what happens when they run out.

    ``max`` is a number, ``mode`` (the mode's ``max_iterations``) or the name of
    a number a state view reads back (e.g. STATE.yaml's ``planning_iterations``).
    ``on_exhausted`` is ``complete`` (the node passes with the open issues kept
    as notes) or an outcome name the node's ``on`` maps.
    """

    max: int | str = "mode"
    #: Instead of ``max``: how many revisions (fix rounds) after the first review.
    revisions: int | None = Field(default=None, ge=0)
    per: Literal["node", "reviewer"] = "node"
    on_exhausted: str = COMPLETE


class Reviewer(_Strict):
    """One reviewer of an agent node.

    ``role`` names the agent role, or ``selector`` a plug-in that picks one at
    run time; with both, the selector picks the agent that plays ``role`` (and
    gets its backend when it has no binding of its own). ``reader`` turns the
    answer into a verdict word; ``on`` maps each word to ``pass`` (on to the
    next reviewer), ``revise`` (back to the executor with the issues) or an
    outcome name that ends the node. ``UNCLEAR`` must be mapped and may never
    map to ``pass``. ``timeout`` is seconds, or the name of a number of seconds
    in the item's data; with ``on_timeout`` a review that runs out of time is
    not retried: it ends with that action (``pass``, ``revise`` or an outcome).
    """

    name: str | None = None
    role: str | None = None
    selector: PluginRef | None = None
    prompt: str | None = None
    reader: str = "approval"
    when: str | None = None
    expectations: str | None = None
    on: dict[str, str] = Field(default_factory=dict)
    #: Seconds the review may take before ``on_timeout`` applies (default: config timeouts),
    #: or the name of such a number in the item's data (a value a state view reads).
    timeout: float | str | None = None
    on_timeout: str | None = None

    @field_validator("timeout")
    @classmethod
    def _positive_timeout(cls, value: float | str | None) -> float | str | None:
        if isinstance(value, int | float) and value <= 0:
            raise ValueError("a timeout must be greater than 0")
        return value

    _selector = field_validator("selector", mode="before")(_plugin_ref)

    @property
    def key(self) -> str:
        return self.name or self.role or (self.selector.plugin if self.selector else "reviewer")


class ItemsSource(_Strict):
    """Where a foreach gets its items: a parser plug-in over a file of the item folder."""

    parser: str
    file: str | None = None
    with_: PluginSettings = Field(default_factory=dict, alias="with")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    _file = field_validator("file")(lambda v: confined_path(v) if v else v)


class _Node(_Strict):
    id: str
    label: str | None = None
    description: str = ""
    on: dict[str, str] = Field(default_factory=dict)
    prerequisites: Prerequisites = Prerequisites()
    #: At most this many visits; one more ends the node with outcome ``exhausted``.
    max_visits: int | None = Field(default=None, ge=1)
    #: Nodes a person may run next instead (``run --phase``) without a skip warning.
    also: tuple[str, ...] = ()
    #: A predicate plug-in, asked when the node is about to start: when it does not hold,
    #: the node is skipped (journaled ``node.skipped``) and ends ``pass`` (``done`` for a
    #: foreach). A node already started is never skipped on resume.
    when: str | None = None

    _id = field_validator("id")(_check_name)


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
        lambda v: [_as_file(x) for x in v] if isinstance(v, list | tuple) else v
    )
    _outputs = field_validator("outputs", mode="before")(
        lambda v: [_as_file(x) for x in v] if isinstance(v, list | tuple) else v
    )
    _refs = field_validator("context", "on_enter", "after_execute", "after_verdict", mode="before")(
        lambda v: [_plugin_ref(x) for x in v] if isinstance(v, list | tuple) else v
    )
    _executor_selector = field_validator("executor_selector", mode="before")(_plugin_ref)
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


class Choice(_Strict):
    """One canonical answer of a gate and where it leads.

    ``extend`` grants the node ``to`` more budget (a number, or ``mode``) and
    continues its loop; ``note`` says whether an answer must carry a note.
    """

    to: str
    description: str = ""
    note: Literal["none", "optional", "required"] = "optional"
    extend: int | Literal["mode"] | None = None
    #: Enter ``to`` at its reviewers (the work is there; review it again).
    start_with: Literal["execute", "review"] | None = None
    #: A predicate plug-in: the choice is offered only when it holds.
    when: str | None = None
    #: What refusing an unavailable choice says (templated).
    unavailable: str = ""


class GateTimeout(_Strict):
    """An unanswered gate takes ``choice`` after ``minutes``.

    ``minutes`` may name a number in the item's data (a value a state view reads
    from the configuration); when that value is missing or 0 the gate never times out.
    """

    minutes: float | str
    choice: str

    @field_validator("minutes")
    @classmethod
    def _positive_minutes(cls, value: float | str) -> float | str:
        if isinstance(value, int | float) and value <= 0:
            raise ValueError("minutes must be greater than 0")
        return value


class Unanswered(_Strict):
    """What a run does when a gate has no answer and no terminal can ask."""

    exit: Literal["waiting", "blocked"] = "waiting"
    message: str = ""


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
    attempts: int = Field(default=3, ge=1)
    #: The answer must be typed: at a terminal an empty answer takes no default or
    #: recommendation; it counts as no answer and is asked again (a mandatory gate).
    explicit: bool = False

    _choices = field_validator("choices", mode="before")(
        lambda v: (
            {k: {"to": x} if isinstance(x, str) else x for k, x in v.items()}
            if isinstance(v, dict)
            else v
        )
    )
    _show = field_validator("show")(lambda v: tuple(confined_path(x) for x in v))


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


class Conflicts(_Strict):
    """What a parallel foreach does when two items' changes conflict as they are merged.

    A conflict is never resolved silently: ``role`` (by default the body's first
    executor) is asked to resolve it in a fresh worktree, at most ``attempts``
    times; then ``then`` applies: ``gate`` asks a person (retry, resolved by
    hand, stop), ``outcome`` ends the foreach with ``merge-conflict``.
    """

    role: str | None = None
    attempts: int = Field(default=2, ge=0, le=10)
    then: Literal["gate", "outcome"] = "gate"


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
    parallel: int = Field(default=1, ge=1, le=64)
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


class Refusal(_Strict):
    """What a command says (and its exit) when run on an item at a label it does not act on."""

    exit: Literal["ok", "blocked", "waiting"] = "blocked"
    message: str


class Command(_Strict):
    """A named entry point into the graph (seed 002's ``plan``, ``impl``, ``archive``).

    ``start`` is where a new item begins; ``runs_in`` the labels it continues
    from; the run stops when it reaches a node labelled in ``stops_at``.
    """

    description: str = ""
    start: str | None = None
    runs_in: tuple[str, ...] = ()
    stops_at: tuple[str, ...] = ()
    otherwise: dict[str, Refusal] = Field(default_factory=dict)


class Workflow(_Strict):
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
    start: str | None = None
    nodes: tuple[Node, ...] = Field(min_length=1)
    _by_path: dict[str, AnyNode] = PrivateAttr(default_factory=dict)
    _label_by_path: dict[str, str] = PrivateAttr(default_factory=dict)

    _name = field_validator("name")(_check_name)
    _view = field_validator("view", mode="before")(_plugin_ref)
    _paths = field_validator("items_dir", "journal_file")(confined_path)

    @field_validator("modes", "roles", "commands")
    @classmethod
    def _names_valid(cls, value: dict[str, object]) -> dict[str, object]:
        for key in value:
            _check_name(key)
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
