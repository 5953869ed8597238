"""The ``team`` workflow's parsers: the gates of INTAKE, DESIGN, PLAN and RELEASE in code.

Each parser checks one output of an agent; the problems it finds go back to
that agent as blockers (the engine's revise loop), and the node cannot pass
while any is left. The ``*-checks`` parsers list the acceptance commands
INTEGRATE and DONE run.
"""

from __future__ import annotations

from pathlib import Path

from phasegate.engine.plugin_api import ItemParser, Parsed, PluginContext, Task
from phasegate.engine.prompting import read_file
from phasegate.errors import BadInputError, BlockedError
from phasegate.team import documents
from phasegate.team.lean_exit import lean_exit_reason
from phasegate.team.tasks import TeamTask, example_tasks, read_tasks, with_status


class SpecParser(ItemParser):
    """spec.md: testable acceptance criteria (``## Acceptance criteria``, ``- AC-1: ...``)."""

    name = "team-spec"

    def count(self, path: Path) -> int:
        return len(documents.spec_criteria(read_file(path) or ""))

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        return documents.spec_problems(read_file(path) or "")

    def example(self, ctx: PluginContext, path: Path) -> str | None:
        return documents.example_spec(str(ctx.state.get("description") or ""))


class AcceptanceParser(ItemParser):
    """acceptance.json: every criterion with an id, a description and a check command."""

    name = "team-acceptance"

    def count(self, path: Path) -> int:
        return len(documents.read_acceptance(path)[0])

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        return documents.acceptance_problems(path, path.parent / "spec.md")

    def example(self, ctx: PluginContext, path: Path) -> str | None:
        return documents.example_acceptance()


class ArchitectureParser(ItemParser):
    """architecture.md: records its risks."""

    name = "team-architecture"

    def count(self, path: Path) -> int:
        return 1 if (read_file(path) or "").strip() else 0

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        return documents.architecture_problems(read_file(path) or "")

    def example(self, ctx: PluginContext, path: Path) -> str | None:
        return "# Architecture\n\n## Modules\n\nOne module.\n\n## Risks\n\n- None found.\n"


def usable_tasks(ctx: PluginContext, path: Path | None = None) -> list[TeamTask]:
    """tasks.yaml's tasks; the run stops (blocked) when the file has a problem, as a person
    may have left it between runs, before a task is run or marked from a broken file."""
    path = path or ctx.item_dir / "tasks.yaml"
    tasks, problems = read_tasks(path)
    if problems:
        raise BlockedError(
            f"{ctx.item.relative(path, ctx.state)} cannot be used: {'; '.join(problems)}; "
            f"fix it, then run again: phasegate run {ctx.item.name}"
        )
    return tasks


class TasksParser(ItemParser):
    """tasks.yaml: the tasks in dependency order (the PLAN gate's problems, if any, stop it)."""

    name = "team-tasks"
    needs_file = True

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        assert path is not None
        tasks = usable_tasks(ctx, path)
        items = tuple(
            Task(
                key=t.id,
                title=t.title,
                deps=t.dependencies,
                done=t.status == "completed",
                data={"goal": t.goal, "files": list(t.files), "status": t.status},
            )
            for t in tasks
        )
        return Parsed(items, "tasks.yaml")

    def count(self, path: Path) -> int:
        return len(read_tasks(path)[0])

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        return read_tasks(path)[1]

    def example(self, ctx: PluginContext, path: Path) -> str | None:
        return example_tasks(str(ctx.state.get("description") or ""))


class LeanTasksParser(TasksParser):
    """tasks.yaml of lean mode: exactly one task."""

    name = "team-lean-tasks"

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        tasks, problems = read_tasks(path)
        if len(tasks) > 1:
            problems.append(f"lean mode plans a single task; it lists {len(tasks)}")
        return problems


class TaskImplementedParser(ItemParser):
    """tasks.yaml after the Coder: the current task is marked ``implemented``."""

    name = "team-task-implemented"

    def count(self, path: Path) -> int:
        return len(read_tasks(path)[0])

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        if ctx.task is None:
            return []
        if lean_exit_reason(ctx) is not None:
            return []  # lean mode's Coder found it too complex: the session restarts in full
        tasks, _ = read_tasks(path)
        found = next((t for t in tasks if t.id == ctx.task.key), None)
        if found is None:
            return [f"task {ctx.task.key} is no longer listed"]
        if found.status not in ("implemented", "completed"):
            return [
                f"task {ctx.task.key} is {found.status}: mark it 'status: implemented' once "
                "it is done (only phasegate marks it completed)"
            ]
        return []

    def example(self, ctx: PluginContext, path: Path) -> str | None:
        if ctx.task is None:
            return None
        return with_status(path, {ctx.task.key: "implemented"})


class ReportParser(ItemParser):
    """report.md: what was done, how to run, how to test, known issues."""

    name = "team-report"

    def count(self, path: Path) -> int:
        return 1 if (read_file(path) or "").strip() else 0

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        return documents.report_problems(read_file(path) or "")

    def example(self, ctx: PluginContext, path: Path) -> str | None:
        return documents.example_report(str(ctx.state.get("description") or "The change."))


def _criteria_items(ctx: PluginContext) -> list[Task]:
    criteria, problems = documents.read_acceptance(ctx.item_dir / "acceptance.json")
    if problems:
        raise BadInputError(f"{ctx.item_dir / 'acceptance.json'}: {'; '.join(problems)}")
    return [Task(key=c.id, title=c.description, data={"command": c.check}) for c in criteria]


class AcceptanceChecksParser(ItemParser):
    """INTEGRATE's commands: each task's ``cmd:`` acceptance checks, then every criterion's."""

    name = "team-acceptance-checks"

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        tasks, _ = read_tasks(ctx.item_dir / "tasks.yaml")
        items = [
            Task(key=f"{t.id}:{n}", title=command, data={"command": command})
            for t in tasks
            for n, command in enumerate(t.commands(), start=1)
        ]
        return Parsed((*items, *_criteria_items(ctx)), "acceptance checks")


class CriteriaChecksParser(ItemParser):
    """DONE's commands: the check of every criterion of acceptance.json, named by its id."""

    name = "team-criteria-checks"

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        return Parsed(tuple(_criteria_items(ctx)), "acceptance.json")


SPEC = SpecParser()
ACCEPTANCE = AcceptanceParser()
ARCHITECTURE = ArchitectureParser()
TASKS = TasksParser()
LEAN_TASKS = LeanTasksParser()
TASK_IMPLEMENTED = TaskImplementedParser()
REPORT = ReportParser()
ACCEPTANCE_CHECKS = AcceptanceChecksParser()
CRITERIA_CHECKS = CriteriaChecksParser()
