"""What an agent node's calls and hooks get: MCP servers, the round, the executor's summary."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from phasegate.agents.base import AgentResult, McpServer
from phasegate.engine.plugin_api import Action, Task, plugin
from phasegate.verdicts.model import Verdict
from phasegate.workflow.model import AgentNode

if TYPE_CHECKING:
    from phasegate.engine.run import Run


CHANGES_LIMIT = 1500


def run_hooks(
    run: Run,
    refs: Any,
    path: str,
    node: AgentNode,
    task: Task | None,
    verdict: Verdict | None = None,
) -> None:
    """Run the node's action hooks ``refs`` (``on_enter``, ``after_execute``...)."""
    for ref in refs:
        action: Action = plugin("actions", ref.plugin)
        ctx = run.context(path, node, task, ref.with_)
        ctx.verdict, ctx.round = verdict, round_of(run, path)
        action.run(ctx)


def round_of(run: Run, path: str) -> str:
    """The node's round, ``visit.iteration``, as reviewers' tools spell it."""
    ns = run.state.node(path)
    return f"{ns.visit}.{ns.iteration}"


def summary_of(result: AgentResult, run: Run) -> str:
    """The executor's answer, redacted and clipped, as the changes it reports."""
    text = result.text.strip()
    if len(text) <= CHANGES_LIMIT:
        return run.item.redactor.text(text)
    return run.item.redactor.clip(text, CHANGES_LIMIT) + " [...]"


def mcp_servers(run: Run, role: str) -> tuple[McpServer, ...]:
    """phasegate's MCP server with the tools the role may call, if it is given any."""
    tools = run.workflow.roles[role].mcp if role in run.workflow.roles else ()
    if not tools:
        return ()
    return (
        McpServer(
            name="phasegate",
            # The running interpreter, so the agent's stripped-down PATH cannot miss it.
            command=sys.executable,
            args=(
                "-m",
                "phasegate",
                "mcp",
                "--repo",
                str(run.item.repo),
                "--change",
                run.item.name,
                "--tools",
                ",".join(tools),
            ),
            tools=tools,
        ),
    )
