"""OpenAI's Codex CLI (``codex exec --json``) as an agent backend.

One run per call: ``codex exec --json ... -- -`` reads the prompt from stdin
and prints JSONL events. Verdicts use ``--output-schema FILE`` (the final
agent message is the JSON answer). Read-only roles run with ``-s read-only``,
writers with ``-s workspace-write``; ``bypass_permissions: true`` (explicit
opt-in) gives writers ``-s danger-full-access``. A session continues with
``codex exec ... resume``, which takes its sandbox as ``-c sandbox_mode=...``.

``workspace-write`` alone also lets commands write to ``/tmp`` and
``$TMPDIR``. phasegate closes both (``sandbox_workspace_write.exclude_slash_tmp``
and ``exclude_tmpdir_env_var``) and gives a writer a private ``TMPDIR`` in the
call's scratch folder instead (writable, deleted when the call ends), so
test runners that need a temporary folder still work.

Read-only roles on Codex 0.169 or later run under a permission profile of
phasegate's (``-c default_permissions=...``) instead of ``-s read-only``:
commands may read the work tree, the request's extra folders, the
repository's git folder, Codex's own installation and the system's minimal
set (``:minimal``: ``/usr``, ``/etc``...), and nothing else, and write
nowhere. Writers keep ``-s workspace-write``, which confines writes only.

Codex itself needs the provider key, but the commands it runs do not: the
variables phasegate would redact (``*_API_KEY``, ``*_TOKEN``...) are kept out
of their environment (``shell_environment_policy.exclude``), except those the
user lists in ``pass_env`` (not the provider key), and Codex's shell
snapshot, which writes the shell's whole environment to a file in
``CODEX_HOME``, is turned off (``features.shell_snapshot=false``).

MCP servers go in as ``-c mcp_servers.NAME.*``: ``enabled_tools`` (the other
tools are neither offered nor callable), ``tools.TOOL.approval_mode =
"approve"`` for each listed tool (``exec`` runs with approval policy
``never``, so an MCP call needing approval would fail) and ``required`` (a
server that cannot start fails the call at once). Codex 0.169 always defers
MCP tools behind its ``tool_search`` tool (the ``tool_search*`` features are
removed, so ``--disable`` changes nothing): the model finds them there and
calls them in the ``mcp__NAME`` namespace.

Token usage comes from ``turn.completed``; after a resume Codex reports it
cumulatively for the thread, so the previous total seen by this backend is
subtracted.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import Field

from phasegate.agents.base import (
    Access,
    AgentRequest,
    AgentResult,
    Availability,
    McpServer,
    TokenUsage,
)
from phasegate.agents.cli_probe import FlagCheck, version_tuple
from phasegate.agents.cli_support import CliBackend, CliSettings, CliWatch, exit_wording, tail
from phasegate.errors import ConfigError
from phasegate.process import ProcessResult
from phasegate.redact import secret_values

#: Codex's warning when it will not put its helper executables in a temporary folder...
_HELPER_REFUSED = "Refusing to create helper binaries under temporary dir"
#: ...and what a sandboxed command then fails with, when a system bwrap runs it.
_HELPER_MISSING = "execvp codex-linux-sandbox"

#: The model provider phasegate defines when ``base_url`` is set.
PROVIDER_ID = "phasegate"
#: A writer's private temporary folder, inside the call's scratch folder.
PRIVATE_TMP = "tmp"
#: Closes the folders ``workspace-write`` would otherwise leave writable outside the tree.
CLOSED_TMP_ARGS = (
    "-c",
    "sandbox_workspace_write.exclude_slash_tmp=true",
    "-c",
    "sandbox_workspace_write.exclude_tmpdir_env_var=true",
)


#: The oldest release phasegate's codex tests were run on and pass. (0.59.0 is the
#: first whose ``exec`` takes ``--add-dir``, but it reports a resumed thread's tokens
#: per call instead of summed, so this backend would undercount them.)
MIN_VERSION = "0.98.0"
#: The first release the read-only permission profile was run on (``:minimal``,
#: ``:workspace_roots``); older ones get ``-s read-only``, which confines writes only.
READER_PROFILE_VERSION = "0.169.0"
#: The permission profile phasegate defines for read-only roles.
READER_PROFILE = "phasegate-reader"
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
#: Tools no role needs, turned off (fewer tokens per request, less to misuse): web search,
#: image viewing and goal tracking. Codex reads files through its sandboxed shell, so
#: that stays. Given as config, which older releases ignore when they lack the feature;
#: ``extra_args`` come later and can turn them back on.
UNUSED_TOOL_ARGS = (
    "-c",
    'web_search="disabled"',
    "-c",
    "features.view_image=false",
    "-c",
    "features.goals=false",
)
#: Codex's shell snapshot writes the whole environment (the provider key too) to
#: ``CODEX_HOME/shell_snapshots``; phasegate turns it off.
NO_SHELL_SNAPSHOT_ARGS = ("-c", "features.shell_snapshot=false")
#: Credential variables kept out of the commands' environment even when unset here.
CREDENTIAL_NAMES = ("OPENAI_API_KEY", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY")
#: Codex's report that it cannot reach the provider and waits for the network, without end.
OFFLINE_MARK = "waiting for network"
#: After this many such reports in a row, or this long after the first, the call is stopped.
OFFLINE_REPORTS = 3
OFFLINE_GRACE_SECONDS = 10.0
EXEC_FLAGS = (
    "--cd",
    "--add-dir",
    "--json",
    "--skip-git-repo-check",
    "--config",
    "--model",
    "--output-schema",
)


class CodexSettings(CliSettings):
    """Codex settings: a custom provider is defined when ``base_url`` is set."""

    api_key_env: str = "OPENAI_API_KEY"
    wire_api: str = "responses"
    provider_options: dict[str, Any] = Field(default_factory=dict)


class CodexBackend(CliBackend):
    """OpenAI's Codex CLI, headless."""

    name = "codex"
    package = "@openai/codex"
    min_version = MIN_VERSION
    settings_model = CodexSettings
    structured_output = True
    writes_files = True
    env_names = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "CODEX_HOME")
    env_prefixes = ("CODEX_", "AZURE_OPENAI_")
    required_flags = (
        *(FlagCheck("--sandbox", mode, ("exec",)) for mode in SANDBOX_MODES),
        *(FlagCheck(flag, None, ("exec",)) for flag in EXEC_FLAGS),
    )

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(settings)
        # thread id -> cumulative usage last reported for it (Codex sums over resumes).
        self._thread_usage: dict[str, TokenUsage] = {}

    @property
    def codex_settings(self) -> CodexSettings:
        assert isinstance(self.cfg, CodexSettings)
        return self.cfg

    def child_env(self, request: AgentRequest | None = None) -> dict[str, str]:
        env = super().child_env(request)
        key_name = self.codex_settings.api_key_env
        if key_name in os.environ and key_name not in env:
            env[key_name] = os.environ[key_name]
        return env

    def forced_env(self, request: AgentRequest | None) -> dict[str, str]:
        config_dir = self.config_dir()
        return {"CODEX_HOME": str(config_dir)} if config_dir is not None else {}

    def _sandbox(self, request: AgentRequest) -> str:
        if request.access is Access.READ_ONLY:
            return "read-only"
        return "danger-full-access" if self.cfg.bypass_permissions else "workspace-write"

    def arguments(self, request: AgentRequest, scratch: Path) -> list[str]:
        cfg = self.codex_settings
        sandbox = self._sandbox(request)
        writable: list[Path] = []
        if sandbox == "workspace-write":
            private_tmp = scratch / PRIVATE_TMP
            private_tmp.mkdir(exist_ok=True)
            writable = [*request.extra_dirs, private_tmp]
        args = ["exec"]
        reader = self._reader_profile(request) if sandbox == "read-only" else None
        if reader is not None:
            # A permission profile confines reads too; given with -c, it also holds
            # on `exec resume` (and a sandbox_mode there would switch it off).
            args += ["-c", f"default_permissions={toml_value(READER_PROFILE)}"]
            args += ["-c", f"permissions.{READER_PROFILE}.filesystem={toml_value(reader)}"]
            if not request.session:
                args += ["-C", str(request.workdir)]
        elif request.session:
            # Resuming, the sandbox goes in as config (`exec resume` takes neither -s nor -C,
            # nor --add-dir), and every option comes before `resume`: older releases accept
            # `--json` and the rest only there.
            args += ["-c", f"sandbox_mode={toml_value(sandbox)}"]
            if writable:
                roots = [str(d) for d in writable]
                args += ["-c", f"sandbox_workspace_write.writable_roots={toml_value(roots)}"]
        else:
            args += ["-s", sandbox, "-C", str(request.workdir)]
            for directory in writable:  # --add-dir makes a folder writable
                args += ["--add-dir", str(directory)]
        if writable:
            args += CLOSED_TMP_ARGS
        args += ["--json", "--skip-git-repo-check", "-c", "check_for_update_on_startup=false"]
        args += UNUSED_TOOL_ARGS
        args += NO_SHELL_SNAPSHOT_ARGS
        hidden = secret_names(
            self.child_env(request), (cfg.api_key_env, *CREDENTIAL_NAMES), cfg.pass_env
        )
        args += ["-c", f"shell_environment_policy.exclude={toml_value(hidden)}"]
        model = request.model or cfg.model
        if model:
            args += ["-m", model]
        if cfg.base_url:
            provider = {
                "name": PROVIDER_ID,
                "base_url": cfg.base_url,
                "wire_api": cfg.wire_api,
                "env_key": cfg.api_key_env,
                **cfg.provider_options,
            }
            args += ["-c", f"model_providers.{PROVIDER_ID}={toml_value(provider)}"]
            args += ["-c", f"model_provider={PROVIDER_ID}"]
        for server in request.mcp_servers:
            args += mcp_server_args(server)
        if request.output_schema is not None:
            schema_file = scratch / "output-schema.json"
            schema_file.write_text(json.dumps(dict(request.output_schema)), encoding="utf-8")
            args += ["--output-schema", str(schema_file)]
        args += cfg.extra_args
        # The prompt comes from stdin ("-"); after "--" so it is never taken for a subcommand.
        if request.session:
            return [*args, "resume", "--", request.session, "-"]
        return [*args, "--", "-"]

    def availability(self) -> Availability:
        found = super().availability()
        if found.usable and not self._confines_reads():
            return Availability(
                True,
                f"{found.detail}; before {READER_PROFILE_VERSION} its read-only roles' "
                "reads are not confined to the work tree",
            )
        return found

    def _confines_reads(self) -> bool:
        have, need = version_tuple(self.version), version_tuple(READER_PROFILE_VERSION)
        return have is not None and need is not None and have >= need

    def _reader_profile(self, request: AgentRequest) -> dict[str, Any] | None:
        """What a read-only call's commands may read, or None on a Codex too old for it."""
        if not self._confines_reads():
            return None
        readable = [*request.extra_dirs, *git_dirs(request.workdir), codex_install(self.binary)]
        profile: dict[str, Any] = {":minimal": "read", ":workspace_roots": {".": "read"}}
        for folder in readable:
            profile[str(folder)] = "read"
        return profile

    def output_watch(self, request: AgentRequest) -> CliWatch:
        return OfflineWatch(self.codex_settings.base_url)

    def scratch_env(
        self, request: AgentRequest, scratch: Path, env: Mapping[str, str]
    ) -> dict[str, str]:
        private_tmp = scratch / PRIVATE_TMP
        return {"TMPDIR": str(private_tmp)} if private_tmp.is_dir() else {}

    def crash(self, proc: ProcessResult, what: str) -> AgentResult:
        result = super().crash(proc, what)
        if result.error and _HELPER_REFUSED in proc.stderr and _HELPER_MISSING in proc.stderr:
            # Codex then names only bwrap's failure: say what to change.
            hint = (
                "; Codex would not create its sandbox helper because its CODEX_HOME "
                f"({self.config_dir() or 'config_dir'}) is in the temporary folder "
                "($TMPDIR or /tmp) and a bwrap is installed: set config_dir elsewhere"
            )
            return replace(result, error=result.error + hint)
        return result

    def parse(self, request: AgentRequest, proc: ProcessResult) -> AgentResult:
        events = _events(proc.stdout)
        if not events:
            return self.crash(proc, "no JSON events on stdout")
        thread_id: str | None = request.session
        messages: list[str] = []
        reported: TokenUsage | None = None
        failure: str | None = None
        last_error: str | None = None
        for event in events:
            kind = event.get("type")
            if kind == "thread.started" and isinstance(event.get("thread_id"), str):
                thread_id = event["thread_id"]
            elif kind == "item.completed":
                item = event.get("item") or {}
                if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                    messages.append(item["text"])
            elif kind == "turn.completed":
                reported = _usage(event.get("usage") or {})
            elif kind == "turn.failed":
                failure = str((event.get("error") or {}).get("message") or "turn failed")
            elif kind == "error":
                last_error = str(event.get("message") or "")
        usage = self._this_call(thread_id, reported, resumed=request.session is not None)
        text = messages[-1] if messages else ""
        error: str | None = None
        structured: Mapping[str, Any] | None = None
        if failure is not None or proc.exit_code != 0:
            detail = failure or last_error or tail(proc.stderr, 400).strip() or "no message"
            error = f"codex failed ({exit_wording(proc.exit_code)}): {detail}"
        elif request.output_schema is not None:
            # Free text instead of the schema's JSON is returned as text: the verdict
            # reader records it as unclear, never approved (as for every backend).
            structured = _json_object(text)
        return AgentResult(
            text=text,
            structured=structured,
            exit_status=proc.exit_code or (1 if error else 0),
            usage=usage,
            cost_usd=None,
            session_id=thread_id,
            error=error,
            stderr=tail(proc.stderr),
        )

    def _this_call(
        self, thread_id: str | None, reported: TokenUsage | None, *, resumed: bool
    ) -> TokenUsage:
        """This call's usage: Codex reports a resumed thread's usage cumulatively."""
        if reported is None:
            return TokenUsage()
        previous = self._thread_usage.get(thread_id or "") if resumed else None
        if thread_id:
            self._thread_usage[thread_id] = reported
        if previous is None:
            return reported
        return TokenUsage(
            max(0, reported.input_tokens - previous.input_tokens),
            max(0, reported.output_tokens - previous.output_tokens),
            max(0, reported.cache_read_tokens - previous.cache_read_tokens),
            max(0, reported.cache_write_tokens - previous.cache_write_tokens),
        )

    def credentials(self, env: Mapping[str, str]) -> str | None:
        cfg = self.codex_settings
        if cfg.base_url:
            if env.get(cfg.api_key_env):
                return f"{cfg.api_key_env} for {cfg.base_url}"
            return None
        for name in ("OPENAI_API_KEY", "CODEX_API_KEY"):
            if env.get(name):
                return name
        home = Path(env.get("HOME") or os.path.expanduser("~"))
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
        if (codex_home / "auth.json").is_file():
            return f"logged in ({codex_home / 'auth.json'})"
        return None

    def login_hint(self) -> str:
        if self.codex_settings.base_url:
            return f"set {self.codex_settings.api_key_env} for {self.codex_settings.base_url}"
        return "set OPENAI_API_KEY, or run 'codex login'"


class OfflineWatch(CliWatch):
    """Stops a Codex call that keeps reporting it cannot reach its provider.

    Codex answers a refused connection with ``{"type": "error", "message":
    "Reconnecting... waiting for network (...)"}`` events and waits on without
    end; any other event (the connection came back) starts the count again.
    """

    def __init__(self, base_url: str | None) -> None:
        super().__init__()
        self._base_url = base_url
        self._lock = threading.Lock()
        self._reports = 0
        self._first: float | None = None
        self._last_error: str | None = None

    def line(self, text: str) -> None:
        if not text.startswith("{"):
            return
        try:
            event = json.loads(text)
        except json.JSONDecodeError:
            return
        if not isinstance(event, dict):
            return
        with self._lock:
            if event.get("type") == "error":
                message = str(event.get("message") or "")
                self._last_error = message or self._last_error
                if OFFLINE_MARK in message:
                    self._reports += 1
                    self._first = self._first or time.monotonic()
                    return
            self._reports, self._first = 0, None

    def give_up(self) -> bool:
        with self._lock:
            if self._first is None:
                return False
            waited = time.monotonic() - self._first
            return self._reports >= OFFLINE_REPORTS or waited >= OFFLINE_GRACE_SECONDS

    def why(self) -> str:
        where = f" {self._base_url}" if self._base_url else " its provider"
        return f"cannot connect to{where}: {self.last_error()}"

    def last_error(self) -> str | None:
        with self._lock:
            return self._last_error


def codex_install(binary: Path) -> Path:
    """The folder holding Codex's executables: its sandbox starts Codex's own binary.

    npm's ``codex.js`` runs a native binary from a sibling package
    (``@openai/codex-linux-x64``), so the whole ``@openai`` folder is given.
    """
    real = binary.resolve()
    if real.suffix == ".js" and len(real.parents) > 2:
        return real.parents[2]
    return real.parent


def git_dirs(workdir: Path) -> list[Path]:
    """The git folders outside ``workdir`` that ``git`` needs there (``git diff`` in a
    worktree reads the main repository's ``.git``)."""
    work = workdir.resolve()
    for folder in (work, *work.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return [] if folder == work else [marker]
        if marker.is_file():
            return _worktree_git_dirs(marker)
    return []


def _worktree_git_dirs(marker: Path) -> list[Path]:
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
        if not text.startswith("gitdir:"):
            return []
        gitdir = (marker.parent / text.removeprefix("gitdir:").strip()).resolve()
        common = gitdir / "commondir"
        if common.is_file():
            # The main .git, which holds the worktree's own folder too.
            return [(gitdir / common.read_text(encoding="utf-8").strip()).resolve()]
    except OSError:  # unreadable: git will not work there for the agent either
        return []
    return [gitdir]


def secret_names(env: Mapping[str, str], always: Sequence[str], passed: Sequence[str]) -> list[str]:
    """What the agent's commands must not see (Codex reads its key itself): the
    variables of ``env`` phasegate treats as secrets and ``always``, except the
    ``passed`` ones (``pass_env``: the user hands those to the commands on purpose)."""
    names = {name for name, value in env.items() if secret_values({name: value})}
    return sorted((names | set(always)) - (set(passed) - set(always)))


def mcp_server_args(server: McpServer) -> list[str]:
    """``-c`` overrides giving Codex ``server``, with only its listed tools, pre-approved."""
    prefix = f"mcp_servers.{server.name}"
    approved = {tool: {"approval_mode": "approve"} for tool in server.tools}
    settings: list[tuple[str, Any]] = [
        ("command", server.command),
        ("args", list(server.args)),
        ("enabled_tools", list(server.tools)),
        ("tools", approved),
        ("required", True),
        ("enabled", True),
    ]
    if server.env:
        settings.append(("env", dict(server.env)))
    args: list[str] = []
    for key, value in settings:
        args += ["-c", f"{prefix}.{key}={toml_value(value)}"]
    return args


def _events(stdout: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _usage(raw: Mapping[str, Any]) -> TokenUsage:
    """Codex counts cached input inside ``input_tokens``; phasegate keeps them apart."""
    cached = _int(raw.get("cached_input_tokens"))
    written = _int(raw.get("cache_write_input_tokens"))
    return TokenUsage(
        input_tokens=max(0, _int(raw.get("input_tokens")) - cached - written),
        output_tokens=_int(raw.get("output_tokens")),
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0


def toml_value(value: Any) -> str:
    """A Python value as TOML for ``codex -c key=value`` (JSON strings are valid TOML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise ConfigError(f"cannot pass {value!r} to codex as a TOML value")
