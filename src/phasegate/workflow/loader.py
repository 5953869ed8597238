"""Load a workflow YAML file, validate it, and report problems by file, line and field.

A workflow file is untrusted input: it is read with a size limit, YAML
aliases may not expand beyond a bound (an "alias bomb" of a few hundred bytes
would otherwise cost every command seconds and hundreds of MB), nesting is
bounded, every path it names stays inside the repository, and prompt
templates are resolved inside their folders (a symlink out of them is refused).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, Tag, ValidationError

from phasegate.errors import WorkflowError
from phasegate.workflow.graph import graph_problems
from phasegate.workflow.loaded import LoadedWorkflow as LoadedWorkflow
from phasegate.workflow.model import (
    ActionNode,
    AgentNode,
    CheckNode,
    ForeachNode,
    GateNode,
    Workflow,
)
from phasegate.workflow.node_rules import Location
from phasegate.workflow.parts import NAME_PATTERN, UNION_TAGS
from phasegate.workflow.phases import LinearWorkflow, linear_problems, node_location, to_nodes
from phasegate.workflow.prompts import (
    CALL_VARIABLES,
    FOREACH_VARIABLES,
    GATE_VARIABLES,
    ITEMS_FILE_VARIABLES,
    LABEL_NEXT_VARIABLES,
    REFUSAL_VARIABLES,
    TEMPLATE_VARIABLES,
    find_template,
    malformed_placeholders,
    placeholder_places,
    unknown_placeholders,
)
from phasegate.workflow.sources import prompt_search_path
from phasegate.yaml_errors import flow_comma_hint, yaml_problem

#: Bounds on a workflow file: bytes, YAML values after alias expansion, nesting depth.
MAX_FILE_BYTES = 1_000_000
MAX_VALUES = 200_000
MAX_DEPTH = 64
_NODE_KINDS = ("agent", "gate", "foreach", "check", "action", "end")
_UNION_TAGS = frozenset({*_NODE_KINDS, *UNION_TAGS})


class WorkflowProblems(WorkflowError):
    """A workflow file breaks one or more rules; ``problems`` lists them all."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        problems = sorted(problems, key=lambda problem: _problem_order(path, problem))
        more = (
            f" (and {len(problems) - 1} more: phasegate validate {path} lists them)"
            if len(problems) > 1
            else ""
        )
        super().__init__(f"{problems[0]}{more}")
        self.path = path
        self.problems = problems


def _problem_order(path: Path, problem: str) -> tuple[int, int]:
    """Where ``problem`` sorts: the file's own problems by line, then other files' ones."""
    rest = problem.removeprefix(f"{path}:")
    if rest == problem:
        return (1, 0)
    line = re.match(r"(\d+):", rest)
    return (0, int(line.group(1)) if line else 0)


def read_yaml(path: Path, what: str = "workflow file") -> Any:
    """Parse a YAML file defensively (size, aliases, depth); WorkflowError names the file."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise WorkflowError(
                f"{path}: the {what} is {size} bytes; at most {MAX_FILE_BYTES} are read"
            )
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowError(f"{path}: cannot read {what} ({exc})") from None
    _check_depth(path, text)
    try:
        document = YAML(typ="rt").load(text)
    except YAMLError as exc:
        raise WorkflowError(yaml_problem(path, exc)) from None
    except RecursionError:
        raise WorkflowError(f"{path}: invalid YAML: nested too deeply") from None
    _check_size(path, document)
    return document


def _check_depth(path: Path, text: str) -> None:
    """Refuse text nesting deeper than :data:`MAX_DEPTH`, found by the YAML scanner alone.

    Building the document of deeply nested text recurses once per level and takes
    seconds before Python's recursion limit ends it; the scanner reads tokens in a
    loop, so a hostile file is refused in milliseconds.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml import tokens as t
    from ruamel.yaml.error import YAMLError

    opening = (
        t.FlowSequenceStartToken,
        t.FlowMappingStartToken,
        t.BlockSequenceStartToken,
        t.BlockMappingStartToken,
    )
    closing = (t.FlowSequenceEndToken, t.FlowMappingEndToken, t.BlockEndToken)
    depth = 0
    try:
        for token in YAML(typ="rt").scan(text):
            if isinstance(token, opening):
                depth += 1
                if depth > MAX_DEPTH:
                    raise WorkflowError(
                        f"{path}: the YAML nests deeper than {MAX_DEPTH} levels; refused"
                    )
            elif isinstance(token, closing):
                depth -= 1
    except YAMLError:
        return  # not valid YAML: loading it reports where


def _check_size(path: Path, document: Any) -> None:
    """Refuse documents whose aliases expand past :data:`MAX_VALUES` or that nest too deep."""
    count = 0
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise WorkflowError(
                f"{path}: the YAML expands to more than {MAX_VALUES} values "
                "(aliases repeating aliases?); refused"
            )
        if depth > MAX_DEPTH:
            raise WorkflowError(f"{path}: the YAML nests deeper than {MAX_DEPTH} levels; refused")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def load_workflow(
    path: Path, source: str = "repo", prompt_overrides: Path | None = None
) -> LoadedWorkflow:
    """Read, validate and return the workflow in ``path``."""
    return load_workflow_data(path, source, prompt_overrides)[0]


def load_workflow_data(
    path: Path, source: str = "repo", prompt_overrides: Path | None = None
) -> tuple[LoadedWorkflow, dict[str, Any]]:
    """:func:`load_workflow`, and the plain data its :class:`Workflow` was validated from
    (``Workflow.model_validate`` of that data builds the same workflow again)."""
    try:
        document = read_yaml(path)
    except WorkflowError as exc:  # one problem, listed as the others are (validate --json)
        raise WorkflowProblems(path, [str(exc)]) from None
    if document is None:
        raise WorkflowProblems(
            path,
            [
                f"{path}: the workflow file is empty (a workflow is a mapping: name, modes, "
                "roles, nodes...; see docs/workflows.md)"
            ],
        )
    if not isinstance(document, dict):
        raise WorkflowProblems(
            path,
            [
                f"{path}:{_first_line(document)}: a workflow file must hold a mapping at the "
                f"top level (name: ..., nodes: ...), not {_kind_of(document).split(' (')[0]}"
            ],
        )
    plain = _plain(document)
    linear = "phases" in plain and "nodes" not in plain
    workflow, data = _validated(path, document, plain, linear)
    problems = [
        _located(path, document, node_location(loc) if linear else loc, msg)
        for loc, msg in graph_problems(workflow)
    ]
    if workflow.name != path.stem:
        problems.insert(
            0,
            _located(
                path,
                document,
                ("name",),
                _name_mismatch(workflow.name, path),
            ),
        )
    search = _prompt_path(path, workflow.name, prompt_overrides)
    if workflow.name == path.stem:
        # Under a name that is not the file's, the templates are looked for in the wrong
        # folders: every one would be reported missing for the one mistake named above.
        problems += _template_problems(path, document, workflow, search, linear)
    problems += [
        _text_located(path, document, node_location(loc) if linear else loc, message, text, at)
        for loc, message, text, at in placeholder_problems(workflow)
    ]
    if problems:
        raise WorkflowProblems(path, problems)
    return LoadedWorkflow(workflow, path, source, search), data


def _name_mismatch(name: str, path: Path) -> str:
    """A workflow whose ``name`` is not its file's: what to write instead."""
    fix = f"rename the file to {name}.yaml"
    if NAME_PATTERN.match(path.stem):
        fix += f", or write name: {path.stem}"
    return f"name {name!r} must match the file name {path.stem!r} ({fix})"


def _validated(
    path: Path, document: Any, plain: dict[str, Any], linear: bool
) -> tuple[Workflow, dict[str, Any]]:
    if linear:
        try:
            phases = LinearWorkflow.model_validate(plain)
        except ValidationError as exc:
            problems = _pydantic_problems(path, document, exc, model=LinearWorkflow)
            raise WorkflowProblems(path, problems) from None
        problems = [_located(path, document, loc, msg) for loc, msg in linear_problems(phases)]
        if phases.name != path.stem:
            problems.insert(
                0,
                _located(
                    path,
                    document,
                    ("name",),
                    _name_mismatch(phases.name, path),
                ),
            )
        if problems:
            raise WorkflowProblems(path, problems)
        plain = to_nodes(phases)
    try:
        return Workflow.model_validate(plain), plain
    except ValidationError as exc:
        problems = _pydantic_problems(
            path, document, exc, node_location if linear else None, model=Workflow
        )
        raise WorkflowProblems(path, problems) from None


def _prompt_path(path: Path, name: str, overrides: Path | None) -> tuple[Path, ...]:
    return prompt_search_path(path, name, overrides)


def templates_of(workflow: Workflow) -> list[tuple[Location, str, str]]:
    """``(location, field, template)`` of every prompt template the workflow's agents use."""
    wanted: list[tuple[Location, str, str]] = []

    def visit(nodes: Any, base: Location) -> None:
        for index, node in enumerate(nodes):
            where: Location = (*base, index)
            if isinstance(node, AgentNode):
                if node.executor is not None:
                    if node.start_with == "execute" or not node.revise_prompt or node.prompt:
                        wanted.append((where, "prompt", node.prompt or f"{node.id}.md"))
                    if node.revise_prompt:
                        wanted.append((where, "revise_prompt", node.revise_prompt))
                if node.reviewer is not None:
                    wanted.append(
                        (where, "reviewer_prompt", node.reviewer_prompt or f"{node.reviewer}.md")
                    )
                for position, reviewer in enumerate(node.reviewers):
                    default = f"{reviewer.role}.md" if reviewer.role else "reviewer.md"
                    wanted.append(
                        ((*where, "reviewers", position), "prompt", reviewer.prompt or default)
                    )
            body = getattr(node, "body", None)
            if body is not None:
                visit(body, (*where, "body"))

    visit(workflow.nodes, ("nodes",))
    return wanted


def texts_of(workflow: Workflow) -> list[tuple[Location, str, frozenset[str]]]:
    """``(location, text, names it may use)`` of every text of the workflow whose
    placeholders are filled when it is used (a gate's question, a refusal's message...)."""
    found: list[tuple[Location, str, frozenset[str]]] = []
    for label, info in workflow.labels.items():
        found.append((("labels", label, "next"), info.next, LABEL_NEXT_VARIABLES))
    for command, settings in workflow.commands.items():
        for label, refusal in settings.otherwise.items():
            where: Location = ("commands", command, "otherwise", label, "message")
            found.append((where, refusal.message, REFUSAL_VARIABLES))

    def visit(nodes: Any, base: Location, in_foreach: bool) -> None:
        # The foreach item's names are filled only inside a foreach body.
        item_names = frozenset() if in_foreach else FOREACH_VARIABLES
        calls = frozenset(CALL_VARIABLES) - item_names
        gate = GATE_VARIABLES - item_names
        items_file = ITEMS_FILE_VARIABLES - item_names
        for index, node in enumerate(nodes):
            at: Location = (*base, index)
            if isinstance(node, GateNode):
                known = gate | {"detail"} if node.detail else gate
                if node.decision is not None:
                    found.append(((*at, "decision"), node.decision, known))
                found.append(((*at, "question"), node.question, known))
                found.extend(((*at, "show", i), f, known) for i, f in enumerate(node.show))
                found.append(((*at, "unanswered", "message"), node.unanswered.message, known))
                for name, choice in node.choices.items():
                    found.append(((*at, "choices", name, "description"), choice.description, known))
                    found.append(((*at, "choices", name, "unavailable"), choice.unavailable, known))
            elif isinstance(node, AgentNode):
                found.extend(((*at, "inputs", i), f.file, calls) for i, f in enumerate(node.inputs))
                found.extend(
                    ((*at, "outputs", i), f.file, calls) for i, f in enumerate(node.outputs)
                )
            elif isinstance(node, ForeachNode) and node.items.file is not None:
                found.append(((*at, "items", "file"), node.items.file, items_file))
            body = getattr(node, "body", None)
            if body is not None:
                visit(body, (*at, "body"), True)

    visit(workflow.nodes, ("nodes",), False)
    return found


#: A known name in single braces (``{task}``), not part of a ``{{ name }}``: never filled.
_SINGLE_BRACES = re.compile(r"(?<!\{)\{\s*([a-z_]+)\s*\}(?!\})")


def placeholder_problems(
    workflow: Workflow,
) -> list[tuple[Location, str, str, tuple[int, int]]]:
    """``(location, message, text, (line, column))`` of every placeholder of the workflow's
    texts that is never filled where the text is used (it would be shown empty): the line
    and column (1-based) are the first such placeholder's in the text."""
    problems: list[tuple[Location, str, str, tuple[int, int]]] = []
    for loc, text, known in texts_of(workflow):
        for match in _SINGLE_BRACES.finditer(text):
            if match.group(1) in known | FOREACH_VARIABLES:
                before = text[: match.start()]
                place = (before.count("\n") + 1, match.start() - before.rfind("\n"))
                message = (
                    f"{match.group(0)!r} is never filled: a placeholder takes double braces "
                    f"({{{{ {match.group(1)} }}}})"
                )
                problems.append((loc, message, text, place))
        if "{{" not in text:
            continue
        for line, column, problem in malformed_placeholders(text):
            problems.append((loc, problem, text, (line, column)))
        bad = unknown_placeholders(text, known)
        if bad:
            first = placeholder_places(text, bad)[0][:2]
            names = ", ".join(repr(name) for name in bad)
            outside = [name for name in bad if name in FOREACH_VARIABLES]
            hint = (
                f"; {' and '.join(repr(n) for n in outside)} only inside a foreach body"
                if outside
                else ""
            )
            if "detail" in bad and known - FOREACH_VARIABLES == GATE_VARIABLES - FOREACH_VARIABLES:
                hint += "; 'detail' only with the gate's detail: a predicate plug-in to fill it"
            typos = [n for n in bad if n not in FOREACH_VARIABLES and n != "detail"]
            guesses = [
                f"{close[0]!r} for {name!r}" if len(bad) > 1 else repr(close[0])
                for name in typos
                for close in [difflib.get_close_matches(name, sorted(known), n=1)]
                if close
            ]
            problems.append(
                (
                    loc,
                    f"unknown placeholder{'s' if len(bad) > 1 else ''} {names} "
                    f"(known here: {', '.join(sorted(known))}{hint})"
                    + (f"; did you mean {', '.join(guesses)}?" if guesses else ""),
                    text,
                    first,
                )
            )
    return problems


def inline_check_hint(name: str) -> str:
    """How to run ``name`` as written: a check command given in the workflow itself."""
    import json

    return f"{{name: check, run: {json.dumps(name)}}}"


def unconfigured_checks(path: Path, workflow: Workflow, commands: Collection[str]) -> list[str]:
    """One line (file:line: field: why) per name in a check node's ``run`` that is not
    among ``commands`` (the repository's configured ones): that check stops the run
    blocked when it runs."""
    found: list[tuple[Location, str]] = []
    configured = ", ".join(sorted(commands)) or "none"

    def visit(nodes: Any, base: Location) -> None:
        for index, node in enumerate(nodes):
            at: Location = (*base, index)
            if isinstance(node, CheckNode):
                for i, ref in enumerate(node.run):
                    if not isinstance(ref, str) or ref in commands:
                        continue
                    fix = (
                        f"to run it as written, write it inline: {inline_check_hint(ref)}"
                        if any(c.isspace() for c in ref)
                        else f"set commands.{ref} in .phasegate/config.yaml, or write it "
                        f"inline: {{name: {ref}, run: ...}}"
                    )
                    found.append(
                        (
                            (*at, "run", i),
                            f"check node {node.id!r} runs {ref!r}, a command name "
                            f".phasegate/config.yaml does not configure (configured: "
                            f"{configured}), so the check stops the run blocked when it "
                            f"runs; {fix}",
                        )
                    )
            body = getattr(node, "body", None)
            if body is not None:
                visit(body, (*at, "body"))

    visit(workflow.nodes, ("nodes",))
    if not found:
        return []
    document = read_yaml(path)
    linear = isinstance(document, dict) and "phases" in document and "nodes" not in document
    return [
        _located(path, document, node_location(loc) if linear else loc, message)
        for loc, message in found
    ]


def unset_data_names(path: Path, workflow: Workflow) -> list[str]:
    """One line (file:line: field: why) per gate whose ``timeout.minutes`` (reviewer whose
    ``timeout``) names a value of the item's data in a workflow where no plug-in can set
    one (the generic view, no action): unless the item is created with it, that gate never
    times out (that review takes the default limit)."""
    if workflow.view.plugin != "generic":
        return []
    found: list[tuple[Location, str]] = []

    def visit(nodes: Any, base: Location) -> bool:
        for index, node in enumerate(nodes):
            at: Location = (*base, index)
            if isinstance(node, ActionNode):
                return False
            if isinstance(node, AgentNode) and (
                node.on_enter or node.after_execute or node.after_verdict
            ):
                return False
            if isinstance(node, AgentNode):
                for number, reviewer in enumerate(node.reviewers):
                    if isinstance(reviewer.timeout, str):
                        found.append(
                            (
                                (*at, "reviewers", number, "timeout"),
                                f"reviewer {reviewer.key!r} of node {node.id!r} takes its "
                                f"timeout from the item's data {reviewer.timeout!r}, which no "
                                "plug-in of "
                                "this workflow sets: unless the item is created with it "
                                "(Repo.new(data=...)), the review takes the default limit "
                                "(write the seconds as a number)",
                            )
                        )
            if isinstance(node, GateNode) and node.timeout is not None:
                name = node.timeout.minutes
                if isinstance(name, str):
                    found.append(
                        (
                            (*at, "timeout", "minutes"),
                            f"gate {node.id!r} takes its minutes from the item's data "
                            f"{name!r}, which no plug-in of this workflow sets: unless the "
                            "item is created with it (Repo.new(data=...)), the gate never "
                            "times out (write the minutes as a number)",
                        )
                    )
            body = getattr(node, "body", None)
            if body is not None and not visit(body, (*at, "body")):
                return False
        return True

    if not visit(workflow.nodes, ("nodes",)) or not found:
        return []
    document = read_yaml(path)
    return [_located(path, document, loc, message) for loc, message in found]


def _template_problems(
    path: Path, document: Any, workflow: Workflow, search: tuple[Path, ...], linear: bool
) -> list[str]:
    problems: list[str] = []
    for where, field, name in templates_of(workflow):
        loc: Location = (*where, field)
        if linear:
            loc = node_location(loc)
            if loc[-1] == "prompt":
                loc = (*loc[:-1], "executor_prompt")
        found = find_template(name, search)
        if found is None:
            places = " or ".join(str(d) for d in search)
            message = f"prompt template {name!r} not found in {places}"
            hint = _not_found_hint(name, search)
            if not hint and not _written(document, loc):
                # The node names no template: the default name is looked for.
                hint = f" (the default name: write that file, or name the template with {loc[-1]}:)"
            problems.append(_located(path, document, loc, message + hint))
            continue
        try:
            text = found.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            problems.append(
                _located(
                    path,
                    document,
                    loc,
                    f"prompt template {found} is not UTF-8 text "
                    f"(byte {exc.start}: {exc.reason}); save it as UTF-8",
                )
            )
            continue
        except OSError as exc:
            problems.append(
                _located(
                    path,
                    document,
                    loc,
                    f"cannot read prompt template {found} ({exc.strerror or exc})",
                )
            )
            continue
        problems += [
            _located(path, document, loc, f"template {found}:{line}:{column}: {problem}")
            for line, column, problem in malformed_placeholders(text)
        ]
        # The foreach item's names are filled only inside a foreach body.
        in_foreach = "body" in where
        known = TEMPLATE_VARIABLES if in_foreach else TEMPLATE_VARIABLES - FOREACH_VARIABLES
        for line, column, name in placeholder_places(text, unknown_placeholders(text, known)):
            problems.append(
                _located(
                    path,
                    document,
                    loc,
                    f"template {found}:{line}:{column}: {_unknown_in_template(name, known)}",
                )
            )
    return problems


#: A placeholder's name in single braces (``{item}``) in a template, not part of a
#: ``{{ name }}`` and not a shell's or a script's own (``${item}``).
_TEMPLATE_SINGLE_BRACES = re.compile(r"(?<![{$])\{[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\}(?!\})")


def template_warnings(loaded: LoadedWorkflow) -> list[str]:
    """One line (file:line: field: template FILE:LINE:COLUMN: why) per prompt template of
    ``loaded`` that is empty (the agent gets no instructions of its role) and per known
    placeholder's name a template writes in single braces (``{item}``: sent as written,
    never filled). Not refused: a template may hold code with braces."""
    path = loaded.path
    found: list[tuple[Location, str]] = []
    seen: set[tuple[Path, int, int]] = set()
    for where, field, name in templates_of(loaded.workflow):
        file = find_template(name, loaded.prompt_path)
        if file is None:
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeError):
            continue  # the load reports it
        loc: Location = (*where, field)
        if not text.strip():
            if (file, 0, 0) not in seen:
                seen.add((file, 0, 0))
                found.append(
                    (
                        loc,
                        f"template {file} is empty: the agent is given no instructions of "
                        "its role, only the item and the node's files (write what it is "
                        "to do)",
                    )
                )
            continue
        if "{" not in text:
            continue
        for match in _TEMPLATE_SINGLE_BRACES.finditer(text):
            if match.group(1) not in TEMPLATE_VARIABLES:
                continue
            line, column = _position_of(text, match.start())
            if (file, line, column) in seen:
                continue
            seen.add((file, line, column))
            found.append(
                (
                    loc,
                    f"template {file}:{line}:{column}: {match.group(0)!r} is never filled: "
                    f"a placeholder takes double braces ({{{{ {match.group(1)} }}}})",
                )
            )
    if not found:
        return []
    document = read_yaml(path)
    linear = isinstance(document, dict) and "phases" in document and "nodes" not in document
    lines: list[str] = []
    for loc, message in found:
        if linear:
            loc = node_location(loc)
            if loc[-1] == "prompt":
                loc = (*loc[:-1], "executor_prompt")
        lines.append(_located(path, document, loc, message))
    return lines


def _position_of(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _written(document: Any, loc: Location) -> bool:
    """Whether the workflow file writes the field at ``loc``."""
    found = document
    for part in loc:
        try:
            found = found[part]
        except (KeyError, IndexError, TypeError):
            return False
    return True


def _not_found_hint(name: str, search: tuple[Path, ...]) -> str:
    """Why a prompt template named ``name`` may not have been found, when it can be told."""
    if name.startswith(("/", "\\", "~")) or ".." in re.split(r"[\\/]", name):
        return " (a template is named by its path inside a prompt folder: no '..', not absolute)"
    if not Path(name).suffix and find_template(f"{name}.md", search) is not None:
        return f" (there is {name}.md: name it with its extension)"
    folder = next((d / name for d in search if (d / name).is_dir()), None)
    return f" ({folder} is a folder, not a file)" if folder is not None else ""


def _unknown_in_template(name: str, known: frozenset[str]) -> str:
    """Why ``{{ name }}`` of a template is never filled where ``known`` names are."""
    if name in FOREACH_VARIABLES:
        return (
            f"{name!r} is filled only inside a foreach body "
            "(this node is not in one: it would be empty)"
        )
    close = difflib.get_close_matches(name, sorted(known), n=1)
    guess = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown placeholder {name!r} (known: {', '.join(sorted(known))}){guess}"


def _real_errors(exc: ValidationError) -> list[Any]:
    """The errors of ``exc`` without the ones that only follow from others.

    pydantic checks a tuple's minimum length on the items that validated, so a
    ``phases:`` list whose every entry has a problem is also reported as too
    short ("at least 1 item after validation, not 0"); the list the file holds
    is long enough, and its entries' own problems say what to fix.
    """
    return [
        e
        for e in exc.errors()
        if not (
            e["type"] == "too_short"
            and isinstance(e.get("input"), (list, tuple))
            and len(e["input"]) >= e.get("ctx", {}).get("min_length", 0)
        )
    ]


def _pydantic_problems(
    path: Path, document: Any, exc: ValidationError, relocate: Any = None, model: Any = None
) -> list[str]:
    """One line per problem of ``exc``: a value that no member of a union field takes
    (``extend: lots``: neither a whole number nor ``'mode'``) is one problem, said in
    the YAML's words, and the location never names pydantic's members (``.int``)."""
    groups: dict[Location, list[tuple[Any, bool]]] = {}
    for error in _real_errors(exc):
        loc, member = _without_members(document, tuple(error["loc"]))
        if error["type"] == "extra_forbidden" and model is not None:
            error = {**error, "hint": _field_hint(model, tuple(error["loc"]))}
        groups.setdefault(loc, []).append(({**error, "loc": loc}, member))
    problems: list[str] = []
    for loc, found in groups.items():
        members = [error for error, member in found if member]
        others = [error for error, member in found if not member]
        mismatched = [error for error in members if _expected(error) is not None]
        if len(members) > 1 and len(mismatched) == len(members):
            wanted = list(dict.fromkeys(str(_expected(error)) for error in members))
            said = ", ".join(wanted[:-1]) + f" or {wanted[-1]}"
            message = f"should be {said}, not {_kind_of(members[0].get('input'))}"
            problems.append(_located(path, document, relocate(loc) if relocate else loc, message))
        elif len(members) > 1:
            # A member took the value's type and refused it: its reason is the one to read.
            others += [error for error in members if _expected(error) is None]
        else:
            others += members
        problems += [_pydantic_problem(path, document, error, relocate) for error in others]
    return problems


def _comma_hint(path: Path, document: Any, loc: Location) -> str:
    """:func:`flow_comma_hint` for the unknown field at ``loc`` of the file ``path``."""
    try:
        return flow_comma_hint(document, loc, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return ""


def _field_hint(model: Any, loc: Location) -> str:
    """``; did you mean 'access'?`` for the unknown field at ``loc`` (a pydantic error's
    location, union tags included) when a field of the model there is spelt alike."""
    if len(loc) >= 2 and loc[-2] in _NODE_KINDS:
        # A field of another kind of node (``prompt`` on a check node): the kinds it is of.
        owners = [
            kind
            for kind in _NODE_KINDS
            if kind != loc[-2] and str(loc[-1]) in _field_names(model, (*loc[:-2], kind))
        ]
        if owners:
            article = "an" if str(loc[-2])[0] in "aeiou" else "a"
            return f" of {article} {loc[-2]} node (a field of {', '.join(owners)} nodes)"
    names = _field_names(model, loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), names, n=1) if names else []
    return f"; did you mean {close[0]!r}?" if close else ""


def _field_names(model: Any, loc: Location) -> list[str]:
    """The fields (as a file spells them) of the model found at ``loc`` from ``model``."""
    kind: Any = model
    for part in loc:
        kind = _unwrapped(kind)
        if get_origin(kind) in (Union, UnionType):
            kind = _tagged(kind, part)
        elif isinstance(kind, type) and issubclass(kind, BaseModel):
            fields = kind.model_fields
            name = next((n for n, f in fields.items() if part in (n, f.alias)), None)
            kind = fields[name].annotation if name is not None else None
        elif get_origin(kind) in (tuple, list) and isinstance(part, int):
            kind = get_args(kind)[0]
        elif get_origin(kind) is dict:
            kind = get_args(kind)[1]
        else:
            return []
    kind = _unwrapped(kind)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return sorted(f.alias or n for n, f in kind.model_fields.items())
    return []


def _unwrapped(kind: Any) -> Any:
    """``kind`` without ``Annotated``; of a union holding one model (``PluginRef | None``),
    that model."""
    while True:
        if get_origin(kind) is Annotated:
            kind = get_args(kind)[0]
            continue
        if get_origin(kind) in (Union, UnionType):
            models = [m for m in get_args(kind) if isinstance(m, type) and issubclass(m, BaseModel)]
            if len(models) == 1:
                kind = models[0]
                continue
        return kind


def _tagged(union: Any, tag: Any) -> Any:
    """The member of a tagged union whose tag is ``tag`` (a node's kind), or None."""
    for member in get_args(union):
        if get_origin(member) is Annotated and any(
            isinstance(x, Tag) and x.tag == tag for x in get_args(member)[1:]
        ):
            return get_args(member)[0]
    return None


#: pydantic's name for one member of a union field (``int``, ``literal['mode']``, a
#: model's class name), which it puts in an error's location as if it were a field.
_MEMBER = re.compile(
    r"(int|float|str|bool|none|(literal|function-[a-z-]+|list|tuple|dict)\[.*\]|[A-Z]\w*)\Z"
)


def _without_members(document: Any, loc: Location) -> tuple[Location, bool]:
    """``loc`` without the union members pydantic put in it (a key the file holds is
    kept), and whether it had any."""
    node: Any = document
    kept: list[str | int] = []
    dropped = lost = False
    for position, part in enumerate(loc):
        known = not lost and isinstance(node, (dict, list))
        known = known and (
            part in node if isinstance(node, dict) else isinstance(part, int) and part < len(node)
        )
        if part in _UNION_TAGS and position and isinstance(loc[position - 1], int):
            # A union's tag (a node's kind) follows its member's index; what follows the
            # tag is a field, though it may be named as a tag is (an action's ``action``).
            dropped = dropped or not known
            continue
        # Off the file's own keys (a location relocated from phases: to nodes:), a capital
        # may be a verdict word (APPROVED) rather than a model's class name: kept.
        member = isinstance(part, str) and bool(
            _MEMBER.match(part) and not (lost and part[:1].isupper())
        )
        if not known and member:
            dropped = True
            continue
        kept.append(part)
        lost = not known
        node = node[part] if known else None
    return tuple(kept), dropped


def _expected(error: Any) -> str | None:
    """What the value should have been, when ``error`` only says its type is wrong."""
    if error["type"] == "literal_error":
        return str(error.get("ctx", {}).get("expected", "")) or None
    return _EXPECTED.get(error["type"])


def _pydantic_problem(path: Path, document: Any, error: Any, relocate: Any = None) -> str:
    loc = tuple(error["loc"])
    message = str(error["msg"])
    if error["type"] == "extra_forbidden":
        message = "unknown field" + (_comma_hint(path, document, loc) or error.get("hint", ""))
    elif error["type"] == "missing":
        message = "required field is missing"
        group = _PLUGIN_FIELDS.get(str(loc[-1])) if loc else None
        if group is not None:
            from phasegate import plugins

            installed = ", ".join(plugins.names(group)) or "none"
            kind = group.removesuffix("s")
            message += (
                f" (a{'n' if kind[0] in 'aeiou' else ''} {kind} plug-in; installed: {installed})"
            )
        elif loc and loc[-1] == "choices":
            message += (
                " (a gate needs at least one choice: choices: {NAME: {to: NODE}}, NODE the "
                "node it leads to)"
            )
    elif error["type"] in _LIST_TYPES:
        message = f"should be a list, not {_kind_of(error.get('input'))}"
        found = error.get("input")
        if loc and loc[-1] in ("run", "checks") and isinstance(found, str):
            # A command written as the field's value: the list form that runs it.
            message += f": [{inline_check_hint(found)}], or a list of configured command names"
        elif loc and loc[-1] in ("nodes", "body", "phases") and isinstance(found, dict):
            # The entries written without their dashes: one mapping of all their fields.
            first = "name" if loc[-1] == "phases" else "id"
            message += f": each entry starts with '- ' ('- {first}: ...', its fields under it)"
    elif error["type"] in _MAPPING_TYPES:
        message = f"should be a mapping (key: value), not {_kind_of(error.get('input'))}"
        if loc and loc[-1] in ("items", "commands_from", "checks_from"):
            found = error.get("input")
            file = found if isinstance(found, str) else "FILE"
            message += f": a parser plug-in over a file ({{parser: markdown-tasks, file: {file}}})"
        elif loc and loc[-1] == "choices" and isinstance(error.get("input"), list):
            message += ": each choice is a name and the node it leads to ({NAME: {to: NODE}})"
    elif error["type"] == "union_tag_invalid":
        kind = error["input"].get("kind")
        kinds = ", ".join(_NODE_KINDS)
        if isinstance(kind, str):
            guess = difflib.get_close_matches(kind, _NODE_KINDS, n=1)
            message = f"unknown node kind {kind!r} (kinds: {kinds})" + (
                f"; did you mean {guess[0]!r}?" if guess else ""
            )
        else:
            message = f"a node's kind is one of {kinds} (or left out: agent), not {_kind_of(kind)}"
    elif _expected(error) is not None:
        message = f"should be {_expected(error)}, not {_kind_of(error.get('input'))}"
        if loc[:1] == ("nodes",) and loc[-1] == "reviewer" and isinstance(error.get("input"), list):
            message += (
                ": reviewer: takes one role (an approval reviewer); a list of reviewers is "
                "written under reviewers:"
            )
        elif _expected(error) == "a string" and _placeholder_read_as_mapping(document, loc):
            message += (
                ": a text that starts with '{{' is read as a YAML mapping; put the whole "
                'text in quotes (e.g. "{{ item }} is ready?")'
            )
    elif error["type"] in _BOUNDS:
        bound = next(iter(error.get("ctx", {}).values()), "?")
        message = f"should be {_BOUNDS[error['type']]} {bound}, not {error.get('input')!r}"
    elif error["type"] == "too_short":
        ctx = error.get("ctx", {})
        least = ctx.get("min_length", 1)
        message = (
            f"needs at least {least} entr{'y' if least == 1 else 'ies'} "
            f"(it has {ctx.get('actual_length', 0)})"
        )
    message = message.removeprefix("Value error, ")
    if relocate is not None:
        loc = relocate(loc)
    return _located(path, document, loc, message)


def _placeholder_read_as_mapping(document: Any, loc: Location) -> bool:
    """Whether the value at ``loc`` of the round-trip ``document`` is a mapping YAML read
    from a ``{{ name }}`` written unquoted (a mapping whose key is a mapping)."""
    node = document
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(node, dict) and any(isinstance(key, Mapping) for key in node)


#: Fields that name a plug-in, and its group: a missing one lists those installed.
_PLUGIN_FIELDS = {"parser": "parsers", "action": "actions"}


#: pydantic's error types for a value that is not a list (``tuple`` fields read YAML
#: lists), and not a mapping (a model, a dict): said in the YAML's words.
_LIST_TYPES = frozenset({"tuple_type", "list_type", "set_type", "frozen_set_type"})
_MAPPING_TYPES = frozenset({"dict_type", "model_type", "model_attributes_type"})
#: pydantic's error types for a number out of its field's range, in words.
_BOUNDS = {
    "greater_than_equal": "at least",
    "greater_than": "more than",
    "less_than_equal": "at most",
    "less_than": "less than",
}
#: What a value of a scalar type should have been, by pydantic's error type.
_EXPECTED = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    **{kind: "a list" for kind in _LIST_TYPES},
    **{kind: "a mapping (key: value)" for kind in _MAPPING_TYPES},
}


def _kind_of(value: Any) -> str:
    """What a YAML value is, in a few words (``a string``, ``a number``...)."""
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 30 else value[:29] + "…"
        return f"a string ({shown!r})"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def _located(path: Path, document: Any, loc: Location, message: str) -> str:
    line = _line_of(document, loc)
    where = f"{path}:{line}" if line else str(path)
    return f"{where}: {_dotted(loc)}: {message}" if loc else f"{where}: {message}"


def _text_located(
    path: Path, document: Any, loc: Location, message: str, text: str, at: tuple[int, int]
) -> str:
    """:func:`_located` for a problem at line and column ``at`` of the workflow's own
    ``text`` (a gate's question...): ``file:line:column:`` of that place in the file when
    the text is written there as it reads (on one line, or a ``|`` block), else the
    field's line, the text's line said after the message."""
    found = _place_in_file(path, document, loc, text, at)
    if found is not None:
        return f"{path}:{found[0]}:{found[1]}: {_dotted(loc)}: {message}"
    several = "\n" in text.rstrip("\n")
    return _located(path, document, loc, f"{message} (line {at[0]})" if several else message)


def _place_in_file(
    path: Path, document: Any, loc: Location, text: str, at: tuple[int, int]
) -> tuple[int, int] | None:
    """1-based ``(line, column)`` in ``path`` of line and column ``at`` of ``text``, the
    value at ``loc`` of the round-trip ``document``; ``None`` when it cannot be told for
    sure (a folded or quoted text over several lines, escapes before it)."""
    parent = document
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return None
    lc = getattr(parent, "lc", None)
    if lc is None or not isinstance(parent, dict) or loc[-1] not in parent:
        return None
    try:
        row, col = lc.value(loc[-1])
        lines = path.read_text(encoding="utf-8").splitlines()
    except (KeyError, OSError, UnicodeDecodeError, TypeError):
        return None
    line, column = at
    if row >= len(lines):
        return None
    if lines[row][col:].startswith("|"):
        # A literal block: the text's lines are the file's next lines, less their indent.
        row += line
        content = next((s for s in lines[row - line + 1 :] if s.strip()), "")
        column += len(content) - len(content.lstrip(" "))
    elif lines[row][col:].startswith(">"):
        return _place_in_folded(lines, row, text.split("\n")[line - 1][column - 1 :])
    elif line == 1:
        column += col + (1 if lines[row][col : col + 1] in ("'", '"') else 0)
    else:
        return None
    # Only a place whose file line reads as the text does from there is said (a quoted
    # text with an escape before the placeholder is not written as it reads).
    wanted = text.split("\n")[line - 1][at[1] - 1 :]
    if row >= len(lines) or not lines[row][column - 1 :].startswith(wanted.rstrip()):
        return None
    return row + 1, column


def _place_in_folded(lines: list[str], row: int, wanted: str) -> tuple[int, int] | None:
    """1-based ``(line, column)`` of ``wanted`` (a text from a placeholder on) in the folded
    (``>``) block whose field is on ``lines[row]``: folding joins the block's lines, so the
    one place a line of the block reads as ``wanted`` does from there; ``None`` when there
    is no such place or more than one."""
    block = [i for i in range(row + 1, len(lines)) if lines[i].strip()]
    indent = len(lines[block[0]]) - len(lines[block[0]].lstrip(" ")) if block else 0
    found: list[tuple[int, int]] = []
    for i in range(row + 1, len(lines)):
        if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip(" ")) < indent:
            break
        for start in range(indent, len(lines[i])):
            rest = lines[i][start:].rstrip()
            if (
                rest
                and rest[0] == wanted[:1]
                and (wanted.startswith(rest) or rest.startswith(wanted.rstrip()))
            ):
                found.append((i + 1, start + 1))
    return found[0] if len(found) == 1 else None


def _dotted(loc: Location) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _line_of(document: Any, loc: Location) -> int | None:
    """1-based line of the deepest part of ``loc`` found in the round-trip document."""
    node = document
    line: int | None = None
    lc = getattr(document, "lc", None)
    if loc and lc is not None and getattr(lc, "line", None) is not None:
        line = lc.line + 1  # a field the top-level mapping lacks: where that mapping starts
    for part in loc:
        lc = getattr(node, "lc", None)
        try:
            if isinstance(part, int) and isinstance(node, list):
                if lc is not None:
                    line = lc.item(part)[0] + 1
                node = node[part]
            elif isinstance(node, dict) and part in node:
                if lc is not None:
                    line = lc.key(part)[0] + 1
                node = node[part]
            else:
                break
        except (KeyError, IndexError, TypeError):
            break
    return line


def _first_line(document: Any) -> int:
    """1-based line where a round-trip ``document`` starts (1 for a plain scalar)."""
    lc = getattr(document, "lc", None)
    return lc.line + 1 if lc is not None and getattr(lc, "line", None) is not None else 1


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node
