"""The ``auto`` backend: smoke-run any workflow without a model and without a script.

Every executor call writes the node's declared outputs (the valid example its
parser offers, else placeholder text; a folder gets a ``placeholder.md``); every
review gives the answer the workflow maps to ``pass`` (through the MCP tool the
reviewer must call, when the verdict is read from a file a tool writes). Gates
still stop for a person. Bind it with ``roles: {default: {backend: auto}}`` to
walk a workflow end to end and see every node, edge and state file it produces.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from phasegate.agents.base import Access, AgentRequest, AgentResult, Backend, McpServer, TokenUsage

PLACEHOLDER = "# {name}\n\nPlaceholder written by phasegate's auto backend ({role}, {node}).\n"
#: What the backend reads of its settings: none of its own; ``model`` comes from a role
#: binding, ``base_dir`` from phasegate. Any other key is a typo, refused as every backend
#: refuses it.
SETTINGS = ("model", "base_dir")


class AutoBackend(Backend):
    """Writes declared outputs, approves every review."""

    name = "auto"
    structured_output = True
    writes_files = True

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        import difflib

        from phasegate.errors import ConfigError

        for key in settings:
            if key not in SETTINGS:
                close = difflib.get_close_matches(str(key), SETTINGS, n=1)
                mean = f"did you mean {close[0]!r}? " if close else ""
                raise ConfigError(
                    f"backend {cls.name!r}: {key}: unknown setting ({mean}the auto backend "
                    f"takes only model; check backends.{cls.name} and the roles using it in "
                    ".phasegate/config.yaml)"
                )

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.check_settings(self.settings)

    def run(self, request: AgentRequest) -> AgentResult:
        started = time.monotonic()
        hints = request.hints
        try:
            if request.access is Access.WRITE:
                self._write_outputs(
                    request, hints.get("outputs") or [], hints.get("examples") or {}
                )
            answer = hints.get("answer") or {}
            structured = answer.get("structured")
            if "tool" in answer:
                self._call_tool(request, str(answer["tool"]), answer.get("arguments") or {})
        except (OSError, ValueError, RuntimeError) as exc:
            return AgentResult(text="", exit_status=1, error=f"auto backend: {exc}")
        return AgentResult(
            text=f"auto: {request.role} did {request.labels.get('node', '?')}",
            structured=structured,
            usage=TokenUsage(input_tokens=len(request.prompt_text()) // 4),
            cost_usd=0.0,
            duration_s=time.monotonic() - started,
        )

    def _write_outputs(
        self, request: AgentRequest, outputs: list[str], examples: Mapping[str, str]
    ) -> None:
        """Each output: the example its parser offers (a valid file), else a placeholder."""
        root = request.workdir.resolve()
        allowed = [root, *(d.resolve() for d in request.extra_dirs)]
        for name in outputs:
            target = (root / name).resolve()
            if not any(target == base or base in target.parents for base in allowed):
                raise ValueError(f"output {name!r} lies outside the work tree")
            if name.endswith("/") or target.is_dir():  # a folder: the gate wants a file in it
                target.mkdir(parents=True, exist_ok=True)
                target = target / "placeholder.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            if name in examples:
                target.write_text(examples[name], encoding="utf-8")
                continue
            text = PLACEHOLDER.format(
                name=target.name, role=request.role, node=request.labels.get("node", "?")
            )
            target.write_text(text + "\n- [ ] placeholder task\n", encoding="utf-8")

    def _call_tool(self, request: AgentRequest, tool: str, arguments: Mapping[str, Any]) -> None:
        server = next((s for s in request.mcp_servers if tool in s.tools), None)
        if server is None:
            raise RuntimeError(f"no MCP server offers the tool {tool!r}")
        call_mcp_tool(server, tool, arguments)


def call_mcp_tool(server: McpServer, tool: str, arguments: Mapping[str, Any]) -> Any:
    """Call ``tool`` on a stdio MCP server with the official client; raise on a tool error."""
    import os

    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=server.command,
        args=list(server.args),
        env={"PATH": os.environ.get("PATH", ""), **dict(server.env)},
    )

    async def main() -> Any:
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool(tool, dict(arguments))
            if getattr(result, "is_error", False):
                text = "".join(getattr(c, "text", "") for c in result.content)
                raise RuntimeError(f"tool {tool} refused the call: {text}")
            return result

    return anyio.run(main)
