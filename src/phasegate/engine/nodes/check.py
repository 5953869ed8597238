"""The ``check`` node: shell commands as a gate, outcome ``pass`` or ``fail``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate.engine.checks import CheckCommand, CheckRound, resolve
from phasegate.engine.plugin_api import ItemParser, Task, plugin
from phasegate.workflow.model import AnyNode, CheckNode
from phasegate.workflow.parts import BLOCKED_TARGET, ItemsSource

if TYPE_CHECKING:
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Steps


def listed_commands(
    run: Run, path: str, node: AnyNode, task: Task | None, source: ItemsSource
) -> tuple[CheckCommand, ...]:
    """The check commands a parser plug-in lists (each item's ``data["command"]``)."""
    parser: ItemParser = plugin("parsers", source.parser)
    file = run.item.item_dir / source.file if source.file else None
    ctx = run.context(path, node, task, source.with_)
    found = []
    for item in parser.parse(ctx, file).items:
        command = item.data.get("command")
        found.append(CheckCommand(item.key, str(command) if command else None))
    return tuple(found)


def run_check(run: Run, path: str, node: CheckNode, task: Task | None) -> Steps:
    from phasegate.engine.walk import Checks, Outcome

    ns = run.state.node(path)
    if run.over_visit_limit(path):
        return Outcome("exhausted")
    commands = list(resolve(node.run, run.item.config, required=True))
    # A name the configuration lacks: no agent can fix that, so no outcome sends it back.
    unconfigured = {command.name for command in commands if not command.command}
    if node.commands_from is not None:
        commands += listed_commands(run, path, node, task, node.commands_from)
    round_ = CheckRound(
        key=f"{path}#{ns.visit}/checks",
        path=path,
        label=run.label(path),
        iteration=1,
        commands=tuple(commands),
        workdir=run.workspace_dir(path),  # a parallel loop's item: its worktree
    )
    outcomes = yield Checks(round_)
    failures = [o for o in outcomes if not o.passed]
    ns = run.state.node(path)
    ns["checks"] = [{"name": o.name, "passed": o.passed, "skipped": o.skipped} for o in outcomes]
    if failures:
        stuck = any(o.name in unconfigured and o.command is None for o in failures)
        # Its `fail` would run the nodes it leads to again for nothing: the run stops
        # blocked, and the next one retries the check (once the command is configured).
        target = BLOCKED_TARGET if stuck else None
        return Outcome("fail", target=target, issues=[o.issue() for o in failures])
    return Outcome("pass")
