"""``tasks.yaml``: the Planner's tasks, the single source of truth of each task's status.

```yaml
tasks:
  - id: T1
    title: Rate limiter
    goal: Refuse a client's 101st request within a minute
    dependencies: []                 # ids of tasks that must be completed first
    acceptance_checks:               # "cmd: ..." is run at INTEGRATE; "manual: ..." is read
      - "cmd: python -m pytest -q tests/test_limit.py"
    done_when: ["the limiter refuses the 101st request"]
    risk_flags: [security]           # security, auth, input, network, perf, breaking-change, none
    files: [src/limit.py]            # optional: what the task touches (the review's focus)
    ui: false                        # optional: the task changes a user interface
    qa: true                         # optional: force QA on (true) or off (false)
    design_spec: design-specs/x.md   # optional: the Designer's spec for this task
    status: not-started              # not-started | in-progress | implemented | completed | blocked
```

The PLAN gate (checked in code) needs every task to have an id (not ``meta``, the final
review's), a title, ``dependencies`` on known tasks without a cycle,
``acceptance_checks`` (each ``cmd: ...`` or ``manual: ...``) and ``done_when``, and only
the risk flags listed above. The
Coder marks a task ``implemented``; only phasegate marks it ``completed``, once every
gate of the task passed. Another agent's change of
the tasks, their ``acceptance_checks``, ``done_when`` or a ``completed`` status
is put back and fails its call (:mod:`phasegate.team.guarded`).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.engine.prompting import read_file
from phasegate.state.atomic import atomic_write_text
from phasegate.yaml_errors import yaml_error_column, yaml_error_detail

STATUSES = ("not-started", "in-progress", "implemented", "completed", "blocked")
#: The risk flags a task may name (a misspelt one would silently skip the Security gate).
RISK_FLAGS = ("security", "auth", "input", "network", "perf", "breaking-change", "none")
TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


@dataclass(frozen=True)
class TeamTask:
    """One task of tasks.yaml."""

    id: str
    title: str
    goal: str = ""
    dependencies: tuple[str, ...] = ()
    acceptance_checks: tuple[str, ...] = ()
    done_when: tuple[str, ...] = ()
    risk_flags: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    ui: bool = False
    qa: bool | None = None
    security: bool | None = None
    design_spec: str | None = None
    status: str = "not-started"
    data: dict[str, Any] = field(default_factory=dict)

    def commands(self) -> list[str]:
        """The shell commands of its ``acceptance_checks`` (``cmd: ...`` entries)."""
        found = []
        for check in self.acceptance_checks:
            kind, sep, rest = check.partition(":")
            if sep and kind.strip().lower() in COMMAND_KINDS and rest.strip():
                found.append(rest.strip())
        return found


#: The prefixes of an acceptance check: a command run at INTEGRATE, or one read by people.
COMMAND_KINDS = ("cmd", "command")
CHECK_KINDS = (*COMMAND_KINDS, "manual")


def _check_problem(tid: str, check: str) -> str:
    """What is wrong with one acceptance check (``""``: nothing): one without a known prefix
    would be neither run at INTEGRATE nor shown as manual, so the task would pass unchecked."""
    kind, sep, rest = check.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in CHECK_KINDS:
        shown = check.strip()
        return (
            f"task {tid}'s acceptance check {shown!r} has no 'cmd:' or 'manual:' prefix "
            f"(write {'cmd: ' + shown!r} to run it at INTEGRATE)"
        )
    if not rest.strip():
        return f"task {tid}'s acceptance check {kind + ':'!r} names no " + (
            "command" if kind in COMMAND_KINDS else "check"
        )
    return ""


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    return yaml


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, list):
        return tuple(str(v) for v in value if str(v).strip())
    return (str(value),)


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def load_document(path: Path) -> tuple[Any, list[str]]:
    """The parsed document of tasks.yaml and, when it cannot be used, why."""
    text = read_file(path)
    if text is None or not text.strip():
        return None, ["it is missing or empty"]
    try:
        document = _yaml().load(text)
    except Exception as exc:
        line, problem = yaml_error_detail(exc)
        column = yaml_error_column(exc) if line is not None else None
        where = f" (line {line})" if line is not None else ""
        if column is not None:
            where = f" (line {line}, column {column})"
        return None, [f"it is not valid YAML{where}: {problem}"]
    entries = document.get("tasks") if isinstance(document, dict) else document
    if not isinstance(entries, list) or not entries:
        return None, ["it must hold 'tasks:', a list of tasks"]
    return document, []


def _entries(document: Any) -> list[Any]:
    found = document.get("tasks") if isinstance(document, dict) else document
    return list(found) if isinstance(found, list) else []


def read_tasks(path: Path) -> tuple[list[TeamTask], list[str]]:
    """The tasks of tasks.yaml and every problem the PLAN gate finds."""
    document, problems = load_document(path)
    if document is None:
        return [], problems
    tasks: list[TeamTask] = []
    for position, entry in enumerate(_entries(document), start=1):
        if not isinstance(entry, dict):
            problems.append(f"task {position} is not a mapping")
            continue
        task, found = _task(entry, position)
        problems += found
        if task is not None:
            tasks.append(task)
    ids = [t.id for t in tasks]
    problems += [f"task id {tid} is used twice" for tid in sorted(set(ids)) if ids.count(tid) > 1]
    known = set(ids)
    for task in tasks:
        for dep in task.dependencies:
            if dep == task.id:
                problems.append(f"task {task.id} depends on itself")
            elif dep not in known:
                problems.append(f"task {task.id} depends on {dep}, which is not a task")
    cycle = _cycle(tasks)
    if cycle:
        problems.append(f"the tasks depend on each other in a cycle: {' -> '.join(cycle)}")
    return tasks, problems


def _task(entry: dict[str, Any], position: int) -> tuple[TeamTask | None, list[str]]:
    problems: list[str] = []
    tid = str(entry.get("id") or "").strip()
    if not TASK_ID.match(tid):
        return None, [f"task {position} needs an id (letters, digits, '.', '-', '_')"]
    if tid.lower() == "meta":
        problems.append(f"task id {tid} is the final review's (meta): name the task otherwise")
    title = str(entry.get("title") or "").strip()
    if not title:
        problems.append(f"task {tid} has no title")
    if "dependencies" not in entry or not isinstance(entry.get("dependencies") or [], list):
        problems.append(f"task {tid} has no 'dependencies' list (write [] when it has none)")
    checks = _strings(entry.get("acceptance_checks"))
    if not checks:
        problems.append(f"task {tid} has no acceptance_checks")
    problems += [found for found in (_check_problem(tid, c) for c in checks) if found]
    done_when = _strings(entry.get("done_when"))
    if not done_when:
        problems.append(f"task {tid} has no done_when")
    status = str(entry.get("status") or "not-started")
    if status not in STATUSES:
        problems.append(f"task {tid} has status {status!r} (one of: {', '.join(STATUSES)})")
    flags = tuple(f.strip().lower() for f in _strings(entry.get("risk_flags")))
    unknown = [f for f in flags if f not in RISK_FLAGS]
    if unknown:
        problems.append(
            f"task {tid} has risk flag(s) {', '.join(repr(f) for f in unknown)} "
            f"(each one of: {', '.join(RISK_FLAGS)})"
        )
    deps = entry.get("dependencies") or []
    task = TeamTask(
        id=tid,
        title=title,
        goal=str(entry.get("goal") or "").strip(),
        dependencies=tuple(str(d) for d in deps) if isinstance(deps, list) else (),
        acceptance_checks=checks,
        done_when=done_when,
        risk_flags=flags,
        files=_strings(entry.get("files")),
        ui=entry.get("ui") is True,
        qa=_flag(entry.get("qa")),
        security=_flag(entry.get("security")),
        design_spec=str(entry["design_spec"]) if entry.get("design_spec") else None,
        status=status,
    )
    return task, problems


def _cycle(tasks: list[TeamTask]) -> list[str]:
    deps = {t.id: [d for d in t.dependencies if d != t.id] for t in tasks}
    state: dict[str, str] = {}

    def visit(tid: str, trail: list[str]) -> list[str]:
        if state.get(tid) == "done" or tid not in deps:
            return []
        if state.get(tid) == "visiting":
            return [*trail[trail.index(tid) :], tid]
        state[tid] = "visiting"
        for dep in deps[tid]:
            found = visit(dep, [*trail, tid])
            if found:
                return found
        state[tid] = "done"
        return []

    for task in tasks:
        found = visit(task.id, [])
        if found:
            return found
    return []


def task_status(path: Path, task_id: str) -> str | None:
    """The status tasks.yaml gives ``task_id`` (``None`` when it is not listed)."""
    tasks, _ = read_tasks(path)
    return next((t.status for t in tasks if t.id == task_id), None)


def with_status(path: Path, statuses: dict[str, str]) -> str | None:
    """tasks.yaml's text with each task's ``status`` set (comments kept); ``None`` if unreadable."""
    document, _ = load_document(path)
    if document is None:
        return None
    for entry in _entries(document):
        if isinstance(entry, dict) and str(entry.get("id")) in statuses:
            entry["status"] = statuses[str(entry.get("id"))]
    out = io.StringIO()
    _yaml().dump(document, out)
    return out.getvalue()


def set_statuses(path: Path, statuses: dict[str, str]) -> bool:
    """Write the statuses into tasks.yaml (atomically); ``False`` when nothing changed."""
    before = read_file(path)
    after = with_status(path, statuses)
    if after is None or after == before:
        return False
    atomic_write_text(path, after)
    return True


def example_tasks(goal: str) -> str:
    """A minimal valid tasks.yaml (for the ``auto`` backend)."""
    goal = " ".join(goal.split()).replace('"', "'") or "the requested change"
    return (
        "tasks:\n"
        "  - id: T1\n"
        f'    title: "{goal[:60]}"\n'
        f'    goal: "{goal}"\n'
        "    dependencies: []\n"
        '    acceptance_checks: ["cmd: git --version"]\n'
        '    done_when: ["the change is in place"]\n'
        "    risk_flags: [none]\n"
        "    status: not-started\n"
    )
