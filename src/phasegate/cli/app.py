"""The ``phasegate`` commands.

No ``from __future__ import annotations`` in the command modules: typer reads
every command's annotations when it builds the command line, and string
annotations would each be compiled and evaluated at every start of the command.
"""

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from phasegate.cli.output import COLOR_MODES
from phasegate.cli.output import err as err  # re-exported: the command modules print with them
from phasegate.cli.output import out as out
from phasegate.errors import BadInputError, ConfigError
from phasegate.workflow.sources import example_names

# The engine, the workflow loader and the config models are imported by the commands
# that use them: ``phasegate --help`` and the hooks start without them.
EXIT_CODES_HELP = """\
Exit codes: 0 done; 1 internal error; 2 bad input (arguments, names, workflow or
config); 3 waiting on a human decision; 4 blocked (a hard prerequisite or a
required artifact missing, failed checks, a budget answered stop, a reviewer's
stop, a merge conflict, a change in another phase); 5 corrupt
state file (left untouched); 6 agent failure (or a backend that cannot run here);
7 work item busy (another run);
8 cannot write (disk full, a file size limit, I/O error, read-only file system, no
permission);
129, 130, 143 stopped by SIGHUP, SIGINT or SIGTERM (its agent killed first);
141 the reader of the output went away (as on SIGPIPE)."""

app = typer.Typer(
    name="phasegate",
    help=(
        "Drive AI coding agents through spec-driven workflows, enforced in code.\n\n"
        "Typical use: phasegate init; phasegate new NAME --description '...'; "
        "phasegate run NAME; phasegate status NAME.\n\n" + EXIT_CODES_HELP
    ),
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        out.print(f"phasegate {version('phasegate')}", markup=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the version and exit.", callback=_version, is_eager=True
        ),
    ] = False,
    color: Annotated[
        str,
        typer.Option(
            "--color",
            metavar="WHEN",
            help=f"{' | '.join(COLOR_MODES)}: colour a terminal only (and not with NO_COLOR "
            "set), always, or never. Accepted before or after the command.",
        ),
    ] = "auto",
) -> None:
    # --color is applied (and taken off the arguments) by phasegate.cli.main.
    pass


RepoOption = Annotated[
    Path | None,
    typer.Option("--repo", "-C", help="Run as if started in this directory.", show_default=False),
]
#: ``--json`` on the commands that can print JSON.
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
#: ``--workflow`` on the commands that name one work item.
WorkflowOption = Annotated[
    str | None, typer.Option("--workflow", "-w", help="Workflow of the item, if ambiguous.")
]
#: The optional work item of the commands that default to all of them.
AllItemsArgument = Annotated[str | None, typer.Argument(help="A work item (default: all of them).")]


def _repo(repo: Path | None) -> Path:
    from phasegate.repo_paths import find_repo

    start = repo or Path.cwd()
    if not start.is_dir():
        raise BadInputError(f"--repo {start} is not a directory")
    return find_repo(start)


@app.command()
def init(
    repo: RepoOption = None,
    test_command: Annotated[
        str | None,
        typer.Option(
            "--test-command",
            help="The project's test command (default: detected; '' for none).",
        ),
    ] = None,
    example: Annotated[
        str | None,
        typer.Option(
            "--example",
            help="Also copy an example workflow and its prompts into .phasegate/workflows/ "
            f"({', '.join(example_names())}).",
        ),
    ] = None,
) -> None:
    """Write .phasegate/config.yaml in the current git repository.

    The roles are bound to the agent CLIs found on PATH (claude, codex, gemini); with
    none, to the scripted backend, which answers from .phasegate/agents.yaml (a script
    to write), or set roles: {default: {backend: auto}} for placeholder answers. A
    config that exists is left unchanged (--test-command included).
    """
    from phasegate.agents.scripted import WITHOUT_A_MODEL
    from phasegate.config import (
        CONFIG_DIR,
        config_path,
        default_roles,
        detect_agent_clis,
        detect_test_command,
        git_toplevel,
        render_default_config,
    )
    from phasegate.engine.confine import check_folder_possible
    from phasegate.repo_paths import main_checkout
    from phasegate.workflow.sources import REPO_WORKFLOWS

    if repo is not None and not repo.is_dir():
        raise BadInputError(f"--repo {repo} is not a directory")  # as every other command
    # From inside an item's worktree, the main checkout (as every other command reads it).
    start = main_checkout((repo or Path.cwd()).resolve())
    top = git_toplevel(start)
    if top is None:
        raise ConfigError(f"{start} is not inside a git repository: run 'git init' first")
    if example is not None and example not in example_names():
        raise BadInputError(
            f"unknown example workflow {example!r} (examples: {', '.join(example_names())})"
        )
    path = config_path(top)
    # Before anything is written: a file where a folder goes leaves nothing half-made.
    check_folder_possible(path.parent, top, "run phasegate init")
    if example is not None:
        check_folder_possible(top / REPO_WORKFLOWS / "prompts" / example, top, "copy the example")
    if path.exists() and not path.is_file():
        raise BadInputError(
            f"{path.relative_to(top)} exists and is not a file; move it away to run phasegate init"
        )
    if path.exists():
        out.print(f"{path} already exists; left unchanged.")
        if test_command is not None:
            out.print(f"--test-command was not applied: set commands.test in {path} instead.")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        clis = detect_agent_clis()
        # An explicit --test-command '' means the project has none: nothing is detected.
        chosen = detect_test_command(top) if test_command is None else test_command.strip()
        text = render_default_config(chosen or None, clis)
        path.write_text(text, "utf-8")
        ignore = top / CONFIG_DIR / ".gitignore"
        if not ignore.exists():
            ignore.write_text("locks/\n", "utf-8")
        out.print(f"Wrote {path}.")
        if default_roles(clis) is None:
            out.print(
                "No agent CLI (claude, codex, gemini) was found on PATH: every role uses the "
                "scripted backend, which answers from .phasegate/agents.yaml (not written: "
                f"write it, see {WITHOUT_A_MODEL}, or set roles: {{default: {{backend: auto}}}} "
                "in the config to walk a workflow with placeholder answers). Install a CLI and "
                "set roles.default.backend in the config to use real agents.",
                markup=False,
            )
        if example is None:
            out.print("Next: phasegate new NAME --description '...' and phasegate run NAME")
    if example is None:
        return
    from phasegate.workflow.example_files import copy_example

    copied = copy_example(example, top)
    for written in copied.written:
        out.print(f"Wrote {written.relative_to(top)}.")
    for kept in copied.kept:
        out.print(f"{kept.relative_to(top)} already exists; left unchanged.")
    out.print(
        f"Next: phasegate new NAME --workflow {example} --description '...' and phasegate run NAME"
    )


@app.command()
def new(
    name: Annotated[str, typer.Argument(help="Work item name: letters, digits, '.', '-', '_'.")],
    workflow: Annotated[str, typer.Option("--workflow", "-w", help="Workflow to follow.")] = (
        "feature"
    ),
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            "-m",
            help="The workflow's mode (phasegate workflows lists them; team: full or lean); "
            "default: the workflow's.",
        ),
    ] = None,
    description: Annotated[
        str, typer.Option("--description", "-d", help="What the work item is about.")
    ] = "",
    worktree: Annotated[
        bool,
        typer.Option(
            "--worktree",
            help="Give the item its own git worktree (.phasegate/worktrees/NAME) and branch "
            "(phasegate/NAME); its agents work there.",
        ),
    ] = False,
    plan: Annotated[
        str | None,
        typer.Option(
            "--plan",
            help="The PLAN.md an implement item works through (default: the spec NAME's, "
            "docs/specs/NAME*/PLAN.md).",
        ),
    ] = None,
    repo: RepoOption = None,
) -> None:
    """Create a work item under a workflow."""
    from phasegate.cli.running import utf8_argument
    from phasegate.config import load_config
    from phasegate.engine.items import create_item
    from phasegate.integrations.claude_code.install import sync_worktrees
    from phasegate.suggested_commands import (
        errors_with_workflow,
        named_elsewhere,
        with_workflow,
    )
    from phasegate.workflow.registry import WorkflowRegistry

    utf8_argument(description, "--description")
    root = _repo(repo)
    config = load_config(root)
    config.check_workflow_names(root)
    registry = WorkflowRegistry(root)
    loaded = registry.get(workflow)
    data: dict[str, Any] = {}
    if plan is not None or loaded.workflow.name == "implement":
        from phasegate.cli.implement import plan_item

        if loaded.workflow.name != "implement":
            raise BadInputError(f"--plan is for the implement workflow, not {workflow!r}")
        _, data["plan"] = plan_item(root, config, plan or name, name)
        from phasegate.implement.where import check_plan

        # An error in it, or a task naming an unknown agent: no item is made.
        check_plan(root, config, loaded.workflow.roles, data["plan"])
    shared = named_elsewhere(root, name, loaded.workflow.name, registry, config)
    with errors_with_workflow(name, loaded.workflow.name, shared):  # "continue it with ..."
        item = create_item(
            root,
            name,
            loaded,
            config,
            mode=mode,
            description=description,
            worktree=worktree,
            data=data,
        )
    state = item.load(read_journal=False)
    from phasegate.engine.status import continue_command, current_label

    # A workflow with commands runs its items through them: the one that runs where the
    # item starts (its mode's start).
    how = continue_command(loaded.workflow, name, current_label(loaded.workflow, state))
    if loaded.workflow.name == "implement":
        how = f"phasegate implement {name}"
    if shared:
        how = with_workflow(how, name, loaded.workflow.name)
    from phasegate.config import config_path

    if not config_path(root).exists():
        # Without a config every role is bound to a scripted backend with no script.
        how = f"phasegate init (this repository has no .phasegate/config.yaml), then {how}"
    out.print(
        f"Created {name} ({workflow}, mode {state.mode}) in "
        f"{item.item_dir.relative_to(root)}.\nNext: {how}"
    )
    if state.worktree:
        sync_worktrees(root)  # Claude Code sessions started in the worktree get the hooks too
        out.print(f"Worktree: {state.worktree} (branch {state['branch']}); agents work there.")


def _check_flag_answers(answers: dict[str, str], *, yes: bool, partial: str | None) -> None:
    """Refuse ``--yes`` or ``--partial X`` given with an ``--answer`` that answers the same
    decision otherwise (``transition-warning=stop``): one of them would be ignored."""
    from phasegate.engine.answers import split_choice

    for flag, decision, meant in (
        ("--yes", "transition-warning", "proceed" if yes else None),
        (f"--partial {partial}", "partial-phase", partial),
    ):
        given = answers.get(decision)
        if meant is not None and given is not None and split_choice(given)[0] != meant:
            raise BadInputError(
                f"{flag} and --answer {decision}={given} answer decision {decision} "
                "differently; give one of them"
            )


@app.command()
def run(
    name: Annotated[str, typer.Argument(help="The work item to run (or resume).")],
    phase: Annotated[
        str | None,
        typer.Option(
            "--phase",
            "-p",
            help="Run only this phase (checked against prerequisites; refused once the item "
            "is complete). phasegate workflows lists each workflow's phases.",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until", "-u", help="Stop after this phase completes (one of the workflow's phases)."
        ),
    ] = None,
    command: Annotated[
        str | None,
        typer.Option(
            "--command",
            "-c",
            help="Run one of the workflow's commands (e.g. plan; phasegate workflows lists them).",
        ),
    ] = None,
    no_review: Annotated[
        bool,
        typer.Option(
            "--no-review",
            help="Skip the reviewer in the phases this run executes (checks made in code "
            "still hold; refused by a workflow that sets allow_no_review: false).",
        ),
    ] = False,
    partial: Annotated[
        str | None,
        typer.Option(
            "--partial",
            help="For a phase started but not completed: continue | fresh | review. "
            "Without a terminal the default is continue.",
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Proceed through transition warnings.")
    ] = False,
    answer: Annotated[
        list[str] | None,
        typer.Option(
            "--answer",
            "-a",
            metavar="DECISION=CHOICE",
            help="Answer a decision before it is asked: DECISION=CHOICE, or "
            "'DECISION=CHOICE: note' for a choice that needs a note (repeatable; "
            "checked against the workflow's decisions and their choices before the run).",
        ),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="At a decision without a terminal, wait for 'phasegate answer' (or the "
            "dashboard) instead of exiting 3.",
        ),
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            max=64,
            help="How many items of a parallel foreach run at once (overrides its "
            "'parallel'; 1 runs them one at a time, in the work tree unless a run left "
            "the loop under way in worktrees).",
        ),
    ] = None,
    workflow: WorkflowOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    repo: RepoOption = None,
) -> None:
    """Walk a work item through its workflow until done, a human decision, or a hard block.

    Running again after an interruption resumes from the recorded state, inside
    a loop too, without calling an agent whose answer is already recorded.

    A decision is asked at the terminal; without one the run stops (exit code 3)
    printing the command that answers it (phasegate answer), then run again.
    """
    from phasegate.cli.running import parse_answers, run_item
    from phasegate.engine.runner import PARTIAL_CHOICES, RunOptions

    if partial is not None and partial not in PARTIAL_CHOICES:
        raise BadInputError(f"--partial must be one of {', '.join(PARTIAL_CHOICES)}")
    if phase is not None and until is not None:
        raise BadInputError("--phase and --until cannot be combined")
    answers = parse_answers(answer)
    _check_flag_answers(answers, yes=yes, partial=partial)
    root = _repo(repo)
    options = RunOptions(
        phase=phase,
        until=until,
        no_review=no_review,
        partial=partial,
        yes=yes,
        command=command,
        answers=answers,
        wait=wait,
        jobs=jobs,
    )
    outcome = run_item(root, name, options, workflow=workflow, quiet=quiet)
    if outcome.status in ("stopped", "phase-done"):
        out.print(escape(outcome.message))
