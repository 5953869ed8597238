"""Rules one workflow node must keep: its references, outcomes, roles and reviewers.

Each problem is ``(location, message)``, the location a tuple of keys and
indices into the YAML document, so the loader can name the file, line and field.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from phasegate import plugins
from phasegate.workflow.model import (
    AgentNode,
    CheckNode,
    EndNode,
    ForeachNode,
    GateNode,
    Workflow,
)
from phasegate.workflow.parts import (
    BLOCKED_TARGET,
    PASS,
    REVISE,
    CheckRef,
    InlineCheck,
    budget_max_problem,
)
from phasegate.workflow.prompts import PLACEHOLDER
from phasegate.workflow.routing import node_outcomes, target_of

Location = tuple[str | int, ...]
Problem = tuple[Location, str]


def _unknown_target(workflow: Workflow, target: str, known: str, in_body: bool) -> str:
    """An ``on`` target or a choice's ``to`` that names no node of its scope."""
    if target.startswith("@"):
        return f"unknown node {target!r} (nodes: {known}; or {BLOCKED_TARGET})"
    if any(node.id == target for _, node in workflow.walk()):
        how = (
            f"{target!r} is outside this foreach body: to leave the body, end it at an end "
            "node with an outcome (kind: end, outcome: NAME) and map NAME in the foreach's on"
            if in_body
            else f"{target!r} is inside a foreach body, which only its foreach runs: "
            "lead to the foreach"
        )
        return f"unknown node {target!r} in this scope ({known}): {how}"
    if target == BLOCKED_TARGET.removeprefix("@"):
        return f"unknown node {target!r} ({known}); did you mean {BLOCKED_TARGET!r} (in quotes)?"
    return unknown_node(target, known)


def mode_problems(default_mode: str, modes: list[str], written: bool) -> list[Problem]:
    """No mode at all, or a ``default_mode`` that is none of them (``written``: the file
    sets it; else it is ``standard``, which the file may well not have)."""
    if not modes:
        return [
            (
                ("modes",),
                "a workflow needs at least one mode, the review budget of its items "
                f"(modes: {{{default_mode}: {{max_iterations: 3}}}})",
            )
        ]
    if default_mode not in modes and not written:
        return [
            (
                ("modes",),
                f"no mode is named {default_mode!r}, the default_mode when none is set: "
                f"set default_mode: {modes[0]} (modes: {', '.join(modes)})",
            )
        ]
    if default_mode not in modes:
        return [
            (
                ("default_mode",),
                f"unknown mode {default_mode!r} (modes: {', '.join(modes)})"
                + "".join(
                    f"; did you mean {close!r}?"
                    for close in difflib.get_close_matches(default_mode, modes, n=1)
                ),
            )
        ]
    return []


def unknown_node(name: str, known: str) -> str:
    """``unknown node 'wirte' (write, done); did you mean 'write'?``: ``known`` lists the
    ids of the scope, comma-separated."""
    close = difflib.get_close_matches(name, known.split(", "), n=1)
    return f"unknown node {name!r} ({known})" + (f"; did you mean {close[0]!r}?" if close else "")


def _outcome_hint(node: Any, outcome: str, possible: set[str]) -> str:
    """What an ``on`` key that is none of the node's outcomes was likely meant as."""
    if isinstance(node, GateNode) and outcome in node.choices:
        return (
            f": {outcome!r} is a choice, and a choice leads to its own node "
            f"(choices: {{{outcome}: NODE}}), not through on"
        )
    close = difflib.get_close_matches(outcome, sorted(possible), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def node_problems(
    workflow: Workflow,
    scope: tuple[Any, ...],
    index: int,
    where: Location,
    ids: list[str],
    produced: set[str],
) -> list[Problem]:
    """Every rule ``scope[index]`` breaks: its targets, outcomes, files, role and reviewers."""
    node = scope[index]
    problems: list[Problem] = []
    known = ", ".join(ids)
    in_body = "body" in where
    targets_ok = {*ids, BLOCKED_TARGET}
    for position, target in enumerate(node.also):
        if target not in ids:
            problems.append(((*where, "also", position), unknown_node(target, known)))
    for outcome, target in node.on.items():
        if target not in targets_ok:
            problems.append(
                ((*where, "on", outcome), _unknown_target(workflow, target, known, in_body))
            )
    possible = set(node_outcomes(scope, index))
    for outcome in node.on:
        if outcome not in possible:
            problems.append(
                (
                    (*where, "on", outcome),
                    f"node {node.id!r} never ends with outcome {outcome!r} "
                    f"(its outcomes: {', '.join(sorted(possible)) or 'none'})"
                    + _outcome_hint(node, outcome, possible),
                )
            )
    for outcome in node_outcomes(scope, index):
        if target_of(scope, index, outcome) is None:
            if outcome in ("pass", "done") and index == len(scope) - 1:
                # pass and done go on to the next node: the last node of a scope has none.
                hint = (
                    ": it is the last node of its scope, so there is no next node to go on "
                    "to (map it in on, or add an end node after it: {id: done, kind: end})"
                )
            else:
                hint = f" (map it in on: {{{outcome}: NODE}}, NODE the node it leads to)"
            problems.append(
                ((*where, "on"), f"outcome {outcome!r} of node {node.id!r} is not mapped{hint}")
            )
    problems += _exhausted_cycle(scope, index, where)
    for field, files in (("hard", node.prerequisites.hard), ("soft", node.prerequisites.soft)):
        problems += file_refs(files, (*where, "prerequisites", field), produced)
    if isinstance(node, AgentNode):
        problems += _agent_problems(workflow, node, where, produced)
    elif isinstance(node, GateNode):
        if not node.choices:
            problems.append(
                (
                    (*where, "choices"),
                    "a gate needs at least one choice (choice name: the node it leads to)",
                )
            )
        by_id = {n.id: n for n in scope}
        for name, choice in node.choices.items():
            if choice.to not in targets_ok:
                problems.append(
                    (
                        (*where, "choices", name),
                        _unknown_target(workflow, choice.to, known, in_body),
                    )
                )
            target = by_id.get(choice.to)
            if target is None or isinstance(target, AgentNode):
                continue  # an unknown node is said above; @blocked stops the run
            for field, what in (
                ("extend", "continues the revise loop of the node it leads to"),
                ("start_with", "enters the node it leads to at its reviewers"),
            ):
                if getattr(choice, field) is not None:
                    kind = str(target.kind)
                    problems.append(
                        (
                            (*where, "choices", name, field),
                            f"{field} {what}, which only an agent node has: {choice.to!r} is "
                            f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} node (it would do "
                            "nothing)",
                        )
                    )
        for position, needed in enumerate(node.required):
            if needed not in node.choices:
                problems.append(
                    (
                        (*where, "required", position),
                        f"{needed!r} is not one of the choices ({', '.join(node.choices)})",
                    )
                )
        timeout = node.timeout.choice if node.timeout is not None else None
        named: tuple[tuple[Location, str | None], ...] = (
            (("default",), node.default),
            (("timeout", "choice"), timeout),
        )
        for place, chosen in named:
            if chosen is not None and chosen not in node.choices:
                problems.append(
                    (
                        (*where, *place),
                        f"{chosen!r} is not one of the choices ({', '.join(node.choices)})",
                    )
                )
    elif isinstance(node, CheckNode):
        if not node.run and node.commands_from is None:
            problems.append(
                ((*where, "run"), "a check node needs commands: 'run', 'commands_from' or both")
            )
        problems += check_placeholders(node.run, (*where, "run"))
    elif isinstance(node, ForeachNode):
        source = node.items.file
        if source is not None and not any(c in source for c in "*?[{"):
            problems += file_refs([source], (*where, "items", "file"), produced, indexed=False)
    elif isinstance(node, EndNode) and node.on:
        problems.append(((*where, "on"), "an end node has no way out"))
    return problems


def _exhausted_cycle(scope: tuple[Any, ...], index: int, where: Location) -> list[Problem]:
    """A node whose ``exhausted`` leads, through ``exhausted`` outcomes only, back to itself:
    past its visit limit it would be entered again and again without end, calling nothing."""
    node = scope[index]
    by_id = {n.id: n for n in scope}
    chain = [node.id]
    target = node.on.get("exhausted")
    while target in by_id and target not in chain:
        chain.append(target)
        target = by_id[target].on.get("exhausted")
    if target != node.id:
        return []
    loop = " -> ".join([*chain, node.id])
    return [
        (
            (*where, "on", "exhausted"),
            f"outcome 'exhausted' of node {node.id!r} leads back to it ({loop}): past its "
            "visit limit it would run again without end; send it to another node or '@blocked'",
        )
    ]


def check_placeholders(checks: Iterable[CheckRef], where: Location) -> list[Problem]:
    """A problem for each ``{{ name }}`` in a check's command or folder: a check's command
    is given to the shell as written (nothing fills placeholders in it)."""
    problems: list[Problem] = []
    for position, check in enumerate(checks):
        if not isinstance(check, InlineCheck):
            continue
        for field in ("run", "cwd"):
            names = sorted(set(PLACEHOLDER.findall(getattr(check, field) or "")))
            if names:
                listed = ", ".join(f"{{{{ {n} }}}}" for n in names)
                problems.append(
                    (
                        (*where, position, field),
                        f"{listed}: a check's {field} is given to the shell as written; "
                        "placeholders are not filled in it",
                    )
                )
    return problems


def _agent_problems(
    workflow: Workflow, node: AgentNode, where: Location, produced: set[str]
) -> list[Problem]:
    problems: list[Problem] = []
    roles = ", ".join(workflow.roles)
    reviewers = node.all_reviewers()
    if node.executor is None and node.start_with == "execute":
        problems.append(
            ((*where, "executor"), f"an agent node needs an 'executor' role (roles: {roles})")
        )
    if node.executor_selector is not None and node.executor is None:
        problems.append(
            ((*where, "executor_selector"), "name the 'executor' role the chosen agent plays")
        )
    if node.executor is not None and node.executor not in workflow.roles:
        problems.append(((*where, "executor"), unknown_role(node.executor, workflow.roles)))
    elif (
        node.executor is not None
        and node.outputs
        and workflow.roles[node.executor].access == "read-only"
    ):
        # A read-only agent is given no tool that writes: every call would end with its
        # outputs missing.
        problems.append(
            (
                (*where, "executor"),
                f"role {node.executor!r} is read-only (a role is, unless its access says "
                f"write), so it cannot write the node's outputs ({node.outputs[0].file}): "
                f"set roles.{node.executor}.access: write",
            )
        )
    if node.start_with == "review" and not reviewers:
        problems.append(((*where, "start_with"), "a node starting with review needs reviewers"))
    if (
        node.executor is None
        and node.start_with == "review"  # without review first, the line above says it
        and any(a == REVISE for r in reviewers for a in r.on.values())
    ):
        problems.append(((*where, "executor"), "a reviewer asks for revisions: name an executor"))
    if node.reviewer is not None:
        problems += _reviewer_role(workflow, node.reviewer, (*where, "reviewer"))
    for position, reviewer in enumerate(node.reviewers):
        at: Location = (*where, "reviewers", position)
        if reviewer.role is None and reviewer.selector is None:
            problems.append((at, "a reviewer names a 'role', a 'selector', or both"))
        if reviewer.role is not None:
            problems += _reviewer_role(workflow, reviewer.role, (*at, "role"))
        problems += _vocabulary(reviewer.reader, reviewer.on, (*at, "on"))
    problems += check_placeholders(node.checks, (*where, "checks"))
    budget = budget_max_problem(node.budget, workflow.view.plugin)
    if budget is not None:
        problems.append(((*where, "budget", "max"), budget))
    if node.previous is not None and node.previous not in produced:
        problems.append(((*where, "previous"), f"{node.previous!r} is not an output of any node"))
    plain = [i.file for i in node.inputs if not any(c in i.file for c in "*?[{")]
    for position, name in enumerate(plain):
        if name not in produced:
            problems.append(
                (
                    (*where, "inputs", position),
                    f"{name!r} is not an output of any node "
                    f"(outputs: {', '.join(sorted(produced)) or 'none'})",
                )
            )
    return problems


def _reviewer_role(workflow: Workflow, role: str, where: Location) -> list[Problem]:
    if role not in workflow.roles:
        return [(where, unknown_role(role, workflow.roles))]
    if workflow.roles[role].access != "read-only":
        return [(where, writing_reviewer(role))]
    return []


def unknown_role(role: str, roles: Iterable[str]) -> str:
    """``unknown role 'writter' (roles: writer, critic); did you mean 'writer'?``"""
    known = list(roles)
    close = difflib.get_close_matches(role, known, n=1)
    return f"unknown role {role!r} (roles: {', '.join(known)})" + (
        f"; did you mean {close[0]!r}?" if close else ""
    )


def writing_reviewer(role: str) -> str:
    """A reviewer's role that may write: what to write instead."""
    return (
        f"reviewer role {role!r} must be read-only (least privilege): set "
        f"roles.{role}.access: read-only, or have a read-only role review"
    )


def _vocabulary(reader: str, mapping: dict[str, str], where: Location) -> list[Problem]:
    problems: list[Problem] = []
    if "UNCLEAR" not in mapping:
        problems.append(
            (where, "map UNCLEAR (an answer that cannot be read) to revise or an outcome")
        )
    elif mapping["UNCLEAR"] == PASS:
        problems.append(
            ((*where, "UNCLEAR"), "UNCLEAR can never map to pass (unclear never approves)")
        )
    try:
        words = getattr(plugins.load("readers", reader), "words", None)
    except plugins.PluginError:
        return problems  # reported with the plug-ins
    if words is not None:
        for word in words:
            if word not in mapping:
                problems.append((where, f"the {reader} reader's word {word!r} is not mapped"))
        for word in mapping:
            if word not in (*words, "UNCLEAR"):
                problems.append(
                    (
                        (*where, word),
                        f"the {reader} reader never answers {word!r} "
                        f"(its words: {', '.join(words)}, UNCLEAR)",
                    )
                )
    if not any(action == PASS for action in mapping.values()):
        problems.append((where, "no verdict word maps to pass: the node could never pass"))
    return problems


def file_refs(
    files: Iterable[str], where: Location, produced: set[str], *, indexed: bool = True
) -> list[Problem]:
    """A problem for each of ``files`` that no node produces (at ``where[position]``, or at
    ``where`` itself when it names one file: ``indexed=False``)."""
    return [
        (
            (*where, position) if indexed else where,
            f"{name!r} is not an output of any node "
            f"(outputs: {', '.join(sorted(produced)) or 'none'})",
        )
        for position, name in enumerate(files)
        if name not in produced
    ]
