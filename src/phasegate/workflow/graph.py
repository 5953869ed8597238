"""Whole-workflow rules checked on load: names, references, plug-ins and the node graph.

Each problem is returned as ``(location, message)`` where the location is a
tuple of keys/indices into the YAML document, so the loader can name the file,
line and field. The rules: node ids unique in their scope; every outcome of
every node mapped (explicitly or by a documented default); every gate choice
leads somewhere; every node reachable; a terminal reachable from each node;
``UNCLEAR`` mapped and never to ``pass``; every role, label and plug-in known.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from phasegate import plugins
from phasegate.workflow.model import (
    BLOCKED_TARGET,
    COMPLETE,
    PASS,
    REVISE,
    ActionNode,
    AgentNode,
    AnyNode,
    CheckNode,
    EndNode,
    ForeachNode,
    GateNode,
    PluginRef,
    Workflow,
    confined_path,
)

Location = tuple[str | int, ...]
Problem = tuple[Location, str]

#: Outcomes that go to the next node of the scope when ``on`` does not map them.
SEQUENTIAL = frozenset({"pass", "done"})
#: Outcomes that stop the run, blocked, when ``on`` does not map them.
BLOCKING = frozenset({"checks-failed", "invalid", "exhausted", "interrupted", "merge-conflict"})


def default_target(scope: Sequence[Any], index: int, outcome: str) -> str | None:
    """Where an unmapped ``outcome`` of ``scope[index]`` goes (None: nowhere, a problem)."""
    if outcome in SEQUENTIAL and index + 1 < len(scope):
        return str(scope[index + 1].id)
    if outcome in BLOCKING:
        return BLOCKED_TARGET
    return None


def target_of(scope: Sequence[Any], index: int, outcome: str) -> str | None:
    """Where ``outcome`` of ``scope[index]`` leads: its ``on`` entry, else the default."""
    node = scope[index]
    if outcome in node.on:
        return str(node.on[outcome])
    return default_target(scope, index, outcome)


def action_outcomes(name: str) -> tuple[str, ...]:
    """The outcomes an action plug-in declares (``("done",)`` when it cannot be loaded)."""
    try:
        action = plugins.load("actions", name)
    except plugins.PluginError:
        return ("done",)
    return tuple(getattr(action, "outcomes", ("done",)))


def outcomes(node: AnyNode) -> list[str]:
    """Every outcome ``node`` can end with."""
    if isinstance(node, AgentNode):
        found = [PASS]
        for reviewer in node.all_reviewers():
            found += [a for a in reviewer.on.values() if a not in (PASS, REVISE)]
            if reviewer.on_timeout and reviewer.on_timeout not in (PASS, REVISE):
                found.append(reviewer.on_timeout)
        if node.budget.on_exhausted != COMPLETE:
            found.append(node.budget.on_exhausted)
        if node.checks or node.checks_from is not None:
            found.append("checks-failed")
        if node.at_most_once:
            found.append("interrupted")
        if node.max_visits:
            found.append("exhausted")
        return list(dict.fromkeys(found))
    if isinstance(node, CheckNode):
        return ["pass", "fail"]
    if isinstance(node, ActionNode):
        return list(action_outcomes(node.action))
    if isinstance(node, ForeachNode):
        ends = [n.outcome for n in node.body if isinstance(n, EndNode) and n.outcome != "done"]
        if node.parallel > 1 and node.isolation == "worktree" and node.conflicts.then == "outcome":
            ends.append("merge-conflict")
        return list(dict.fromkeys(["done", *ends]))
    if isinstance(node, GateNode):
        return ["invalid"] + (["exhausted"] if node.max_visits else [])
    return []


def edges(scope: Sequence[Any], index: int) -> list[tuple[str, str]]:
    """``(outcome or choice, target)`` of every way out of ``scope[index]``."""
    node = scope[index]
    found: list[tuple[str, str]] = []
    if isinstance(node, GateNode):
        found += [(name, choice.to) for name, choice in node.choices.items()]
    found += [("also", target) for target in node.also]
    for outcome in outcomes(node):
        target = target_of(scope, index, outcome)
        if target is not None:
            found.append((outcome, target))
    return found


def graph_problems(workflow: Workflow, base: Location = ("nodes",)) -> list[Problem]:
    """Every rule the workflow breaks, in document order."""
    problems: list[Problem] = []
    problems += _top_level(workflow)
    problems += _scope(workflow, tuple(workflow.nodes), base, workflow, top=True)
    problems += _plugin_problems(workflow, base)
    return problems


def _top_level(workflow: Workflow) -> list[Problem]:
    problems: list[Problem] = []
    ids = [n.id for n in workflow.nodes]
    if workflow.default_mode not in workflow.modes:
        problems.append(
            (
                ("default_mode",),
                f"unknown mode {workflow.default_mode!r} (modes: {', '.join(workflow.modes)})",
            )
        )
    known = ", ".join(ids)
    for mode_name, mode in workflow.modes.items():
        for index, skipped in enumerate(mode.skip):
            if skipped not in ids:
                problems.append(
                    (("modes", mode_name, "skip", index), f"unknown node {skipped!r} ({known})")
                )
            elif skipped == workflow.start_node(mode_name):
                problems.append(
                    (("modes", mode_name, "skip", index), "a mode cannot skip its start node")
                )
        if mode.start is not None and mode.start not in ids:
            problems.append((("modes", mode_name, "start"), f"unknown node {mode.start!r}"))
    if workflow.start is not None and workflow.start not in ids:
        problems.append((("start",), f"unknown node {workflow.start!r} ({known})"))
    labels = set(_all_labels(workflow))
    for name, command in workflow.commands.items():
        where: Location = ("commands", name)
        if command.start is not None and command.start not in ids:
            problems.append(((*where, "start"), f"unknown node {command.start!r} ({known})"))
        for field in ("runs_in", "stops_at"):
            for index, label in enumerate(getattr(command, field)):
                if label not in labels:
                    problems.append(
                        (
                            (*where, field, index),
                            f"unknown label {label!r} (labels: {', '.join(sorted(labels))})",
                        )
                    )
    for label in workflow.labels:
        if label not in labels:
            problems.append((("labels", label), f"no node has the label {label!r}"))
    problems += _skipped_producers(workflow)
    return problems


def _all_labels(workflow: Workflow) -> list[str]:
    return list(dict.fromkeys(workflow.label_of(path) for path, _ in workflow.walk()))


def _produced(workflow: Workflow) -> set[str]:
    return {o.file for _, n in workflow.walk() if isinstance(n, AgentNode) for o in n.outputs}


def _skipped_producers(workflow: Workflow) -> list[Problem]:
    """A mode must not skip every producer of a hard prerequisite of a node it runs."""
    problems: list[Problem] = []
    for mode_name, mode in workflow.modes.items():
        skipped = set(mode.skip)
        for node in workflow.nodes:
            if node.id in skipped:
                continue
            for needed in node.prerequisites.hard:
                producers = [
                    n.id
                    for n in workflow.nodes
                    if isinstance(n, AgentNode) and any(o.file == needed for o in n.outputs)
                ]
                if producers and skipped.issuperset(producers):
                    index = mode.skip.index(producers[0])
                    problems.append(
                        (
                            ("modes", mode_name, "skip", index),
                            f"mode {mode_name!r} skips {', '.join(producers)}, which produces "
                            f"{needed!r}, a hard prerequisite of {node.id!r}",
                        )
                    )
    return problems


def _scope(
    workflow: Workflow,
    scope: tuple[Any, ...],
    base: Location,
    root: Workflow,
    *,
    top: bool,
    in_parallel: bool = False,
) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for index, node in enumerate(scope):
        if node.id in seen:
            problems.append(
                (
                    (*base, index, "id"),
                    f"duplicate node id {node.id!r} (also {_dotted((*base, seen[node.id]))})",
                )
            )
        seen.setdefault(node.id, index)
    if problems:
        return problems  # the graph is ambiguous; later checks would mislead
    ids = [n.id for n in scope]
    produced = _produced(root)
    for index, node in enumerate(scope):
        where: Location = (*base, index)
        problems += _node_problems(root, scope, index, where, ids, produced)
        if isinstance(node, ForeachNode):
            if in_parallel and node.parallel > 1:
                problems.append(
                    ((*where, "parallel"), "a parallel foreach cannot run inside another one")
                )
            if node.parallel > 1:
                problems += _parallel_problems(root, node, where)
            problems += _scope(
                workflow,
                tuple(node.body),
                (*where, "body"),
                root,
                top=False,
                in_parallel=in_parallel or node.parallel > 1,
            )
        elif in_parallel and isinstance(node, GateNode):
            decision = node.decision or node.id
            if not re.search(r"\{\{\s*task\s*\}\}", decision):
                problems.append(
                    (
                        (*where, "decision"),
                        f"gate {node.id!r} runs inside a parallel foreach: its decision id "
                        f"must name the item (e.g. decision: {node.id}-{{{{ task }}}}) so items "
                        "running at once do not share one decision",
                    )
                )
    if not problems:
        problems += _reachability(root, scope, base, top=top)
    return problems


def _parallel_problems(workflow: Workflow, node: ForeachNode, where: Location) -> list[Problem]:
    """A parallel foreach: who repairs a merge conflict must be a role that can write."""
    if node.isolation != "worktree" or node.conflicts.attempts == 0:
        return []
    roles = ", ".join(workflow.roles)
    role = node.conflicts.role or next(
        (n.executor for n in node.body if isinstance(n, AgentNode) and n.executor), None
    )
    if role is None:
        return [
            (
                (*where, "conflicts", "role"),
                "no role resolves merge conflicts: name one (conflicts: {role: ...}) or set "
                "conflicts: {attempts: 0}",
            )
        ]
    if role not in workflow.roles:
        return [((*where, "conflicts", "role"), f"unknown role {role!r} (roles: {roles})")]
    if workflow.roles[role].access != "write":
        return [
            (
                (*where, "conflicts", "role"),
                f"role {role!r} resolves merge conflicts but has access "
                f"{workflow.roles[role].access}; it needs write access",
            )
        ]
    return []


def _node_problems(
    workflow: Workflow,
    scope: tuple[Any, ...],
    index: int,
    where: Location,
    ids: list[str],
    produced: set[str],
) -> list[Problem]:
    node = scope[index]
    problems: list[Problem] = []
    known = ", ".join(ids)
    targets_ok = {*ids, BLOCKED_TARGET}
    for position, target in enumerate(node.also):
        if target not in ids:
            problems.append(((*where, "also", position), f"unknown node {target!r} ({known})"))
    for outcome, target in node.on.items():
        if target not in targets_ok:
            problems.append(((*where, "on", outcome), f"unknown node {target!r} ({known})"))
    possible = set(outcomes(node))
    for outcome in node.on:
        if outcome not in possible:
            problems.append(
                (
                    (*where, "on", outcome),
                    f"node {node.id!r} never ends with outcome {outcome!r} "
                    f"(its outcomes: {', '.join(sorted(possible)) or 'none'})",
                )
            )
    for outcome in outcomes(node):
        if target_of(scope, index, outcome) is None:
            problems.append(
                ((*where, "on"), f"outcome {outcome!r} of node {node.id!r} is not mapped")
            )
    for field, files in (("hard", node.prerequisites.hard), ("soft", node.prerequisites.soft)):
        problems += _file_refs(files, (*where, "prerequisites", field), produced)
    if isinstance(node, AgentNode):
        problems += _agent_problems(workflow, node, where, produced)
    elif isinstance(node, GateNode):
        for name, choice in node.choices.items():
            if choice.to not in targets_ok:
                problems.append(
                    ((*where, "choices", name), f"unknown node {choice.to!r} ({known})")
                )
        timeout = node.timeout.choice if node.timeout is not None else None
        for field, chosen in (("default", node.default), ("timeout", timeout)):
            if chosen is not None and chosen not in node.choices:
                problems.append(
                    (
                        (*where, field),
                        f"{chosen!r} is not one of the choices ({', '.join(node.choices)})",
                    )
                )
    elif isinstance(node, EndNode) and node.on:
        problems.append(((*where, "on"), "an end node has no way out"))
    return problems


def _agent_problems(
    workflow: Workflow, node: AgentNode, where: Location, produced: set[str]
) -> list[Problem]:
    problems: list[Problem] = []
    roles = ", ".join(workflow.roles)
    reviewers = node.all_reviewers()
    if node.executor is None and node.start_with == "execute":
        problems.append(((*where, "executor"), "an agent node needs an 'executor' role"))
    if node.executor_selector is not None and node.executor is None:
        problems.append(
            ((*where, "executor_selector"), "name the 'executor' role the chosen agent plays")
        )
    if node.executor is not None and node.executor not in workflow.roles:
        problems.append(((*where, "executor"), f"unknown role {node.executor!r} (roles: {roles})"))
    if node.start_with == "review" and not reviewers:
        problems.append(((*where, "start_with"), "a node starting with review needs reviewers"))
    if node.executor is None and any(a == REVISE for r in reviewers for a in r.on.values()):
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
        return [(where, f"unknown role {role!r} (roles: {', '.join(workflow.roles)})")]
    if workflow.roles[role].access != "read-only":
        return [(where, f"reviewer role {role!r} must be read-only (least privilege)")]
    return []


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


def _file_refs(files: Iterable[str], where: Location, produced: set[str]) -> list[Problem]:
    return [
        (
            (*where, position),
            f"{name!r} is not an output of any node "
            f"(outputs: {', '.join(sorted(produced)) or 'none'})",
        )
        for position, name in enumerate(files)
        if name not in produced
    ]


def _reachability(
    workflow: Workflow, scope: tuple[Any, ...], base: Location, *, top: bool
) -> list[Problem]:
    problems: list[Problem] = []
    index_of = {n.id: i for i, n in enumerate(scope)}
    graph = {n.id: [t for _, t in edges(scope, i)] for i, n in enumerate(scope)}
    starts = [scope[0].id]
    if top:
        starts = [workflow.start_node(m) for m in workflow.modes if m in workflow.modes]
        starts += [c.start for c in workflow.commands.values() if c.start]
        starts.append(workflow.start or scope[0].id)
        for _, mode in workflow.modes.items():
            for skipped in mode.skip:  # a skipped node's successor is reached through it
                starts.append(skipped)
    reachable = _closure(starts, graph)
    for node in scope:
        if node.id not in reachable:
            problems.append(
                (
                    (*base, index_of[node.id], "id"),
                    f"node {node.id!r} is unreachable from the start node {starts[-1]!r}",
                )
            )
    for node in scope:
        closure = _closure([node.id], graph)
        if BLOCKED_TARGET in closure or any(
            isinstance(scope[index_of[n]], EndNode) for n in closure if n in index_of
        ):
            continue
        if isinstance(node, GateNode) and not node.choices:
            continue
        problems.append(
            (
                (*base, index_of[node.id], "on"),
                f"node {node.id!r} has no way to finish (no end node is reachable)",
            )
        )
    return problems


def _closure(start: list[str], graph: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(start)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(graph.get(name, ()))
    return seen


def _plugin_problems(workflow: Workflow, base: Location) -> list[Problem]:
    problems: list[Problem] = []

    def need(group: str, name: str | None, where: Location) -> None:
        if name is not None and not plugins.exists(group, name):
            installed = ", ".join(plugins.names(group)) or "none"
            kind = group.removesuffix("s")
            problems.append((where, f"unknown {kind} plug-in {name!r} (installed: {installed})"))

    need("views", workflow.view.plugin, ("view",))
    problems += _view_paths(workflow)
    for where, node in _located(workflow.nodes, base):
        need("predicates", node.when, (*where, "when"))
        if isinstance(node, AgentNode):
            if node.executor_selector is not None:
                need("selectors", node.executor_selector.plugin, (*where, "executor_selector"))
            if node.checks_from is not None:
                need("parsers", node.checks_from.parser, (*where, "checks_from", "parser"))
            for position, reviewer in enumerate(node.reviewers):
                at: Location = (*where, "reviewers", position)
                need("readers", reviewer.reader, (*at, "reader"))
                need("predicates", reviewer.when, (*at, "when"))
                if reviewer.selector is not None:
                    need("selectors", reviewer.selector.plugin, (*at, "selector"))
            for position, output in enumerate(node.outputs):
                need("parsers", output.parser, (*where, "outputs", position, "parser"))
            for field in ("context", "on_enter", "after_execute", "after_verdict"):
                refs: tuple[PluginRef, ...] = getattr(node, field)
                group = "context" if field == "context" else "actions"
                for position, ref in enumerate(refs):
                    need(group, ref.plugin, (*where, field, position))
        elif isinstance(node, ForeachNode):
            need("parsers", node.items.parser, (*where, "items", "parser"))
        elif isinstance(node, CheckNode) and node.commands_from is not None:
            need("parsers", node.commands_from.parser, (*where, "commands_from", "parser"))
        elif isinstance(node, ActionNode):
            need("actions", node.action, (*where, "action"))
        elif isinstance(node, GateNode):
            need("predicates", node.recommend, (*where, "recommend"))
            need("predicates", node.classify, (*where, "classify"))
            need("predicates", node.detail, (*where, "detail"))
            for name, choice in node.choices.items():
                need("predicates", choice.when, (*where, "choices", name, "when"))
    return problems


#: Setting names of a view that name files or folders (they must stay in the item folder).
_PATH_SETTING = ("_file", "_dir", "_path", "_folder")


def _view_paths(workflow: Workflow) -> list[Problem]:
    """The files a view writes stay in the item's folder: no absolute path, no ``..``."""
    problems: list[Problem] = []
    for key, value in workflow.view.with_.items():
        if not str(key).endswith(_PATH_SETTING):
            continue
        where: Location = ("view", "with", str(key))
        if not isinstance(value, str):
            problems.append((where, "must be a file name inside the work item's folder"))
            continue
        try:
            confined_path(value)
        except ValueError:
            problems.append(
                (where, f"{value!r} must be a relative path inside the work item's folder")
            )
    return problems


def _located(nodes: Iterable[Any], base: Location) -> Iterator[tuple[Location, AnyNode]]:
    for index, node in enumerate(nodes):
        where: Location = (*base, index)
        yield where, node
        if isinstance(node, ForeachNode):
            yield from _located(node.body, (*where, "body"))


def _dotted(loc: Location) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def main_path(workflow: Workflow, mode: str) -> list[str]:
    """The labels a run in ``mode`` passes through when every step succeeds, in order (top
    level only): agents and checks pass, actions and loops are done, a gate takes its
    default choice, else its first; the mode's skipped nodes are passed over."""
    scope = list(workflow.nodes)
    index = {node.id: i for i, node in enumerate(scope)}
    skipped = set(workflow.modes[mode].skip) if mode in workflow.modes else set()
    labels: list[str] = []
    seen: set[str] = set()
    at: str | None = workflow.start_node(mode)
    while at is not None and at in index and at not in seen:
        seen.add(at)
        i = index[at]
        node = scope[i]
        name = node.label or node.id
        shown = node.id not in skipped and not (isinstance(node, EndNode) and not node.label)
        if shown and name not in labels:
            labels.append(name)
        if isinstance(node, EndNode):
            break
        if isinstance(node, GateNode):
            choice = node.default or next(iter(node.choices), None)
            at = node.choices[choice].to if choice is not None else None
        elif isinstance(node, ActionNode):
            found = action_outcomes(node.action)
            at = target_of(scope, i, "done" if "done" in found else found[0])
        else:
            outcome = "done" if isinstance(node, ForeachNode) else "pass"
            at = target_of(scope, i, outcome)
    return labels
