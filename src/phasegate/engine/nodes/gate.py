"""The ``gate`` node: a human decision whose canonical choices each lead to a node."""

from __future__ import annotations

import re
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from phasegate.engine.answers import Question
from phasegate.engine.gates import ask
from phasegate.engine.plugin_api import Task, plugin
from phasegate.faults import crash_point
from phasegate.workflow.model import GateNode
from phasegate.workflow.parts import BLOCKED_TARGET
from phasegate.workflow.prompts import render

if TYPE_CHECKING:
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Steps


def gate_values(run: Run, path: str, task: Task | None) -> dict[str, Any]:
    """What a gate's question, decision id and files may name."""
    state = run.state
    label = run.label(path)
    return {
        "item": run.item.name,
        "description": state.get("description", ""),
        "workflow": run.workflow.name,
        "phase": label,
        "label": label,
        "mode": state.mode,
        "item_dir": run.rel(path, run.item.item_dir),
        "task": task.key if task else "",
        "task_title": task.title if task else "",
    }


def timeout_minutes(run: Run, node: GateNode) -> float | None:
    """After how many minutes an unanswered gate takes its timeout choice (``None``: never).

    A name instead of a number reads the item's data; a missing or 0 value is no timeout.
    """
    if node.timeout is None:
        return None
    minutes = node.timeout.minutes
    if isinstance(minutes, str):
        raw = run.state.data.get(minutes)
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
            return None
        return float(raw)
    return minutes


def timeout_unset(run: Run, node: GateNode) -> str | None:
    """Why the gate's timeout, naming a value of the item's data, never fires (``None``: it
    does, or 0 says it should not): nothing set that value, or it is no number of minutes.
    Said as the gate is reached, for the gate would otherwise wait for ever without a word
    (a misspelt name, a value the item was never given)."""
    if node.timeout is None or not isinstance(node.timeout.minutes, str):
        return None
    name, data = node.timeout.minutes, run.state.data
    raw = data.get(name)
    if name in data and not isinstance(raw, bool) and isinstance(raw, int | float) and raw >= 0:
        return None
    workflow = run.item.loaded.path
    with suppress(ValueError):
        workflow = workflow.relative_to(run.item.repo)
    held = "is not set" if name not in data else f"holds {raw!r}, not a number of minutes"
    return (
        f"gate {node.id!r} ({workflow}): its timeout.minutes names the item's data {name!r}, "
        f"which {held}: the decision does not time out (write the minutes as a number, or "
        f"give the item {name!r}, 0 for no timeout: Repo.new(data=...) or a plug-in sets it)"
    )


def decision_id(
    run: Run, path: str, node: GateNode, task: Task | None, values: dict[str, Any]
) -> str:
    """The id of the decision ``node`` asks at ``path``: inside a foreach body the default
    names the item (``ask-T2``), so each item is asked on its own. In a foreach inside a
    foreach, ``task`` names the items around it too, outer first (``sure-T2.1``): item 1
    of T1 and item 1 of T2 are two decisions. A decision recorded for this very item under
    an id an earlier version gave it (the bare node id, the inner item alone) is kept."""
    template = node.decision_template(task is not None)
    outer = re.findall(r"\[([^\]]*)\]", path)[:-1] if task is not None else []
    if outer and _unique_keys(run, path):
        outer = []  # the loop's keys are unique across the loops around it (implement's tasks)
    found = render(template, {**values, "task": ".".join([*outer, values["task"]])})
    if found not in run.state.decisions:
        earlier_ids = [render(template, values)] if outer else []
        if node.decision is None and task is not None:
            earlier_ids.append(node.id)
        for earlier_id in earlier_ids:
            earlier = run.state.decisions.get(earlier_id)
            if isinstance(earlier, dict) and earlier.get("context") == path:
                return earlier_id
    return found


def _unique_keys(run: Run, path: str) -> bool:
    """Whether the foreach whose item ``path`` (a gate in its body) is in says its items'
    keys are unique across the loops around it (``unique_keys``)."""
    loop = re.sub(r"\[[^\]]*\]", "", path).rsplit("/", 1)[0]
    try:
        node = run.workflow.node(loop)
    except KeyError:
        return False
    return bool(getattr(node, "unique_keys", False))


def _shown(run: Run, names: list[str]) -> list[str]:
    """The files a gate shows: a glob stands for every file it matches (sorted)."""
    found: list[str] = []
    for name in names:
        if not any(c in name for c in "*?["):
            found.append(name)
            continue
        matches = sorted(p for p in run.item.item_dir.glob(name) if p.is_file())
        found += [p.relative_to(run.item.item_dir).as_posix() for p in matches]
    return found


def run_gate(run: Run, path: str, node: GateNode, task: Task | None) -> Steps:
    from phasegate.engine.walk import Outcome

    ns = run.state.node(path)
    if run.over_visit_limit(path):
        return Outcome("exhausted")
    ctx = run.context(path, node, task, {})
    values = gate_values(run, path, task)
    unset = timeout_unset(run, node)
    if unset is not None:
        minutes = node.timeout.minutes if node.timeout else None
        run.item.record("gate.timeout_unset", id=node.id, data=minutes, message=unset)
    if node.detail is not None:
        found = plugin("predicates", node.detail)(ctx)
        values["detail"] = str(found) if found else ""
    recommendation = None
    if node.recommend is not None:
        found = plugin("predicates", node.recommend)(ctx)
        recommendation = str(found) if found else None
    offered: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    for name, choice in node.choices.items():
        if choice.when is None or plugin("predicates", choice.when)(ctx):
            offered[name] = choice.description
        else:
            # The workflow says why the choice is not possible now: answering it stops the
            # run (exit 4) with that. A choice not offered without such a text is refused as
            # any answer that is not one of the choices offered is (exit 2).
            why = " ".join(render(choice.unavailable, values).split())
            if why:
                unavailable[name] = why
    question = Question(
        id=decision_id(run, path, node, task, values),
        question=" ".join(render(node.question, values).split()),
        choices=offered,
        visit=ns.visit,
        files=_shown(run, [render(f, values) for f in node.show]),
        default=node.default if node.default in offered else None,
        recommendation=recommendation,
        notes_required=[n for n, c in node.choices.items() if c.note == "required"],
        timeout_minutes=timeout_minutes(run, node),
        timeout_choice=node.timeout.choice if node.timeout else None,
        ask_at_terminal=node.ask == "terminal",
        unanswered_exit=node.unanswered.exit,
        unanswered_message=" ".join(render(node.unanswered.message, values).split()),
        attempts=node.attempts,
        out_of_attempts="invalid",
        context=path,
        unavailable=unavailable,
        explicit=node.explicit,
    )
    answer = ask(run, question)
    # The answer is on disk; nothing has acted on it yet (the crash tests stop here).
    crash_point("gate.answered")
    yield from ()
    if answer.choice not in offered:
        stale = answer.choice not in node.choices and answer.by != "prompt"
        why = (
            f"the answer {answer.choice!r} to decision {question.id} is no choice of gate "
            f"{node.id!r} any more (choices: {', '.join(offered)}): the workflow changed since "
            "it was answered; the next run asks it again"
            if stale
            else answer.note
        )
        issues = [{"severity": "blocker", "description": why, "location": None}] if why else []
        return Outcome("invalid", issues=issues)
    choice = node.choices[answer.choice]
    cause = " ".join(render(choice.description, values).split()) or None
    said = answer.note or (cause if choice.to == BLOCKED_TARGET else None)
    # A choice that blocks says why in the run's message: the note, else what it means.
    issues = [{"severity": "blocker", "description": said, "location": None}] if said else []
    extend = None
    if choice.extend is not None:
        extend = (
            run.workflow.max_iterations(run.state.mode)
            if choice.extend == "mode"
            else choice.extend
        )
    return Outcome(
        answer.choice,
        target=choice.to,
        issues=issues,
        extend=extend,
        start_with=choice.start_with,
        cause=cause,
    )
