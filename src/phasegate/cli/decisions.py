"""``phasegate decisions`` and ``phasegate answer``: the human gates of work items."""

from typing import Annotated, Any

import typer
from rich.markup import escape

from phasegate.cli.app import (
    AllItemsArgument,
    JsonOption,
    RepoOption,
    WorkflowOption,
    _repo,
    app,
    out,
)
from phasegate.cli.output import warn, write_json
from phasegate.errors import PhasegateError


@app.command()
def decisions(
    name: AllItemsArgument = None,
    as_json: JsonOption = False,
    workflow: WorkflowOption = None,
    repo: RepoOption = None,
) -> None:
    """List the decisions waiting for a person: question, files, choices, the answer command."""
    from phasegate.cli.status_command import unlisted_workflows
    from phasegate.config import load_config
    from phasegate.engine.answers import pending, record_command, with_journaled_answers
    from phasegate.engine.budget import BUDGET_DECISION, question_lapsed
    from phasegate.engine.items import iter_items, locate_item
    from phasegate.suggested_commands import named_elsewhere, shared_names, with_workflow
    from phasegate.workflow.registry import WorkflowRegistry

    root = _repo(repo)
    config = load_config(root)
    registry = WorkflowRegistry(root)
    unlisted: list[str] = []
    if name is not None:
        targets = [locate_item(root, name, registry, config, workflow, command="decisions")]
    else:
        targets = []
        unlisted = unlisted_workflows(registry, "decisions of the items")
        for wf, item_name, _ in iter_items(root, registry, config):
            try:
                targets.append(
                    locate_item(root, item_name, registry, config, wf, command="decisions")
                )
            except PhasegateError:
                continue
    # An answer command for a name another workflow has too must name the item's workflow.
    if name is not None:
        item = targets[0]
        shared = (
            {name} if named_elsewhere(root, name, item.workflow.name, registry, config) else set()
        )
    else:
        shared = shared_names((item.workflow.name, item.name) for item in targets)
    found: list[dict[str, Any]] = []
    for item in targets:
        try:
            state = item.load()
        except PhasegateError as exc:
            if name is not None:
                raise
            # One unreadable item does not hide the decisions of the others.
            warn(f"{exc} (its decisions are not listed)")
            continue
        shown = with_journaled_answers(item, state)
        # A budget question a cap raised in the config made moot: the next run goes on.
        lapsed = question_lapsed(
            item.config, item.workflow.name, shown, item.journal.path, item.workflow.roles
        )
        for record in pending(shown):
            if lapsed and record.get("id") == BUDGET_DECISION:
                continue
            command = record_command(item.name, record)
            if item.name in shared:
                command = with_workflow(command, item.name, item.workflow.name)
            # What agents wrote (questions, recommendations) is shown with secrets masked.
            listed = {"item": item.name, "workflow": item.workflow.name, **record}
            found.append(item.redactor.data({**listed, "command": command}))
    if as_json:
        write_json(found)
        return
    if not found:
        if name is not None:
            out.print(f"{name}: no decision waits.")
        elif unlisted:
            names = ", ".join(repr(n) for n in unlisted)
            one = len(unlisted) == 1
            which = f"workflow {names} does not" if one else f"workflows {names} do not"
            out.print(
                f"No decisions listed: {which} load (see above); the decisions of "
                f"{'its' if one else 'their'} items are listed once "
                f"{'it loads' if one else 'they load'} (phasegate validate FILE says why)"
            )
        else:
            out.print("No decisions are waiting.")
        return
    for record in found:
        # A name other workflows have too is shown with its item's workflow.
        named = record["item"]
        if named in shared:
            named = f"{named} ({record['workflow']})"
        out.print(
            f"[bold]{escape(named)}[/] {escape(record['id'])}: "
            f"{escape(str(record.get('question') or ''))}"
        )
        for choice, description in (record.get("choices") or {}).items():
            extra = f": {description}" if description else ""
            needs = " (needs a note)" if choice in (record.get("notes_required") or []) else ""
            out.print(f"    {escape(choice)}{escape(extra)}{needs}")
        if record.get("files"):
            out.print(f"  files: {escape(', '.join(record['files']))}")
        if record.get("recommendation"):
            out.print(f"  recommended: {escape(str(record['recommendation']))}")
        out.print(f"  answer: [bold]{escape(record['command'])}[/]")


@app.command()
def answer(
    name: Annotated[str, typer.Argument(help="The work item.")],
    decision: Annotated[str, typer.Argument(help="The decision's id (see phasegate decisions).")],
    choice: Annotated[
        str,
        typer.Argument(
            help="One of the decision's choices; 'CHOICE: note' adds a note (or use --note)."
        ),
    ],
    note: Annotated[
        str,
        typer.Option(
            "--note",
            "-n",
            help=(
                "A note with the answer (what to change...), at most 20,000 characters; "
                "not together with 'CHOICE: note'."
            ),
        ),
    ] = "",
    workflow: WorkflowOption = None,
    repo: RepoOption = None,
) -> None:
    """Answer a pending decision; the next run (or one waiting with --wait) acts on it."""
    from phasegate.cli.running import utf8_argument
    from phasegate.config import load_config
    from phasegate.engine.answers import answer_decision
    from phasegate.engine.items import locate_item
    from phasegate.suggested_commands import named_elsewhere, with_workflow
    from phasegate.workflow.registry import WorkflowRegistry

    utf8_argument(choice, "the answer")
    utf8_argument(note, "--note")
    root = _repo(repo)
    config = load_config(root)
    registry = WorkflowRegistry(root)
    item = locate_item(root, name, registry, config, workflow, command="answer")
    given = answer_decision(item, decision, choice, note)
    extra = f" ({given['note']})" if given["note"] else ""
    # Said as recorded: secrets in the note are masked here as in the state.
    said = item.redactor.text(f"{name}: {decision} answered {given['choice']}{extra}.")
    out.print(escape(said))
    if not item.running():
        how = str(given["next"])
        # Without --workflow the item was found by its name alone: no other workflow has it.
        if workflow is not None and named_elsewhere(
            root, name, item.workflow.name, registry, config
        ):
            how = with_workflow(how, name, item.workflow.name)
        out.print(escape(f"Next: {item.redactor.text(how)}"))
