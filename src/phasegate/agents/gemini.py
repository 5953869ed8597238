"""Google's Gemini CLI (``gemini -p``) as an agent backend.

One headless run per call: the prompt goes to stdin (``-p ""`` selects
headless mode; Gemini appends ``-p`` to stdin), ``--output-format json``
prints ``{session_id, response, stats}``. Read-only roles run with
``--approval-mode plan`` (writes only inside Gemini's own plans folder),
writers with ``auto_edit``; ``bypass_permissions: true`` (explicit opt-in)
gives writers ``yolo``. ``--skip-trust`` trusts the working directory for this
session only.

Each role is offered an explicit set of built-in tools (``tools.core`` in a
per-call settings overlay, ``GEMINI_CLI_HOME``: see
:mod:`phasegate.agents.gemini_mcp`): read-only roles ``list_directory``,
``read_file``, ``glob`` and ``grep_search`` (``read_only_tools``), writers
those and ``replace`` and ``write_file`` (``tools``); no shell, web or
sub-agents unless configured; ``[default]`` keeps Gemini's own set.
MCP servers go in through the same overlay with ``includeTools`` and policy
rules allowing exactly the listed tools, which plan mode then runs headless;
``--allowed-mcp-server-names`` keeps any other server (an extension's) from
starting. Gemini names the tools ``mcp_<server>_<tool>``.

Gemini has no structured-output flag: the reviewer prompt asks for JSON and
the verdict reader parses the text. On an API error stdout is empty and the
JSON error report is the last object on stderr. Gemini retries failed
requests on its own for minutes (``general.maxAttempts``): phasegate's
timeout bounds the whole call regardless.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from phasegate.agents.base import Access, AgentRequest, AgentResult, TokenUsage
from phasegate.agents.cli_probe import FlagCheck
from phasegate.agents.cli_support import CliBackend, CliSettings, error_line, tail
from phasegate.agents.gemini_auth import check_auth
from phasegate.agents.gemini_mcp import check_servers, overlay_home
from phasegate.process import ProcessResult

#: Gemini CLI's own exit statuses (others are the HTTP status of an API error, mod 256).
EXIT_MEANINGS = {
    41: "authentication failed or no auth method selected",
    42: "bad input",
    53: "turn limit reached",
    55: "the folder is not trusted",
}

#: What to check for an API error retrying cannot fix.
_ADVICE = {
    401: " (check the key in GEMINI_API_KEY, or the credentials gemini uses)",
    403: " (check the key in GEMINI_API_KEY, or the credentials gemini uses)",
    404: " (check backends.gemini.model and base_url)",
}


#: The built-in tools read-only roles are offered (``read_only_tools``).
READ_ONLY_TOOLS = ("list_directory", "read_file", "glob", "grep_search")
#: The built-in tools writers are offered (``tools``): reading and editing files, no shell.
WRITER_TOOLS = (*READ_ONLY_TOOLS, "replace", "write_file")
#: Gemini's shell tool (``run_shell_command(git)`` offers it for ``git`` commands only).
SHELL_TOOL = "run_shell_command"


class GeminiSettings(CliSettings):
    """Gemini CLI settings: the built-in tools each kind of role is offered."""

    read_only_tools: list[str] = Field(default_factory=lambda: list(READ_ONLY_TOOLS))
    tools: list[str] = Field(default_factory=lambda: list(WRITER_TOOLS))

    def offered(self, access: Access) -> list[str] | None:
        """The ``tools.core`` of a role with ``access`` (``None``: Gemini's own set)."""
        names = self.read_only_tools if access is Access.READ_ONLY else self.tools
        return None if "default" in names else list(names)


class GeminiBackend(CliBackend):
    """Google's Gemini CLI, headless."""

    name = "gemini"
    package = "@google/gemini-cli"
    min_version = "0.41.0"
    settings_model = GeminiSettings
    structured_output = False
    writes_files = True
    env_names = (
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_USE_GCA",
        "GOOGLE_APPLICATION_CREDENTIALS",
    )
    env_prefixes = ("GEMINI_",)
    required_flags = (
        FlagCheck("--prompt"),
        FlagCheck("--output-format", "json"),
        FlagCheck("--skip-trust"),
        FlagCheck("--approval-mode", "plan"),
        FlagCheck("--approval-mode", "auto_edit"),
        FlagCheck("--approval-mode", "yolo"),
        FlagCheck("--model"),
        FlagCheck("--include-directories"),
        FlagCheck("--resume"),
        FlagCheck("--allowed-mcp-server-names"),
    )

    def forced_env(self, request: AgentRequest | None) -> dict[str, str]:
        env: dict[str, str] = {}
        config_dir = self.config_dir()
        if config_dir is not None:
            # Gemini keeps settings, sessions and OAuth tokens under $GEMINI_CLI_HOME/.gemini.
            env["GEMINI_CLI_HOME"] = str(config_dir)
        if self.cfg.base_url:
            env["GOOGLE_GEMINI_BASE_URL"] = self.cfg.base_url
        return env

    def scratch_env(
        self, request: AgentRequest, scratch: Path, env: Mapping[str, str]
    ) -> dict[str, str]:
        assert isinstance(self.cfg, GeminiSettings)
        core = self.cfg.offered(request.access)
        # Gemini's own set (``default``) includes the shell too.
        shell = core is None or any(t.split("(")[0].strip() == SHELL_TOOL for t in core)
        base = env.get("GEMINI_CLI_HOME") or env.get("HOME") or os.path.expanduser("~")
        home = scratch / "gemini-home"
        # The shell's commands would otherwise see GEMINI_API_KEY: only pass_env
        # names are kept from Gemini's redaction of secret-looking variables.
        allowed = list(self.cfg.pass_env) if shell else None
        overlay_home(Path(base), home, request.mcp_servers, scratch, core, allowed)
        return {"GEMINI_CLI_HOME": str(home)}

    def arguments(self, request: AgentRequest, scratch: Path) -> list[str]:
        check_servers(request.mcp_servers)
        if request.access is Access.READ_ONLY:
            mode = "plan"
        else:
            mode = "yolo" if self.cfg.bypass_permissions else "auto_edit"
        args = ["-p", "", "--output-format", "json", "--skip-trust", "--approval-mode", mode]
        model = request.model or self.cfg.model
        if model:
            args += ["-m", model]
        for directory in request.extra_dirs:
            args += ["--include-directories", str(directory)]
        if request.session:
            args += ["--resume", request.session]
        # "=" form: the option takes an array and would swallow the words after it.
        args += [f"--allowed-mcp-server-names={server.name}" for server in request.mcp_servers]
        return args + self.cfg.extra_args

    def parse(self, request: AgentRequest, proc: ProcessResult) -> AgentResult:
        data = _json_object(proc.stdout.strip())
        if data is None or proc.exit_code != 0:
            return self._failure(proc, data)
        response = data.get("response")
        session = data.get("session_id")
        return AgentResult(
            text=response if isinstance(response, str) else "",
            exit_status=0,
            usage=_usage(data.get("stats") or {}),
            cost_usd=None,
            session_id=session if isinstance(session, str) else None,
            stderr=tail(proc.stderr),
        )

    def _failure(self, proc: ProcessResult, data: dict[str, Any] | None) -> AgentResult:
        report = data or _last_json_object(proc.stderr) or {}
        error = report.get("error") if isinstance(report.get("error"), Mapping) else None
        if error is None and proc.exit_code <= 0:  # no report: exited 0, or killed by a signal
            return self.crash(proc, "no JSON result on stdout")
        meaning = EXIT_MEANINGS.get(proc.exit_code)
        # A refused key, an unknown model: another attempt would only fail the same way.
        permanent = proc.exit_code == 41
        if error is not None:
            detail = str(error.get("message") or error.get("type") or "error").strip()
            code = error.get("code")
            # Gemini passes the API's error body on as the message: its own message is read.
            inner = _json_object(detail)
            api = inner.get("error") if inner is not None else None
            if isinstance(api, Mapping) and api.get("message"):
                status = f"{api['status']}: " if api.get("status") else ""
                detail = f"{status}{str(api['message']).strip()}"
                code = api.get("code") or code
            if "ModelNotFoundError" in proc.stderr:  # Gemini reports the API's 404 as code 1
                code = 404
            where = f" (code {code})" if code else ""
            detail += _ADVICE.get(code, "") if isinstance(code, int) else ""
            permanent = permanent or code in _ADVICE
            if "fetch failed" in detail:  # Node's word for a connection that was not made
                detail += f" (could not reach {self.cfg.base_url or 'the Gemini API'})"
        else:
            line = error_line(proc.stderr)
            detail = f"stderr: {line}" if line else "no message"
            where = ""
        prefix = f"{meaning}: " if meaning else ""
        session = report.get("session_id")
        return AgentResult(
            text="",
            exit_status=proc.exit_code or 1,
            error=f"gemini failed{where}, exit status {proc.exit_code}: {prefix}{detail}",
            session_id=session if isinstance(session, str) else None,
            stderr=tail(proc.stderr),
            permanent=permanent,
        )

    def credentials(self, env: Mapping[str, str]) -> str | None:
        return check_auth(env, self._workspace()).found

    def missing_credentials(self, env: Mapping[str, str]) -> str:
        return check_auth(env, self._workspace()).problem or self.login_hint()

    def _workspace(self) -> Path | None:
        return Path(self.cfg.base_dir) if self.cfg.base_dir else None

    def login_hint(self) -> str:
        return "set GEMINI_API_KEY, or run 'gemini' once and sign in"


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _last_json_object(text: str) -> dict[str, Any] | None:
    """The last top-level JSON object in ``text`` (Gemini prints stack traces before it)."""
    text = text[-65536:]
    starts = [0, *(m.start() + 1 for m in re.finditer(r"\n\{", text))]
    for start in reversed(starts):
        data = _json_object(text[start:].strip())
        if data is not None:
            return data
    return None


def _usage(stats: Mapping[str, Any]) -> TokenUsage:
    """Tokens summed over every model Gemini used (utility calls included)."""
    total = TokenUsage()
    models = stats.get("models") if isinstance(stats.get("models"), Mapping) else {}
    assert isinstance(models, Mapping)
    for model in models.values():
        tokens = model.get("tokens") if isinstance(model, Mapping) else None
        if not isinstance(tokens, Mapping):
            continue
        prompt = _int(tokens.get("prompt", tokens.get("input")))
        cached = _int(tokens.get("cached"))
        total = total + TokenUsage(
            input_tokens=max(0, prompt - cached),
            output_tokens=_int(tokens.get("candidates")) + _int(tokens.get("thoughts")),
            cache_read_tokens=cached,
        )
    return total


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0
