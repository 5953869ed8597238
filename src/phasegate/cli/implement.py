"""``phasegate implement SPEC-ID|PATH``: the implement workflow (seed 004) in one command."""

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from phasegate.cli.app import RepoOption, _repo, app, out
from phasegate.cli.running import parse_answers, run_item
from phasegate.errors import BadInputError, NotFoundError

if TYPE_CHECKING:  # imported where used: --help starts without the engine
    from phasegate.config import Config
    from phasegate.engine.item import WorkItem

WORKFLOW = "implement"


def plan_item(
    root: Path, config: "Config", target: str, name: str | None = None
) -> tuple[str, str]:
    """``(item name, plan)`` for ``target`` (a spec id or a path)."""
    from phasegate.implement.settings import implement_settings
    from phasegate.implement.spec import item_name_for, resolve_plan

    settings = implement_settings(config, root)
    plan = resolve_plan(root, target, settings.specs_dir)
    return (name or item_name_for(plan)), plan


def existing_item(root: Path, config: "Config", target: str) -> tuple[str, str] | None:
    """``(item name, plan)`` of the implement item named ``target``, if there is one.

    An item made with ``phasegate new NAME --workflow implement --plan PATH`` is
    resumed by its name, like the item of a spec.
    """
    from phasegate.engine.item import WorkItem, validate_item_name
    from phasegate.workflow.registry import WorkflowRegistry

    try:
        validate_item_name(target)
    except BadInputError:
        return None
    item = WorkItem(root, target, WorkflowRegistry(root).get(WORKFLOW), config)
    if not item.exists():
        return None
    plan = item.load(read_journal=False).data.get("plan")
    return (target, plan) if isinstance(plan, str) and plan else None


def plan_owner(root: Path, config: "Config", name: str, plan: str) -> str:
    """The implement item that implements ``plan``: ``name`` (the spec's) when it does or
    when no item does, else the one item made for it with ``phasegate new --plan``.
    """
    from phasegate.engine.item import WorkItem, items_dir
    from phasegate.errors import PhasegateError
    from phasegate.workflow.registry import WorkflowRegistry

    loaded = WorkflowRegistry(root).get(WORKFLOW)

    def implements(item_name: str) -> bool:
        try:
            item = WorkItem(root, item_name, loaded, config)
            return item.exists() and item.load(read_journal=False).data.get("plan") == plan
        except PhasegateError:
            return False  # not an item this command may run; `status` names what is wrong

    if implements(name):
        return name
    folder = root / items_dir(loaded.workflow, config)
    names = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    owners = [n for n in names if n != name and implements(n)]
    if len(owners) > 1:
        raise BadInputError(
            f"{plan} is implemented by the work items {', '.join(owners)}; name the one to "
            f"run: phasegate implement {owners[0]}"
        )
    return owners[0] if owners else name


def ensure_item(root: Path, config: "Config", name: str, plan: str, mode: str | None) -> "WorkItem":
    """The implement item ``name`` for ``plan``, created when it does not exist yet."""
    from phasegate.engine.item import WorkItem
    from phasegate.engine.items import create_item
    from phasegate.implement.spec import plan_title
    from phasegate.implement.where import check_plan
    from phasegate.workflow.registry import WorkflowRegistry

    loaded = WorkflowRegistry(root).get(WORKFLOW)
    item = WorkItem(root, name, loaded, config)
    if not item.exists():
        # An error in PLAN.md stops before the item is made: nothing is left behind.
        check_plan(root, config, loaded.workflow.roles, plan)
        description = plan_title(root / plan) or f"Implement {plan}"
        item = create_item(
            root, name, loaded, config, mode=mode, description=description, data={"plan": plan}
        )
        out.print(f"Created {name} (implement) for {plan}.")
        return item
    recorded = item.load(read_journal=False).data.get("plan")
    if recorded != plan:
        raise BadInputError(
            f"work item {name!r} implements {recorded}, not {plan}; give this plan its own "
            f"item: phasegate new NAME --workflow implement --plan {plan}"
        )
    refuse_new_unknown_agents(root, config, loaded.workflow.roles, plan)
    return item


def refuse_new_unknown_agents(
    root: Path, config: "Config", roles: Iterable[str], plan: str
) -> None:
    """An open task naming an unknown agent (added to PLAN.md while the run was stopped) is
    refused before the item's run calls any agent (exit 2). A plan that cannot be read is
    left to the run, which reports it with its path."""
    from phasegate.errors import PhasegateError
    from phasegate.implement.agents import find_agents
    from phasegate.implement.plan import read_plan
    from phasegate.implement.where import refuse_unknown_agents

    try:
        current = read_plan(root / plan, plan)
    except PhasegateError:
        return
    refuse_unknown_agents(current, find_agents(root, config, roles), plan)


@app.command()
def implement(
    target: Annotated[
        str,
        typer.Argument(
            help="A spec id (006: docs/specs/006*/PLAN.md), a PLAN.md path, or the name of "
            "an implement item."
        ),
    ],
    answer: Annotated[
        list[str] | None,
        typer.Option(
            "--answer",
            "-a",
            metavar="DECISION=CHOICE",
            help="Answer a decision before it is asked: DECISION=CHOICE, or "
            "'DECISION=CHOICE: note' for a choice that needs a note (repeatable).",
        ),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="At a decision without a terminal, wait for 'phasegate answer' (an escalation "
            "takes its default action after its timeout) instead of exiting 3.",
        ),
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            max=64,
            help="How many of a phase's parallel tasks run at once (default 3, or "
            "concurrency.jobs); 1 runs every task one after another in the work tree (a "
            "phase a run left under way in worktrees goes on in them, one at a time).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    repo: RepoOption = None,
) -> None:
    """Implement a spec's PLAN.md task by task: each task's agent, a reviewer chosen for it,
    revisions, escalation, the plan ticked.

    Creates the work item on first use (named after the spec: 006; none when PLAN.md
    has an error) and runs or resumes it; a plan given its own item with 'phasegate new
    NAME --workflow implement --plan PATH' runs that item. A phase's parallel tasks run
    at once, each in its own git worktree.
    Running again after an interruption resumes the review cycle it was in without
    calling an agent whose answer is recorded.
    """
    from phasegate.cli.workflow_progress import ImplementProgress
    from phasegate.config import load_config
    from phasegate.engine.runner import RunOptions

    root = _repo(repo)
    config = load_config(root)
    try:
        name, plan = plan_item(root, config, target)
    except (NotFoundError, BadInputError):
        # Not a plan (or an ambiguous spec id): the name of an implement item, if it is one.
        found = existing_item(root, config, target)
        if found is None:
            raise
        name, plan = found
    else:
        name = plan_owner(root, config, name, plan)
    ensure_item(root, config, name, plan, None)
    options = RunOptions(answers=parse_answers(answer), wait=wait, command=None, jobs=jobs)
    outcome = run_item(
        root,
        name,
        options,
        workflow=WORKFLOW,
        quiet=quiet,
        progress=ImplementProgress,
        command="implement",
    )
    if outcome.status in ("stopped", "completed"):
        out.print(escape(outcome.message))
