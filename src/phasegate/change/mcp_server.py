"""``phasegate mcp``: the change tools over MCP (stdio), with the official ``mcp`` SDK.

Agents reach it through their CLI's MCP configuration; the engine hands each
backend an :class:`~phasegate.agents.base.McpServer` naming this command, the
change, and the only tools the role may call (the server offers no others):
see :func:`phasegate.change.tools.server_for_role`. Only this module imports
the SDK, which is slow to import, so other commands do not pay for it.
"""

from __future__ import annotations

import json

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from phasegate import __version__
from phasegate.change.tools import SERVER_NAME, ChangeTools
from phasegate.errors import PhasegateError


def build_server(tools: ChangeTools) -> Server:
    """An MCP server whose tools are ``tools``' allowed ones."""

    async def list_tools(
        ctx: object, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.description,
                    input_schema=dict(spec.input_schema),
                )
                for spec in tools.specs()
            ]
        )

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = tools.call(params.name, params.arguments)
        except PhasegateError as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(exc))], is_error=True
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result))],
            structured_content=result,
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        instructions="phasegate's change workflow: a change's state and tasks; submit reviews.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(tools: ChangeTools) -> None:
    """Serve ``tools`` on stdin/stdout until the client goes away."""
    server = build_server(tools)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    except BaseException as exc:
        # The agent CLI closing our pipes ends the session; it is not an error.
        if not _only_broken_pipes(exc):
            raise


def _only_broken_pipes(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_broken_pipes(e) for e in exc.exceptions)
    return isinstance(exc, BrokenPipeError | ConnectionResetError)
