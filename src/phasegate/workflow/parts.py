"""The parts a workflow definition is made of besides its nodes: roles, modes,
labels, budgets, reviewers, gate choices, commands, and the name and path rules.

The nodes and the workflow itself are in :mod:`phasegate.workflow.model`.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from phasegate.pydantic_plugins import skip_search

skip_search()  # before the first model: pydantic searches for no plug-in it cannot find

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")

#: Targets every node may use besides node ids: end the run, blocked (exit 4).
BLOCKED_TARGET = "@blocked"
#: Reviewer actions besides an outcome name.
PASS, REVISE = "pass", "revise"
#: An agent node's outcome when its budget runs out and the policy is to complete.
COMPLETE = "complete"


def check_name(value: str) -> str:
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


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _no_boolean(kind: str, expected: str, *, whole: bool = False) -> BeforeValidator:
    """Refuse ``true``/``false`` where a number is wanted (pydantic would take them as 1
    and 0: ``max_iterations: true`` would silently mean one round); and where a ``whole``
    number is, ``.inf`` and ``.nan`` as not whole."""

    def refuse(value: object) -> object:
        if isinstance(value, bool) or (
            whole and isinstance(value, float) and not math.isfinite(value)
        ):
            raise PydanticCustomError(kind, expected)
        return value

    return BeforeValidator(refuse)


#: A whole number of a workflow file: YAML's ``true`` and ``false`` are not one.
WholeNumber = Annotated[int, _no_boolean("int_type", "Input should be a valid integer", whole=True)]
#: A number of a workflow file: YAML's ``true`` and ``false`` are not one, nor ``.inf``
#: and ``.nan``.
Number = Annotated[
    float, AllowInfNan(False), _no_boolean("float_type", "Input should be a valid number")
]


PluginSettings = dict[str, Any]


class PluginRef(Strict):
    """A plug-in by name, with settings (``{plugin: name, with: {...}}``, or just ``name``)."""

    plugin: str
    with_: PluginSettings = Field(default_factory=dict, alias="with")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def plugin_ref(value: object) -> object:
    return {"plugin": value} if isinstance(value, str) else value


class Mode(Strict):
    """A mode: the review budget of agent nodes, the nodes it skips, where it starts."""

    max_iterations: WholeNumber = Field(ge=1, le=50)
    description: str = ""
    skip: tuple[str, ...] = ()
    start: str | None = None


class Role(Strict):
    """An agent role. Reviewers are read-only; executors may write in the work tree.

    ``mcp`` lists the tools of phasegate's MCP server the role is given (and
    the only ones it may call).
    """

    description: str = ""
    access: Literal["read-only", "write"] = "read-only"
    mcp: tuple[str, ...] = ()


class Label(Strict):
    """What a label (the phase a view writes) means to a person: description, next command.

    ``entry`` is the node an item continues from when a person sets this label by
    hand (STATE.yaml's ``phase``), entered at its reviewers with ``start_with: review``.
    """

    description: str = ""
    next: str = ""
    entry: str | None = None
    start_with: Literal["execute", "review"] | None = None


class InlineCheck(Strict):
    """A check command written in the workflow itself."""

    name: str
    run: str
    cwd: str | None = None

    _name = field_validator("name")(check_name)
    _cwd = field_validator("cwd")(lambda v: confined_path(v) if v is not None else v)

    @field_validator("run")
    @classmethod
    def _run_given(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("an empty command; give the shell command the check runs")
        return value


def _check_kind(value: Any) -> str:
    return "command-name" if isinstance(value, str) or not isinstance(value, dict) else "inline"


#: A check: a command's name from the configuration's ``commands:``, or an inline check.
#: Told apart by the value's type, so a problem is reported for the one it is (an inline
#: check's field, never also "should be a string").
CheckRef = Annotated[
    Annotated[str, Tag("command-name")] | Annotated[InlineCheck, Tag("inline")],
    Discriminator(_check_kind),
]
#: The tags of the unions (a check's, a node's kind): in a problem's location, not named.
UNION_TAGS = frozenset({"command-name", "inline"})


class InputFile(Strict):
    """Files shown to an agent: a path or glob in the item folder, and the part's title."""

    file: str
    title: str | None = None

    _file = field_validator("file")(confined_path)


class OutputFile(Strict):
    """A file the executor must leave (non-empty); with ``parser``, holding ``min_items``."""

    file: str
    parser: str | None = None
    min_items: WholeNumber = Field(default=1, ge=0)
    #: A missing or empty output: ``revise`` (a blocker decided in code, fed back to the
    #: executor as a review iteration) or ``retry`` (the call failed; it is made again).
    missing: Literal["revise", "retry"] = "revise"

    _file = field_validator("file")(confined_path)


def as_file(value: object) -> object:
    return {"file": value} if isinstance(value, str) else value


class Prerequisites(Strict):
    """Files a node needs: ``hard`` ones block it, ``soft`` ones warn (a gate)."""

    hard: tuple[str, ...] = ()
    soft: tuple[str, ...] = ()


#: What a budget's ``max`` may be, as its problems say.
_MAX_ALLOWED = (
    "a whole number from 1, 'mode' (the mode's max_iterations), or the name of a number the "
    "workflow's view reads back"
)
_NUMBER_TEXT = re.compile(r"^\s*[-+]?(\d[\d_]*)?(\.\d*)?([eE][-+]?\d+)?\s*$")


def _yaml_text(value: object) -> str:
    """``value`` as the workflow file spells it (``true``, ``2.5``, ``'tree'``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return repr(value)


def _whole(value: object, field: str, allowed: str) -> object:
    """``value`` when it is (or spells exactly) a whole number; else ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{_yaml_text(value)} is not a whole number: {field} is {allowed}")
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")) or value != int(value):
            raise ValueError(f"{value} is not a whole number: {field} is {allowed}")
        return int(value)
    return value


def not_a_quoted_number(value: object, field: str, unit: str) -> object:
    """``value``, unless it is a number in quotes: a string is the name of a number in the
    item's data, and no data holds one named ``"30"`` (the number would never apply)."""
    if isinstance(value, str) and _NUMBER_TEXT.match(value) and any(c.isdigit() for c in value):
        raise ValueError(
            f"{value!r} is a quoted number: write it without quotes ({field} is a number of "
            f"{unit}, or the name of a number in the item's data)"
        )
    if isinstance(value, str) and (_LEADING_NUMBER.match(value) or not value.strip()):
        # "30 minutes", "5m", "1h": a duration written as words, never a data name.
        raise ValueError(
            f"{value!r} is neither a number of {unit} nor the name of a number in the "
            f"item's data: write the number of {unit} alone, without a unit"
        )
    return value


#: A text that starts as a number does (``30 minutes``, ``5m``): no name of the item's data.
_LEADING_NUMBER = re.compile(r"^\s*[-+]?\.?\d")


class Budget(Strict):
    """How many revise rounds an agent node gets, and what happens when they run out.

    ``max`` is a number, ``mode`` (the mode's ``max_iterations``) or the name of
    a number a state view reads back (e.g. STATE.yaml's ``planning_iterations``);
    ``revisions`` says the same as ``max`` minus one (never both).
    ``on_exhausted`` is ``complete`` (the node passes with the open issues kept
    as notes) or an outcome name the node's ``on`` maps.
    """

    max: int | str = "mode"
    #: Instead of ``max``: how many revisions (fix rounds) after the first review.
    revisions: int | None = Field(default=None, ge=0)
    per: Literal["node", "reviewer"] = "node"
    on_exhausted: str = COMPLETE

    @field_validator("max", mode="before")
    @classmethod
    def _max_form(cls, value: object) -> object:
        """One clear problem for a ``max`` that is neither a whole number nor a name (a
        boolean, a fraction, a quoted number, a list...), instead of pydantic's two."""
        found = _whole(value, "max", _MAX_ALLOWED)
        if isinstance(found, str) and found != "mode":
            if _NUMBER_TEXT.match(found) and any(c.isdigit() for c in found):
                raise ValueError(
                    f"{found!r} is a quoted number: write it without quotes; max is {_MAX_ALLOWED}"
                )
            if not NAME_PATTERN.match(found):
                raise ValueError(f"{found!r} is not a name: max is {_MAX_ALLOWED}")
        return found

    @field_validator("max")
    @classmethod
    def _at_least_one(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 1:
            raise ValueError(
                f"{value} review iterations: a budget needs at least 1 (a number from 1, "
                "'mode', or the name of a number)"
            )
        return value

    @field_validator("revisions", mode="before")
    @classmethod
    def _revisions_form(cls, value: object) -> object:
        if value is None:
            return value
        return _whole(value, "revisions", "a whole number from 0 (max is revisions + 1)")

    @model_validator(mode="after")
    def _max_or_revisions(self) -> Budget:
        if self.revisions is not None and "max" in self.model_fields_set:
            raise ValueError(
                f"give 'max' or 'revisions', not both: revisions: {self.revisions} means "
                f"max: {self.revisions + 1} (max: {self.max} was given too)"
            )
        return self


#: The numbers each built-in state view puts in an item's data, which a budget's ``max``
#: may name: STATE.yaml's iteration counts (a person may change them there), implement's
#: ``max_cycles`` (from its settings). A view plug-in may declare its own as a class
#: attribute ``numbers``; a view that declares none is not checked.
VIEW_NUMBERS: dict[str, tuple[str, ...]] = {
    "generic": (),
    "feature": (),
    "team": (),
    "change": ("planning_iterations", "implementation_iterations"),
    "implement": ("max_cycles",),
}


def view_numbers(view: str) -> tuple[str, ...] | None:
    """The names of the numbers ``view`` reads back (``None``: it does not say)."""
    known = VIEW_NUMBERS.get(view)
    if known is not None:
        return known
    from phasegate import plugins

    try:
        cls = plugins.load("views", view)
    except plugins.PluginError:
        return None  # an unknown view is a problem of its own
    declared = getattr(cls, "numbers", None)
    if isinstance(declared, list | tuple) and all(isinstance(n, str) for n in declared):
        return tuple(declared)
    return None


def budget_max_problem(budget: Budget, view: str) -> str | None:
    """What is wrong with a ``max`` naming a number ``view`` never reads back (a typo such
    as ``tree`` would silently mean the mode's ``max_iterations`` at run time)."""
    name = budget.max
    if not isinstance(name, str) or name == "mode" or budget.revisions is not None:
        return None
    names = view_numbers(view)
    if names is None or name in names:
        return None
    if names:
        where = f"a number view {view!r} reads back ({', '.join(names)})"
    else:
        where = f"the name of a number the view reads back (view {view!r} reads back no number)"
    return (
        f"{name!r} is not a number of review iterations: max is a whole number from 1, "
        f"'mode' (the mode's max_iterations), or {where}"
    )


class Reviewer(Strict):
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
    timeout: Number | str | None = None
    on_timeout: str | None = None

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout_not_quoted(cls, value: object) -> object:
        return not_a_quoted_number(value, "timeout", "seconds")

    @field_validator("timeout")
    @classmethod
    def _positive_timeout(cls, value: float | str | None) -> float | str | None:
        if isinstance(value, int | float) and value <= 0:
            raise ValueError("a timeout must be greater than 0")
        return value

    _selector = field_validator("selector", mode="before")(plugin_ref)

    @property
    def key(self) -> str:
        return self.name or self.role or (self.selector.plugin if self.selector else "reviewer")


class ItemsSource(Strict):
    """Where a foreach gets its items: a parser plug-in over a file of the item folder."""

    parser: str
    file: str | None = None
    with_: PluginSettings = Field(default_factory=dict, alias="with")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    _file = field_validator("file")(lambda v: confined_path(v) if v else v)


class Choice(Strict):
    """One canonical answer of a gate and where it leads.

    ``extend`` grants the node ``to`` more budget (a number, or ``mode``) and
    continues its loop; ``note`` says whether an answer must carry a note.
    """

    to: str
    description: str = ""
    note: Literal["none", "optional", "required"] = "optional"
    extend: WholeNumber | Literal["mode"] | None = None
    #: Enter ``to`` at its reviewers (the work is there; review it again).
    start_with: Literal["execute", "review"] | None = None
    #: A predicate plug-in: the choice is offered only when it holds.
    when: str | None = None
    #: What refusing an unavailable choice says (templated).
    unavailable: str = ""

    @field_validator("extend")
    @classmethod
    def _extend_not_negative(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 0:
            raise ValueError(f"extend {value}: a choice grants 0 or more rounds (or 'mode')")
        return value


class GateTimeout(Strict):
    """An unanswered gate takes ``choice`` after ``minutes``.

    ``minutes`` may name a number in the item's data (a value a state view reads
    from the configuration); when that value is 0 the gate never times out, nor when it
    is missing or no number, which a run reaching the gate warns of.
    """

    minutes: Number | str
    choice: str

    @field_validator("minutes", mode="before")
    @classmethod
    def _minutes_not_quoted(cls, value: object) -> object:
        return not_a_quoted_number(value, "minutes", "minutes")

    @field_validator("minutes")
    @classmethod
    def _positive_minutes(cls, value: float | str) -> float | str:
        if isinstance(value, int | float) and value <= 0:
            raise ValueError("minutes must be greater than 0")
        return value


class Unanswered(Strict):
    """What a run does when a gate has no answer and no terminal can ask."""

    exit: Literal["waiting", "blocked"] = "waiting"
    message: str = ""


class Conflicts(Strict):
    """What a parallel foreach does when two items' changes conflict as they are merged.

    A conflict is never resolved silently: ``role`` (by default the body's first
    executor) is asked to resolve it in a fresh worktree, at most ``attempts``
    times; then ``then`` applies: ``gate`` asks a person (retry, resolved by
    hand, stop), ``outcome`` ends the foreach with ``merge-conflict``.
    """

    role: str | None = None
    attempts: WholeNumber = Field(default=2, ge=0, le=10)
    then: Literal["gate", "outcome"] = "gate"


class Refusal(Strict):
    """What a command says (and its exit) when run on an item at a label it does not act on."""

    exit: Literal["ok", "blocked", "waiting"] = "blocked"
    message: str


class Command(Strict):
    """A named entry point into the graph (seed 002's ``plan``, ``impl``, ``archive``).

    ``start`` is where a new item begins; ``runs_in`` the labels it continues
    from; the run stops when it reaches a node labelled in ``stops_at``.
    """

    description: str = ""
    start: str | None = None
    runs_in: tuple[str, ...] = ()
    stops_at: tuple[str, ...] = ()
    otherwise: dict[str, Refusal] = Field(default_factory=dict)
