"""Load a workflow YAML file, validate it, and report problems by file, line and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from phasegate.errors import WorkflowError
from phasegate.workflow.graph import Location, graph_problems
from phasegate.workflow.model import Workflow
from phasegate.workflow.prompts import find_template, unknown_placeholders


@dataclass(frozen=True)
class LoadedWorkflow:
    """A validated workflow and where it came from."""

    workflow: Workflow
    path: Path
    source: str  # "built-in" or "repo"
    prompt_path: tuple[Path, ...]

    @property
    def name(self) -> str:
        return self.workflow.name

    def template(self, name: str) -> Path:
        """The file of prompt template ``name`` (validated to exist on load)."""
        found = find_template(name, self.prompt_path)
        if found is None:  # pragma: no cover - load() guarantees it
            raise WorkflowError(f"{self.path}: prompt template {name!r} not found")
        return found


class WorkflowProblems(WorkflowError):
    """A workflow file breaks one or more rules; ``problems`` lists them all."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"{problems[0]}{more}")
        self.path = path
        self.problems = problems


def load_workflow(
    path: Path, source: str = "repo", prompt_overrides: Path | None = None
) -> LoadedWorkflow:
    """Read, validate and return the workflow in ``path``."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowError(f"{path}: cannot read workflow file ({exc})") from None
    try:
        document = YAML(typ="rt").load(text)
    except YAMLError as exc:
        raise WorkflowError(_yaml_problem(path, exc)) from None
    if not isinstance(document, dict):
        raise WorkflowError(f"{path}: a workflow file must hold a mapping at the top level")
    try:
        workflow = Workflow.model_validate(_plain(document))
    except ValidationError as exc:
        problems = [_pydantic_problem(path, document, e) for e in exc.errors()]
        raise WorkflowProblems(path, problems) from None
    problems = [_located(path, document, loc, msg) for loc, msg in graph_problems(workflow)]
    if workflow.name != path.stem:
        problems.insert(
            0,
            _located(
                path,
                document,
                ("name",),
                f"name {workflow.name!r} must match the file name {path.stem!r}",
            ),
        )
    search = _prompt_path(path, workflow.name, prompt_overrides)
    problems += _template_problems(path, document, workflow, search)
    if problems:
        raise WorkflowProblems(path, problems)
    return LoadedWorkflow(workflow, path, source, search)


def _prompt_path(path: Path, name: str, overrides: Path | None) -> tuple[Path, ...]:
    search = [path.parent / "prompts" / name]
    if overrides is not None:
        search.insert(0, overrides / name)
    return tuple(search)


def _template_problems(
    path: Path, document: Any, workflow: Workflow, search: tuple[Path, ...]
) -> list[str]:
    problems: list[str] = []
    for index, phase in enumerate(workflow.phases):
        if phase.kind != "agent":
            continue
        wanted = [("executor_prompt", phase.executor_prompt or f"{phase.name}.md")]
        if phase.reviewer:
            wanted.append(("reviewer_prompt", phase.reviewer_prompt or f"{phase.reviewer}.md"))
        for field, name in wanted:
            found = find_template(name, search)
            loc: Location = ("phases", index, field)
            if found is None:
                where = " or ".join(str(d) for d in search)
                problems.append(
                    _located(path, document, loc, f"prompt template {name!r} not found in {where}")
                )
                continue
            bad = unknown_placeholders(found.read_text(encoding="utf-8"))
            if bad:
                problems.append(
                    _located(
                        path,
                        document,
                        loc,
                        f"template {found} uses unknown placeholders: {', '.join(bad)}",
                    )
                )
    return problems


def _pydantic_problem(path: Path, document: Any, error: Any) -> str:
    loc = tuple(error["loc"])
    message = str(error["msg"])
    if error["type"] == "extra_forbidden":
        message = "unknown field"
    elif error["type"] == "missing":
        message = "required field is missing"
    message = message.removeprefix("Value error, ")
    return _located(path, document, loc, message)


def _located(path: Path, document: Any, loc: Location, message: str) -> str:
    line = _line_of(document, loc)
    where = f"{path}:{line}" if line else str(path)
    return f"{where}: {_dotted(loc)}: {message}" if loc else f"{where}: {message}"


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


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _yaml_problem(path: Path, exc: Exception) -> str:
    """``file:line: invalid YAML: problem``, without ruamel's ``"<unicode string>"`` marks."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if not problem or mark is None:
        return f"{path}: invalid YAML: {_one_line(exc)}"
    detail = " ".join(str(problem).split())
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        detail += f" ({context} started on line {context_mark.line + 1})"
    return f"{path}:{mark.line + 1}: invalid YAML: {detail}"


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
