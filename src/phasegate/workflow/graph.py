"""Whole-workflow rules checked on load: names, references, plug-ins and the node graph.

Each problem is returned as ``(location, message)`` where the location is a
tuple of keys/indices into the YAML document, so the loader can name the file,
line and field. The rules: node ids unique in their scope; every outcome of
every node mapped (explicitly or by a documented default); every gate choice
leads somewhere; every node reachable; a terminal reachable from each node;
``UNCLEAR`` mapped and never to ``pass``; every role, label and plug-in known.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from typing import Any

from phasegate import plugins
from phasegate.workflow.model import (
    ActionNode,
    AgentNode,
    AnyNode,
    CheckNode,
    EndNode,
    ForeachNode,
    GateNode,
    Workflow,
)
from phasegate.workflow.node_rules import (
    Location,
    Problem,
    mode_problems,
    node_problems,
    unknown_node,
    unknown_role,
)
from phasegate.workflow.parts import BLOCKED_TARGET, ItemsSource, PluginRef, confined_path
from phasegate.workflow.routing import action_outcomes, edges, target_of


def graph_problems(workflow: Workflow, base: Location = ("nodes",)) -> list[Problem]:
    """Every rule the workflow breaks, in document order."""
    problems: list[Problem] = []
    problems += _top_level(workflow)
    problems += _scope(workflow, tuple(workflow.nodes), base, workflow, top=True)
    problems += _plugin_problems(workflow, base)
    problems += _decision_problems(workflow, base)
    return problems


#: The decisions the engine asks itself (a transition warning, a half-done phase, a budget
#: cap): a gate's decision of the same id would be answered by, or answer, the other.
ENGINE_DECISIONS = ("transition-warning", "partial-phase", "budget")


def _decision_problems(workflow: Workflow, base: Location) -> list[Problem]:
    """Two gates asking under one decision id share its answer: the second is never asked
    (it takes the first one's answer, a choice of another question). Refused, as is a
    decision id the engine asks under itself."""
    problems: list[Problem] = []
    first: dict[str, str] = {}
    for where, node in _located(workflow.nodes, base):
        if not isinstance(node, GateNode):
            continue
        template = node.decision_template("body" in where)
        key = re.sub(r"\{\{\s*(\w+)\s*\}\}", r"{{ \1 }}", template)
        at: Location = (*where, "decision") if node.decision is not None else (*where, "id")
        if key in ENGINE_DECISIONS or key.startswith("conflict-"):
            problems.append(
                (
                    at,
                    f"gate {node.id!r} asks under the decision id {key!r}, which phasegate "
                    "asks its own decisions under (transition-warning, partial-phase, budget, "
                    "conflict-*): set another decision id",
                )
            )
        elif key in first:
            problems.append(
                (
                    at,
                    f"gate {node.id!r} asks under the decision id {key!r}, as gate "
                    f"{first[key]!r} does: one answer would answer both (the second gate "
                    "would never be asked); give each gate its own decision id",
                )
            )
        else:
            first[key] = node.id
    return problems


def _top_level(workflow: Workflow) -> list[Problem]:
    problems: list[Problem] = []
    ids = [n.id for n in workflow.nodes]
    written = "default_mode" in workflow.model_fields_set
    problems += mode_problems(workflow.default_mode, list(workflow.modes), written)
    known = ", ".join(ids)
    for mode_name, mode in workflow.modes.items():
        for index, skipped in enumerate(mode.skip):
            if skipped not in ids:
                problems.append((("modes", mode_name, "skip", index), unknown_node(skipped, known)))
            elif skipped == workflow.start_node(mode_name):
                problems.append(
                    (("modes", mode_name, "skip", index), "a mode cannot skip its start node")
                )
        if mode.start is not None and mode.start not in ids:
            problems.append((("modes", mode_name, "start"), unknown_node(mode.start, known)))
    if workflow.start is not None and workflow.start not in ids:
        problems.append((("start",), unknown_node(workflow.start, known)))
    labels = set(_all_labels(workflow))
    for name, command in workflow.commands.items():
        where: Location = ("commands", name)
        if command.start is not None and command.start not in ids:
            problems.append(((*where, "start"), unknown_node(command.start, known)))
        for field in ("runs_in", "stops_at"):
            for index, label in enumerate(getattr(command, field)):
                if label not in labels:
                    problems.append(
                        (
                            (*where, field, index),
                            f"unknown label {label!r} (labels: {', '.join(sorted(labels))})",
                        )
                    )
    undescribed = {
        n.label: n.id for _, n in workflow.walk() if n.label and n.label not in workflow.labels
    }
    for label in workflow.labels:
        if label not in labels:
            message = f"no node has the label {label!r}"
            close = difflib.get_close_matches(label, sorted(undescribed), n=1)
            if close:
                message += (
                    f"; node {undescribed[close[0]]!r} has the label {close[0]!r}: write the "
                    "same name in both places"
                )
            else:
                message += f" (give a node label: {label}, or remove it from labels)"
            problems.append((("labels", label), message))
    problems += _skipped_producers(workflow)
    return problems


def _all_labels(workflow: Workflow) -> list[str]:
    found = [workflow.label_of(path) for path, _ in workflow.walk()]
    # A node's own label counts even when its path names another node (a duplicate id,
    # reported as such): else its label would be reported unused too.
    found += [node.label for _, node in workflow.walk() if node.label]
    return list(dict.fromkeys(found))


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
            # A foreach's items file is as hard a need as a hard prerequisite.
            needs = [(needed, "a hard prerequisite of") for needed in node.prerequisites.hard]
            if isinstance(node, ForeachNode) and node.items.file is not None:
                needs.append((node.items.file, "the items file of"))
            for needed, what in needs:
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
                            f"{needed!r}, {what} {node.id!r}",
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
        problems += node_problems(root, scope, index, where, ids, produced)
        if isinstance(node, EndNode):
            problems += _end_fields(node, where, top=top)
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
        elif not top and isinstance(node, GateNode):
            decision = node.decision_template(True)
            if not re.search(r"\{\{\s*task\s*\}\}", decision):
                why = (
                    "so items running at once do not share one decision"
                    if in_parallel
                    else "so each item is asked on its own (one answer would do for every item)"
                )
                problems.append(
                    (
                        (*where, "decision"),
                        f"gate {node.id!r} runs inside a {'parallel ' if in_parallel else ''}"
                        f"foreach: its decision id must name the item (e.g. decision: "
                        f"{node.id}-{{{{ task }}}}) {why}",
                    )
                )
    if not problems:
        problems += _reachability(root, scope, base, top=top)
    return problems


def _end_fields(node: EndNode, where: Location, *, top: bool) -> list[Problem]:
    """Fields of an end node that have no effect where it is: ``status`` and ``message``
    end the whole item (top level only), ``outcome`` ends one item of a foreach body."""
    written = node.model_fields_set
    if top:
        if "outcome" not in written:
            return []
        return [
            (
                (*where, "outcome"),
                f"end node {node.id!r} is at the top level: 'outcome' is what an item of a "
                "foreach ends with, used only inside a foreach body (here, 'status' says how "
                "the work item ends)",
            )
        ]
    return [
        (
            (*where, field),
            f"end node {node.id!r} ends one item of a foreach body: {field!r} is used only "
            "at the top level, where the whole work item ends (here, 'outcome' says how the "
            "item ends)",
        )
        for field in ("status", "message")
        if field in written
    ]


def _parallel_problems(workflow: Workflow, node: ForeachNode, where: Location) -> list[Problem]:
    """A parallel foreach: who repairs a merge conflict must be a role that can write."""
    if node.isolation != "worktree" or node.conflicts.attempts == 0:
        return []
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
        return [((*where, "conflicts", "role"), unknown_role(role, workflow.roles))]
    if workflow.roles[role].access != "write":
        return [
            (
                (*where, "conflicts", "role"),
                f"role {role!r} resolves merge conflicts but has access "
                f"{workflow.roles[role].access}; it needs write access",
            )
        ]
    return []


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
    # A start that names no node is reported as such: every node would be unreachable too.
    known_starts = all(start in index_of for start in starts)
    for node in scope:
        if known_starts and node.id not in reachable:
            problems.append(
                (
                    (*base, index_of[node.id], "id"),
                    f"node {node.id!r} is unreachable from the start node {starts[-1]!r} "
                    "(lead an outcome or a gate choice to it, or remove it)",
                )
            )
    for node in scope:
        closure = _closure([node.id], graph)
        if BLOCKED_TARGET in closure or any(
            isinstance(scope[index_of[n]], EndNode) for n in closure if n in index_of
        ):
            continue
        problems.append(
            (
                (*base, index_of[node.id], "on"),
                f"node {node.id!r} has no way to finish (no end node is reachable): map one "
                "of its outcomes to an end node, or to a node that leads to one",
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
            guess = difflib.get_close_matches(name, plugins.names(group), n=1)
            problems.append(
                (
                    where,
                    f"unknown {kind} plug-in {name!r} (installed: {installed})"
                    + (f"; did you mean {guess[0]!r}?" if guess else ""),
                )
            )

    def source(items: ItemsSource, where: Location) -> None:
        """A parser over a file: known, and given the file when it reads one."""
        need("parsers", items.parser, (*where, "parser"))
        if items.file is not None or not plugins.exists("parsers", items.parser):
            return
        if getattr(plugins.load("parsers", items.parser), "needs_file", False):
            problems.append(
                (
                    where,
                    f"the {items.parser} parser reads a file: name it ({{parser: "
                    f"{items.parser}, file: FILE}}, FILE an output of an earlier node)",
                )
            )

    need("views", workflow.view.plugin, ("view",))
    problems += _view_paths(workflow)
    for where, node in _located(workflow.nodes, base):
        need("predicates", node.when, (*where, "when"))
        if isinstance(node, AgentNode):
            if node.executor_selector is not None:
                need("selectors", node.executor_selector.plugin, (*where, "executor_selector"))
            if node.checks_from is not None:
                source(node.checks_from, (*where, "checks_from"))
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
            source(node.items, (*where, "items"))
        elif isinstance(node, CheckNode) and node.commands_from is not None:
            source(node.commands_from, (*where, "commands_from"))
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
