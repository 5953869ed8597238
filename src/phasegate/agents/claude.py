"""Claude Code (``claude -p``) as an agent backend.

One headless run per call: the prompt goes to stdin, ``--output-format json``
prints one result object. Verdicts use ``--json-schema`` (Claude Code then
offers a ``StructuredOutput`` tool and puts its input in ``structured_output``).

Permissions, least privilege first:

* read-only roles: ``--permission-mode plan`` and ``--tools`` limited to the
  read-only tools (``Read,Glob,Grep`` by default), so write tools are not
  even offered; with MCP servers, ``dontAsk`` instead of plan (plan mode
  refuses MCP tools), which runs only the pre-approved tools: the MCP tools
  and reading inside the work tree and the ``--add-dir`` folders;
* writers: ``--permission-mode acceptEdits``, which accepts edits inside the
  working directory and the ``--add-dir`` folders only, ``--tools`` offering
  exactly the configured tools (``Read,Glob,Grep,Edit,Write`` by default, plus
  the tool of each ``allowed_tools`` entry, so ``Bash(pytest:*)`` offers
  ``Bash``), and an ``--allowedTools`` list (reading inside the work tree,
  ``Read(./**)``, by default; a bare ``Read`` would pre-approve reading any
  file on the machine; add e.g.
  ``Bash(pytest:*)`` in config, but not ``Write``/``Edit``: those would be
  pre-approved for any path). A tool that is not offered cannot be called at
  all, whatever Claude Code would auto-approve (it runs read-only shell
  commands such as ``uname`` or ``git log``, and in ``acceptEdits`` file
  writes inside the tree such as ``echo hi > file``, without asking);
* a writer offered Bash also gets ``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1`` (unless
  ``env`` sets it), so its commands run in Claude Code's sandbox without the
  provider key; Claude Code then leaves acceptEdits for its default mode, so
  edits inside the tree and the ``--add-dir`` folders are pre-approved instead
  (``Edit(./**)``). On Linux the sandbox needs ``bwrap`` and ``socat``: without
  them such a call fails before it starts;
* ``bypass_permissions: true`` (explicit opt-in) runs writers with
  ``--permission-mode bypassPermissions`` (still only the offered tools);
  read-only roles stay read-only.

A ``base_url`` ending in ``/v1`` is cut to the host part: Claude Code adds
``/v1/messages`` itself.

Failure is judged by ``is_error`` and the exit status, never by ``subtype``
(an API error is reported as ``subtype: success, is_error: true``). An answer
without ``structured_output`` although a schema was asked for is returned as
its text alone: the verdict reader records it as unclear, never approved, as
it does for every backend that enforces a schema.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from phasegate.agents.base import Access, AgentRequest, AgentResult, Availability, TokenUsage
from phasegate.agents.cli_probe import FlagCheck
from phasegate.agents.cli_support import CliBackend, CliSettings, is_macos, tail
from phasegate.process import ProcessResult

#: The tools read-only roles are offered (``read_only_tools``).
READ_ONLY_TOOLS = ("Read", "Glob", "Grep")
#: The tools writers are offered (``tools``): reading and editing files, no shell.
WRITER_TOOLS = ("Read", "Glob", "Grep", "Edit", "Write")
#: The rules writers may use without asking (``allowed_tools``): reading inside the work
#: tree (a ``Read`` rule covers Glob and Grep too). A bare ``Read``, ``Glob`` or ``Grep``
#: would pre-approve reading any file on the machine; reads inside the work tree and the
#: ``--add-dir`` folders need no approval anyway, and reads elsewhere are refused.
PRE_APPROVED_TOOLS = ("Read(./**)",)
CLOUD_SWITCHES = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
#: Set to 1, Claude Code removes its provider key from the environment of the commands
#: its Bash tool runs (in its sandbox: on Linux that needs ``bwrap`` and ``socat``).
ENV_SCRUB = "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"
#: What Claude Code's sandbox needs on Linux (the Debian packages ``bubblewrap`` and ``socat``).
LINUX_SANDBOX_COMMANDS = ("bwrap", "socat")


class ClaudeSettings(CliSettings):
    """Claude Code settings: the tools each kind of role is offered, and what runs unasked."""

    read_only_tools: list[str] = Field(default_factory=lambda: list(READ_ONLY_TOOLS))
    tools: list[str] = Field(default_factory=lambda: list(WRITER_TOOLS))
    allowed_tools: list[str] = Field(default_factory=lambda: list(PRE_APPROVED_TOOLS))

    def writer_tools(self) -> list[str]:
        """What a writer is offered: ``tools`` plus the built-in tool of each allowed rule.

        ``default`` (Claude Code's own full set) cannot be combined with names.
        """
        if "default" in self.tools:
            return ["default"]
        offered = list(self.tools)
        for rule in self.allowed_tools:
            name = rule.split("(", 1)[0].strip()
            if name and not name.startswith("mcp__") and name not in offered:
                offered.append(name)
        return offered


class ClaudeBackend(CliBackend):
    """Anthropic's Claude Code CLI, headless."""

    name = "claude"
    package = "@anthropic-ai/claude-code"
    # The oldest release phasegate's tests were run on and pass: 2.0.45 is the first
    # with --tools, --json-schema and dontAsk together, but before 2.1.64 acceptEdits
    # lets Write and shell redirections out of the work tree through a symlink.
    min_version = "2.1.64"
    settings_model = ClaudeSettings
    structured_output = True
    writes_files = True
    env_names = (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "ANTHROPIC_CUSTOM_HEADERS",
        "CLAUDE_CONFIG_DIR",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "CLOUD_ML_REGION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "DISABLE_AUTOUPDATER",
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
    )
    env_prefixes = ("ANTHROPIC_", "CLAUDE_CODE_", "VERTEX_REGION_")
    required_flags = (
        FlagCheck("--print"),
        FlagCheck("--output-format", "json"),
        FlagCheck("--model"),
        FlagCheck("--permission-mode", "plan"),
        FlagCheck("--permission-mode", "acceptEdits"),
        FlagCheck("--permission-mode", "bypassPermissions"),
        FlagCheck("--permission-mode", "dontAsk"),
        FlagCheck("--tools"),
        FlagCheck("--allowedTools"),
        FlagCheck("--add-dir"),
        FlagCheck("--mcp-config"),
        FlagCheck("--strict-mcp-config"),
        FlagCheck("--json-schema"),
        FlagCheck("--resume"),
        FlagCheck("--max-budget-usd"),
    )

    @property
    def claude_settings(self) -> ClaudeSettings:
        assert isinstance(self.cfg, ClaudeSettings)
        return self.cfg

    def offers_bash(self, request: AgentRequest | None) -> bool:
        """Whether a call (a writer's, for ``None``) is offered Bash, in acceptEdits mode."""
        if request is not None and request.access is Access.READ_ONLY:
            return False
        cfg = self.claude_settings
        tools = cfg.writer_tools()
        return not cfg.bypass_permissions and ("Bash" in tools or "default" in tools)

    def scrubs_env(self, request: AgentRequest | None) -> bool:
        """Whether the Bash commands of a call run without the provider key.

        On whenever Bash is offered, unless ``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`` is set in
        ``env`` (or phasegate's environment): ``"0"`` there lets commands see the key.
        """
        chosen = self.cfg.env.get(ENV_SCRUB, os.environ.get(ENV_SCRUB))
        if chosen is not None:
            return chosen.strip().lower() not in ("", "0", "false", "no")
        return self.offers_bash(request)

    def missing_sandbox(self, request: AgentRequest | None) -> str | None:
        """Why the key cannot be kept from a call's Bash commands here, or ``None``."""
        if not self.scrubs_env(request) or not sys.platform.startswith("linux"):
            return None
        missing = [name for name in LINUX_SANDBOX_COMMANDS if shutil.which(name) is None]
        if not missing:
            return None
        return (
            f"Bash is offered to Claude Code, whose sandbox keeps the provider key out of "
            f"its commands, but {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
            f"not installed (apt-get install bubblewrap socat); or set "
            f"{ENV_SCRUB}: '0' in backends.claude.env to let commands see the key"
        )

    def availability(self) -> Availability:
        found = super().availability()
        why = self.missing_sandbox(None)
        if not found.usable or why is None:
            return found
        return Availability(False, f"{found.detail}; but {why}")

    def run(self, request: AgentRequest) -> AgentResult:
        why = self.missing_sandbox(request)
        if why is not None:
            # Retrying cannot help: the run stops as on a bad setting.
            return AgentResult(text="", exit_status=1, error=f"claude: {why}", bad_setting=True)
        return super().run(request)

    def forced_env(self, request: AgentRequest | None) -> dict[str, str]:
        env: dict[str, str] = {}
        chosen = ENV_SCRUB in self.cfg.env or ENV_SCRUB in os.environ
        if not chosen and self.scrubs_env(request):
            env[ENV_SCRUB] = "1"
        config_dir = self.config_dir()
        if config_dir is not None:
            env["CLAUDE_CONFIG_DIR"] = str(config_dir)
        if self.cfg.base_url:
            env["ANTHROPIC_BASE_URL"] = anthropic_base_url(self.cfg.base_url)
        if request is not None and request.mcp_servers:
            # Otherwise Claude Code defers MCP tools behind its ToolSearch tool and
            # the model never sees the tool it must call (e.g. create_review).
            env["ENABLE_TOOL_SEARCH"] = "false"
        return env

    def arguments(self, request: AgentRequest, scratch: Path) -> list[str]:
        cfg = self.claude_settings
        args = ["-p", "--output-format", "json"]
        model = request.model or cfg.model
        if model:
            args += ["--model", model]
        allowed: list[str] = []
        if request.access is Access.READ_ONLY and request.mcp_servers:
            # Plan mode refuses every MCP tool; dontAsk runs only what is pre-approved:
            # reading inside the work tree and the extra folders, nothing else.
            args += ["--permission-mode", "dontAsk", "--tools", ",".join(cfg.read_only_tools)]
            allowed += read_rules(request.extra_dirs)
        elif request.access is Access.READ_ONLY:
            args += ["--permission-mode", "plan", "--tools", ",".join(cfg.read_only_tools)]
        elif cfg.bypass_permissions:
            args += [
                "--permission-mode",
                "bypassPermissions",
                "--tools",
                ",".join(cfg.writer_tools()),
            ]
        else:
            args += ["--permission-mode", "acceptEdits", "--tools", ",".join(cfg.writer_tools())]
            allowed += cfg.allowed_tools
            if self.scrubs_env(request):
                # Claude Code then runs in its default mode, not acceptEdits: edits inside
                # the work tree and the extra folders are pre-approved instead.
                allowed += edit_rules(request.extra_dirs)
        for directory in request.extra_dirs:
            args += ["--add-dir", str(directory)]
        if request.mcp_servers:
            servers: dict[str, Any] = {
                server.name: {
                    "type": "stdio",
                    "command": server.command,
                    "args": list(server.args),
                    "env": dict(server.env),
                }
                for server in request.mcp_servers
            }
            # Inline JSON, not a file: the servers' env may hold secrets.
            args += ["--mcp-config", json.dumps({"mcpServers": servers}), "--strict-mcp-config"]
            allowed += [
                f"mcp__{server.name}__{tool}"
                for server in request.mcp_servers
                for tool in server.tools
            ]
        if allowed:
            args += ["--allowedTools", ",".join(allowed)]
        if request.output_schema is not None:
            args += ["--json-schema", json.dumps(dict(request.output_schema))]
        if request.session:
            args += ["--resume", request.session]
        if request.max_budget_usd is not None:
            args += ["--max-budget-usd", f"{max(request.max_budget_usd, 0.000001):.6f}"]
        return args + cfg.extra_args

    def parse(self, request: AgentRequest, proc: ProcessResult) -> AgentResult:
        data = _result_object(proc.stdout)
        if data is None:
            return self.crash(proc, "no JSON result on stdout")
        usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
        assert isinstance(usage, Mapping)
        tokens = TokenUsage(
            input_tokens=_int(usage.get("input_tokens")),
            output_tokens=_int(usage.get("output_tokens")),
            cache_read_tokens=_int(usage.get("cache_read_input_tokens")),
            cache_write_tokens=_int(usage.get("cache_creation_input_tokens")),
        )
        cost = data.get("total_cost_usd")
        text = data.get("result")
        text = text if isinstance(text, str) else ""
        structured = data.get("structured_output")
        error: str | None = None
        if data.get("is_error") is True or proc.exit_code != 0:
            status = data.get("api_error_status")
            where = f" (API status {status})" if status else ""
            # A stop of Claude Code's own (--max-budget-usd, --max-turns) has no text,
            # only ``errors`` ("Reached maximum budget ($0.01)").
            errors = data.get("errors") if isinstance(data.get("errors"), list) else []
            assert isinstance(errors, list)
            detail = text or "; ".join(str(e) for e in errors) or tail(proc.stderr, 400)
            error = (
                f"claude reported an error{where}, exit status {proc.exit_code}: {detail.strip()}"
            )
        denials = data.get("permission_denials")
        stderr = tail(proc.stderr)
        if denials:
            names = ", ".join(_denial(d) for d in denials if isinstance(d, Mapping))
            stderr = (stderr + f"\n[phasegate] permission denied for: {names}").strip()
        return AgentResult(
            text=text,
            structured=structured if isinstance(structured, Mapping) else None,
            exit_status=proc.exit_code or (1 if error else 0),
            usage=tokens,
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
            session_id=data.get("session_id") if isinstance(data.get("session_id"), str) else None,
            error=error,
            stderr=stderr,
        )

    def credentials(self, env: Mapping[str, str]) -> str | None:
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
            if env.get(name):
                return name
        for name in CLOUD_SWITCHES:
            if env.get(name) not in (None, "", "0"):
                return name
        home = Path(env.get("HOME") or os.path.expanduser("~"))
        configured = env.get("CLAUDE_CONFIG_DIR")
        config = Path(configured) if configured else home / ".claude"
        if (config / ".credentials.json").is_file():
            return f"logged in ({config / '.credentials.json'})"
        if is_macos():
            return "possibly the macOS keychain (not checked)"
        return None

    def login_hint(self) -> str:
        return "set ANTHROPIC_API_KEY, or run 'claude' once and log in"


def anthropic_base_url(url: str) -> str:
    """``url`` without a trailing ``/v1``: Claude Code appends ``/v1/messages`` itself."""
    trimmed = url.rstrip("/")
    return trimmed[: -len("/v1")] if trimmed.endswith("/v1") else trimmed


def _result_object(stdout: str) -> dict[str, Any] | None:
    """The result object: the whole stdout, else its last JSON line."""
    text = stdout.strip()
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.startswith("{")]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and ("result" in data or "is_error" in data):
            return data
    return None


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0


def read_rules(extra_dirs: Sequence[Path]) -> list[str]:
    """Permission rules that allow reading inside the work tree and ``extra_dirs`` only
    (``//`` starts an absolute path in Claude Code's rules)."""
    return ["Read(./**)", *(f"Read(/{Path(d).resolve()}/**)" for d in extra_dirs)]


def edit_rules(extra_dirs: Sequence[Path]) -> list[str]:
    """Permission rules that allow editing (and writing) inside the work tree and
    ``extra_dirs`` only: what ``acceptEdits`` accepts."""
    return ["Edit(./**)", *(f"Edit(/{Path(d).resolve()}/**)" for d in extra_dirs)]


#: The argument of a denied tool call that says what it was for (the first one present).
_DENIAL_TARGETS = ("file_path", "notebook_path", "path", "command", "url", "pattern")


def _denial(denial: Mapping[str, Any]) -> str:
    """``Write /tmp/x/outside.txt``: the denied tool and the path (or command) it was given."""
    name = str(denial.get("tool_name"))
    given = denial.get("tool_input")
    if isinstance(given, Mapping):
        for key in _DENIAL_TARGETS:
            target = given.get(key)
            if isinstance(target, str) and target.strip():
                target = " ".join(target.split())
                return f"{name} {target if len(target) <= 200 else target[:197] + '...'}"
    return name
