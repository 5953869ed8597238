"""Budget caps: what a work item's agents have spent, against the caps in config.

::

    budget:
      item: {usd: 5, tokens: 2000000}     # the whole work item
      roles:
        reviewer: {usd: 1}                # what one role may spend on the item (and the
                                          # agents playing it: implement's reviewers)
    workflows:
      change:
        budget: {item: {usd: 10}}         # this workflow's items: overrides cap by cap

Every cap counts one work item's spend. **Spend** is read from the item's
journal, every attempt included: each ``agent.finished`` event (failed
attempts too) adds the cost and the tokens (input plus output) its backend
reported; an attempt dispatched that never reported (phasegate was killed
during it, or it is still running) counts as the role's mean reported call.

**The rule**, checked before every dispatch (retries included): the call is
not made when, for a cap that applies to it (the item's caps and its role's),
the spend has reached the cap, or the spend plus the estimate of the call
would pass it. The estimate is the mean of the role's reported calls on this
item (nothing before its first one reported); an agent playing a workflow role
that has not reported yet is estimated at that workflow role's mean call.

**A role's cap** names a role the way ``roles:`` does when it binds backends:
the cap of a workflow role (``implementer``, ``reviewer``, ``chain-reviewer``...)
counts that role's calls and those of every agent chosen at run time to play
it (an implement task's agent, the reviewer the selector picked); an agent's
own name caps that agent alone. A ``budget.roles`` key that names no role of
any workflow, nor an agent (``.claude/agents`` or ``roles:``), stops the run
before anything is done (:func:`check_role_keys`).

A cap a person raised at the ``budget`` gate (:mod:`phasegate.engine.budget_gate`)
is recorded in the item's engine state under ``budget.raises``, never in config.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.config import BudgetCap, BudgetSettings, Config
from phasegate.engine.spend import Metric, Spend, read_spend
from phasegate.engine.state import EngineState
from phasegate.errors import ConfigError

METRICS: tuple[Metric, ...] = ("usd", "tokens")
#: The decision a reached cap asks (``phasegate answer ITEM budget raise``).
BUDGET_DECISION = "budget"
#: Floating point slack: a cap of $1 is reached by spends that add up to 0.9999999999.
_EPS = 1e-9


@dataclass(frozen=True)
class Cap:
    """One cap that applies to an item: the item's or one role's, in USD or tokens."""

    role: str | None  # None: the whole item
    metric: Metric
    configured: float
    raised: float = 0.0

    @property
    def key(self) -> str:
        """``item.usd``, ``roles.reviewer.tokens``: where it is set in ``budget:``."""
        return f"item.{self.metric}" if self.role is None else f"roles.{self.role}.{self.metric}"

    @property
    def limit(self) -> float:
        return self.configured + self.raised

    @property
    def scope(self) -> str:
        return "the item" if self.role is None else f"role {self.role}"

    def applies_to(self, role: str, plays: str | None = None) -> bool:
        """Whether the cap counts a call of ``role`` (an agent playing ``plays``)."""
        return self.role is None or self.role == role or (plays is not None and self.role == plays)


def shown(value: float, metric: Metric) -> float | int:
    """``value`` as status shows it: whole tokens, USD to the millionth (no float dust)."""
    return round(value) if metric == "tokens" else round(value, 6)


def amount(value: float, metric: Metric) -> str:
    """``$1.25``, ``$0.0042``, ``120,000 tokens``."""
    if metric == "tokens":
        return f"{round(value):,} tokens"
    return f"${value:.2f}" if value == 0 or value >= 0.095 else f"${value:.4f}"


def _merged(base: BudgetCap, override: BudgetCap | None) -> BudgetCap:
    """``override``'s fields where it sets them (``null`` removes a cap), else ``base``'s."""
    if override is None:
        return base
    values: dict[str, Any] = {name: getattr(base, name) for name in METRICS}
    values.update({name: getattr(override, name) for name in override.model_fields_set})
    return BudgetCap.model_validate(values)


def settings_for(config: Config, workflow: str) -> BudgetSettings:
    """The caps of ``workflow``'s items: the top-level ``budget``, overridden cap by cap by
    ``workflows.NAME.budget``."""
    top = config.budget
    found = config.workflows.get(workflow)
    override = found.budget if found is not None else None
    if override is None:
        # `workflows.NAME.budget: null` removes every cap for that workflow's items.
        given = found is not None and "budget" in found.model_fields_set
        return BudgetSettings() if given else top
    roles = dict(top.roles)
    for role, cap in override.roles.items():
        roles[role] = _merged(roles.get(role, BudgetCap()), cap)
    item = _merged(top.item, override.item if "item" in override.model_fields_set else None)
    return BudgetSettings(item=item, roles=roles)


def configured(config: Config, workflow: str) -> bool:
    """Whether any cap applies to ``workflow``'s items (the fast path when none does)."""
    settings = settings_for(config, workflow)
    caps = (settings.item, *settings.roles.values())
    return any(getattr(cap, metric) is not None for cap in caps for metric in METRICS)


def budget_record(state: EngineState) -> dict[str, Any]:
    """The item's ``budget`` record in the engine state: ``raises`` (cap key -> amount
    added), ``asked`` (the cap the gate's last visit is about: ``visit``, ``cap``,
    ``unit``, ``step``), ``acted`` (the last visit whose answer was acted on), ``went_on``
    (the last visit whose held call went ahead after its answer)."""
    found = state.get("budget")
    return dict(found) if isinstance(found, Mapping) else {}


def unacted_answer(state: EngineState) -> tuple[str, str, int] | None:
    """The budget gate's answer not acted on yet: ``(choice, note, visit)``.

    An answer is acted on once: ``budget.acted`` records the last visit whose
    answer was (a raise added, or the run stopped).
    """
    decision = state.decisions.get(BUDGET_DECISION)
    record = budget_record(state)
    asked = record.get("asked")
    if not isinstance(decision, Mapping) or not isinstance(asked, Mapping):
        return None
    answer = decision.get("answer")
    if decision.get("status") != "answered" or not isinstance(answer, Mapping):
        return None
    visit = int(decision.get("visit", 0))
    if visit != asked.get("visit") or visit <= int(record.get("acted", 0)):
        return None
    return str(answer.get("choice")), str(answer.get("note") or ""), visit


def pending_raise(state: EngineState) -> tuple[str, float, int] | None:
    """An answered ``raise`` of the budget gate not yet added: ``(cap key, amount, visit)``.

    The amount is the answer's note when it gives one, else the cap's configured
    amount (the ``step`` recorded when the gate was asked).
    """
    from phasegate.engine.answers import parse_amount

    found = unacted_answer(state)
    if found is None or found[0] != "raise":
        return None
    _, note, visit = found
    asked = budget_record(state)["asked"]
    extra = parse_amount(note, whole=asked.get("unit") == "tokens") or float(asked.get("step", 0.0))
    if asked.get("unit") == "tokens":
        extra = float(round(extra))
    return str(asked.get("cap")), extra, visit


def raises_of(state: EngineState) -> dict[str, float]:
    """How much each cap was raised for this item, an answered ``raise`` not yet added
    included."""
    found = budget_record(state).get("raises")
    raises: dict[str, float] = {}
    if isinstance(found, Mapping):
        for key, value in found.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                raises[str(key)] = float(value)
    waiting = pending_raise(state)
    if waiting is not None:
        key, extra, _ = waiting
        raises[key] = raises.get(key, 0.0) + extra
    for key, extra in raised_too(state):
        raises[key] = raises.get(key, 0.0) + extra
    return raises


def raised_too(state: EngineState) -> list[tuple[str, float]]:
    """The other caps that held the call an answered ``raise`` without an amount raises
    too, each by its configured amount, not added yet: ``(cap key, amount)``."""
    from phasegate.engine.answers import parse_amount

    found = unacted_answer(state)
    if found is None or found[0] != "raise":
        return []
    asked = budget_record(state)["asked"]
    if parse_amount(found[1], whole=asked.get("unit") == "tokens") is not None:
        return []  # an amount is in the asked cap's unit: that cap alone
    also = asked.get("also")
    if not isinstance(also, list):
        return []
    return [
        (str(other["cap"]), float(other["step"]))
        for other in also
        if isinstance(other, Mapping) and isinstance(other.get("step"), int | float)
    ]


def caps_of(config: Config, workflow: str, state: EngineState) -> list[Cap]:
    """Every cap of the item, role caps first (the more specific), raises applied."""
    settings = settings_for(config, workflow)
    raises = raises_of(state)
    caps: list[Cap] = []
    scopes: list[tuple[str | None, BudgetCap]] = [*settings.roles.items(), (None, settings.item)]
    for role, cap in scopes:
        for metric in METRICS:
            value = getattr(cap, metric)
            if value is not None:
                found = Cap(role, metric, float(value))
                caps.append(Cap(role, metric, float(value), raises.get(found.key, 0.0)))
    return caps


# -- the check --------------------------------------------------------------------------


@dataclass(frozen=True)
class Reached:
    """A cap the next call may not pass: what was spent, and what the call would add."""

    cap: Cap
    spent: float
    estimate: float


@dataclass(frozen=True)
class Allowed:
    """The call may go out; ``max_usd`` is the least USD any of its caps has left."""

    max_usd: float | None


def raise_step(found: Reached) -> float:
    """What a ``raise`` without an amount adds to ``found``'s cap: its configured amount, or
    as many times that as the held call needs to go ahead (a cap lowered in the config below
    the spend, or a call estimated at more than the cap's amount)."""
    step, limit, spent = found.cap.configured, found.cap.limit, found.spent
    times = max(1, math.ceil((spent + found.estimate - limit) / step - _EPS))
    if spent >= limit + step * times - _EPS:
        times += 1  # the spend alone must stay under the cap
    return step * times


def holding(caps: list[Cap], spend: Spend, role: str, plays: str | None = None) -> list[Reached]:
    """Every cap that holds a call of ``role`` (:func:`check` stops at the first)."""
    found = []
    for cap in caps:
        if cap.applies_to(role, plays):
            spent = spend.spent(cap.role, cap.metric)
            estimate = spend.estimate(role, cap.metric, plays)
            if spent >= cap.limit - _EPS or spent + estimate > cap.limit + _EPS:
                found.append(Reached(cap, spent, estimate))
    return found


def check(caps: list[Cap], spend: Spend, role: str, plays: str | None = None) -> Reached | Allowed:
    """Apply the rule (see the module docstring) to a call of ``role`` (an agent chosen at
    run time playing the workflow role ``plays``)."""
    left: float | None = None
    for cap in caps:
        if not cap.applies_to(role, plays):
            continue
        spent = spend.spent(cap.role, cap.metric)
        estimate = spend.estimate(role, cap.metric, plays)
        if spent >= cap.limit - _EPS or spent + estimate > cap.limit + _EPS:
            return Reached(cap, spent, estimate)
        if cap.metric == "usd":
            remaining = cap.limit - spent
            left = remaining if left is None else min(left, remaining)
    return Allowed(round(left, 6) if left is not None else None)


def budget_status(config: Config, workflow: str, state: EngineState, journal: Path) -> Any:
    """Spend against each cap (``status``'s ``budget``), or ``None`` when no cap applies:
    ``{caps: [{cap, role, unit, configured, raised, limit, spent, remaining, reached}],
    spent: {usd, tokens, attempts, failed, unreported}}``."""
    if not configured(config, workflow):
        return None
    spend = read_spend(journal)
    rows = []
    for cap in caps_of(config, workflow, state):
        spent = spend.spent(cap.role, cap.metric)
        rows.append(
            {
                "cap": cap.key,
                "role": cap.role,
                "unit": cap.metric,
                "configured": shown(cap.configured, cap.metric),
                "raised": shown(cap.raised, cap.metric),
                "limit": shown(cap.limit, cap.metric),
                "spent": shown(spent, cap.metric),
                "remaining": shown(max(cap.limit - spent, 0.0), cap.metric),
                "reached": spent >= cap.limit - _EPS,
                # Calls whose backend reported no cost: a USD cap does not see them.
                "unmeasured": spend.uncosted(cap.role) if cap.metric == "usd" else 0,
            }
        )
    # ``uncosted``: the calls that reported no cost (their USD is not measured).
    return {"caps": rows, "spent": {**spend.summary(), "uncosted": spend.uncosted(None)}}


def question_lapsed(
    config: Config, workflow: str, state: EngineState, journal: Path, roles: Iterable[str]
) -> bool:
    """Whether the ``budget`` question waits although no cap holds a call of any of
    ``roles`` any more (the config was changed instead of answering it): the next run
    withdraws it and its held call goes ahead, so it waits for nobody."""
    decision = state.decisions.get(BUDGET_DECISION)
    if not isinstance(decision, Mapping) or decision.get("status") != "pending":
        return False
    return not caps_hold(config, workflow, state, journal, roles)


def caps_hold(
    config: Config, workflow: str, state: EngineState, journal: Path, roles: Iterable[str]
) -> bool:
    """Whether a cap of ``workflow``'s items (raises applied) holds a call of any of
    ``roles`` now. A call a cap held (the ``budget`` question pending, or answered ``stop``)
    that none holds any more goes ahead at the next run, asking nothing."""
    if not configured(config, workflow):
        return False
    caps = caps_of(config, workflow, state)
    spend = read_spend(journal)
    return any(holding(caps, spend, role) for role in roles)


def budget_lines(budget: dict[str, Any] | None) -> list[str]:
    """``Budget: item $1.20 of $5.00 (24%)``, one line per cap (none without caps)."""
    if not budget:
        return []
    spent = budget.get("spent") or {}
    extra = []
    if spent.get("failed"):
        extra.append(f"{spent['failed']} failed")
    if spent.get("unreported"):
        extra.append(f"{spent['unreported']} unreported, estimated")
    attempts = f"{spent.get('attempts', 0)} attempts" + (f", {', '.join(extra)}" if extra else "")
    lines = [f"Budget (spend of all {attempts}):"]
    for cap in budget.get("caps") or []:
        unit: Metric = "tokens" if cap["unit"] == "tokens" else "usd"
        share = cap["spent"] / cap["limit"] if cap["limit"] else 0.0
        who = "item" if cap["role"] is None else f"role {cap['role']}"
        raised = f", raised by {amount(cap['raised'], unit)}" if cap["raised"] else ""
        mark = "  REACHED" if cap["reached"] else ""
        unmeasured = int(cap.get("unmeasured") or 0)
        if unmeasured:
            # Not a share of the cap: what those calls cost is not known.
            calls = f"{unmeasured} call{'s' if unmeasured > 1 else ''}"
            lines.append(
                f"  {who}: {amount(cap['spent'], unit)} + {calls} without a cost of "
                f"{amount(cap['limit'], unit)} (not measured: set pricing for their backend"
                f"{raised}){mark}"
            )
            continue
        lines.append(
            f"  {who}: {amount(cap['spent'], unit)} of {amount(cap['limit'], unit)} "
            f"({share:.0%}{raised}){mark}"
        )
    return lines


# -- which roles a cap may name ---------------------------------------------------------


def check_role_keys(
    config: Config, repo: Path, workflow: str | None = None, roles: Iterable[str] = ()
) -> None:
    """Refuse (ConfigError, exit 2) a ``budget.roles`` key that caps nothing: it names no
    role of any workflow of the repository, nor an agent (``.claude/agents``, ``roles:``).

    ``workflow`` is the running one and ``roles`` its roles (always known here; ``None``
    for ``doctor``, which reads every workflow's); a key under
    ``workflows.NAME.budget.roles`` must name a role of NAME, or an agent.
    """
    sections = {
        name: found.budget.roles
        for name, found in config.workflows.items()
        if found.budget is not None and found.budget.roles
    }
    if not config.budget.roles and not sections:
        return
    from phasegate.config import config_path
    from phasegate.errors import PhasegateError
    from phasegate.implement.agents import find_agents
    from phasegate.workflow.registry import WorkflowRegistry

    registry = WorkflowRegistry(repo)
    by_workflow: dict[str, set[str]] = {} if workflow is None else {workflow: set(roles)}
    for name in registry.names():
        if name not in by_workflow:
            try:
                by_workflow[name] = set(registry.get(name).workflow.roles)
            except PhasegateError:
                continue  # a workflow that does not load reports its own problem
    agents = set(find_agents(repo, config).agents) | (set(config.roles) - {"default"})
    every = set().union(*by_workflow.values())
    where = config_path(repo)

    def refuse(field: str, key: str, known: set[str]) -> None:
        names = ", ".join(sorted(known)) or "none"
        close = difflib.get_close_matches(key, sorted(known | agents), n=1, cutoff=0.75)
        mean = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"{where}: {field}.{key}: names no workflow role nor agent, so it would cap "
            f"nothing (roles: {names}; agents: {', '.join(sorted(agents)) or 'none'}){mean}"
        )

    for key in config.budget.roles:
        if key not in every and key not in agents:
            refuse("budget.roles", key, every)
    for name, caps in sections.items():
        known = by_workflow.get(name)
        if known is None:
            continue  # no such workflow here (or it does not load)
        for key in caps:
            if key not in known and key not in agents:
                refuse(f"workflows.{name}.budget.roles", key, known)


# -- caps a backend cannot measure ---------------------------------------------------------

#: Backends that report tokens but no cost: a USD cap measures them only with ``pricing``.
COST_FROM_PRICING = frozenset({"codex", "gemini", "openai"})


def unmeasured_usd(config: Config, workflow: str, roles: Iterable[str]) -> list[str]:
    """One line for each backend serving ``roles`` under a USD cap of ``workflow``'s items
    that reports no cost (codex, gemini, openai without ``pricing``): the cap cannot measure
    those calls, only a tokens cap limits them. Empty when every capped call is measured."""
    settings = settings_for(config, workflow)
    found: dict[str, tuple[list[str], list[str]]] = {}
    for role in sorted(set(roles)):
        keys = ["item.usd"] if settings.item.usd is not None else []
        own = settings.roles.get(role)
        if own is not None and own.usd is not None:
            keys.append(f"roles.{role}.usd")
        key = role if role in config.roles else "default"
        binding = config.roles.get(key)
        if not keys or binding is None or binding.backend not in COST_FROM_PRICING:
            continue
        shared = config.backends.get(binding.backend) or {}
        if (binding.model_extra or {}).get("pricing") or shared.get("pricing"):
            continue
        capped, named = found.setdefault(binding.backend, ([], []))
        named.append(role)
        capped.extend(k for k in keys if k not in capped)
    lines = []
    for backend, (capped, named) in sorted(found.items()):
        plural = "s" if len(named) > 1 else ""
        lines.append(
            f"budget {', '.join(capped)}: the {backend} backend reports no cost for the calls "
            f"of role{plural} {', '.join(named)}, so the USD cap cannot measure them (only a "
            f"tokens cap limits them): set backends.{backend}.pricing (USD per million tokens)"
        )
    return lines
