"""The Definition of Done of seed 003, checked in code before a session reaches DONE.

DONE only when:

1. every criterion of acceptance.json is met: its check command passed in
   the final check round (node ``dod``), which records each criterion by id;
2. status.json, read back from disk, says ``current_state: DONE`` and holds
   no pending user decision;
3. report.md has what was done, how to run, how to test and known issues;
4. every core agent was dispatched at least once, as the journal shows
   (full mode: SpecAgent, Architect, Planner, Coder, Reviewer, QA, Security,
   Integrator, Docs; lean mode: Coder and Reviewer);
5. every task of tasks.yaml is ``completed`` (seed 003 enters INTEGRATE only
   once every task is: a task added after IMPLEMENT_LOOP ended runs first).

:func:`unmet` names each part that does not hold; an empty list is DONE.
"""

from __future__ import annotations

from phasegate.engine.plugin_api import PluginContext
from phasegate.engine.prompting import read_file
from phasegate.errors import StateCorruptError
from phasegate.team.documents import read_acceptance, report_problems
from phasegate.team.session import AGENT_NAMES, CORE_FULL, CORE_LEAN
from phasegate.team.status_file import STATUS_FILE, read_status
from phasegate.team.tasks import TeamTask, read_tasks

DOD_NODE = "dod"


def criteria_problems(ctx: PluginContext) -> list[str]:
    """Criteria of acceptance.json whose check did not pass in the final check round."""
    criteria, problems = read_acceptance(ctx.item_dir / "acceptance.json")
    if problems:
        return [f"acceptance.json: {p}" for p in problems]
    found = ctx.state.peek(DOD_NODE)
    outcomes = {str(c.get("name")): c for c in (found.get("checks") if found else None) or []}
    missing: list[str] = []
    for criterion in criteria:
        outcome = outcomes.get(criterion.id)
        if outcome is None:
            missing.append(f"acceptance criterion {criterion.id} was not checked")
        elif not outcome.get("passed") or outcome.get("skipped"):
            missing.append(
                f"acceptance criterion {criterion.id} is not met (`{criterion.check}` failed)"
            )
    return missing


def status_problems(ctx: PluginContext) -> list[str]:
    """What status.json on disk says against DONE."""
    path = ctx.item_dir / STATUS_FILE
    try:
        status = read_status(path)
    except StateCorruptError as exc:
        return [str(exc)]
    if status is None:
        return [f"{path} is missing"]
    problems: list[str] = []
    if status.current_state != "DONE":
        problems.append(f"status.json says current_state {status.current_state}, not DONE")
    pending = [d.decision_id for d in status.user_decisions if d.status == "pending"]
    if pending:
        problems.append(f"status.json has pending user decisions: {', '.join(pending)}")
    return problems


def report_missing(ctx: PluginContext) -> list[str]:
    """What report.md lacks."""
    text = read_file(ctx.item_dir / "report.md")
    if text is None or not text.strip():
        return ["report.md is missing or empty"]
    return [f"report.md: {p}" for p in report_problems(text)]


def dispatched_roles(ctx: PluginContext) -> set[str]:
    """Every role the journal shows an agent dispatched for."""
    return {
        str(e.get("role"))
        for e in ctx.item.journal.events()
        if e.get("event") == "agent.dispatched"
    }


def agents_missing(ctx: PluginContext) -> list[str]:
    """Core agents of the mode that were never dispatched."""
    core = CORE_FULL if ctx.state.mode == "full" else CORE_LEAN
    missing = [AGENT_NAMES[r] for r in core if r not in dispatched_roles(ctx)]
    if not missing:
        return []
    return [f"core agents never dispatched: {', '.join(missing)}"]


def open_tasks(ctx: PluginContext) -> list[TeamTask]:
    """The tasks of tasks.yaml that are not ``completed``."""
    tasks, _ = read_tasks(ctx.item_dir / "tasks.yaml")
    return [t for t in tasks if t.status != "completed"]


def tasks_problems(ctx: PluginContext) -> list[str]:
    """What tasks.yaml says against DONE: a task that is not ``completed``."""
    path = ctx.item_dir / "tasks.yaml"
    _, problems = read_tasks(path)
    if problems:
        return [f"tasks.yaml: {p}" for p in problems]
    return [f"task {t.id} is not completed (status {t.status})" for t in open_tasks(ctx)]


def unmet(ctx: PluginContext, *, status: bool = True) -> list[str]:
    """Each part of the Definition of Done that does not hold (empty: DONE).

    ``status=False`` leaves out status.json, which only says DONE while the
    session stands at the check itself.
    """
    return [
        *criteria_problems(ctx),
        *(status_problems(ctx) if status else []),
        *report_missing(ctx),
        *agents_missing(ctx),
        *tasks_problems(ctx),
    ]
