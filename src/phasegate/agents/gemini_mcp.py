"""Per-call MCP servers and tool sets for Gemini CLI, without touching the user's settings.

Gemini CLI (0.61) takes MCP servers only from settings files, and none of them
can simply be pointed elsewhere for one call: a system settings file named by
``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` is skipped ("Security Warning") unless it
and every parent directory are owned by root and not writable by group or
others, and the workspace file is ``.gemini/settings.json`` in the user's own
repository. What can be moved is the home: ``GEMINI_CLI_HOME``.

So a call runs with ``GEMINI_CLI_HOME`` set to an overlay in the call's
scratch directory: every entry of the real home is a symlink to the original
(``~/.env``, ``~/.agents`` and ``~`` paths in settings keep working), and so
is every entry of its ``.gemini`` folder (credentials, sessions, policies,
extensions) except ``settings.json``, which is a copy of the user's settings
with

* ``tools.core`` set to the built-in tools the role is offered (Gemini does
  not even register the others, so their definitions cost no tokens);

and, for a call with MCP servers,

* ``mcpServers`` replaced by this call's servers, each with ``includeTools``
  set to its listed tools, so the others are never even registered;
* ``policyPaths`` extended with a policy file allowing exactly those tools
  (the user's own policy paths are kept: a ``policyPaths`` list replaces
  Gemini's default user policy folder, so that folder is listed explicitly).

The allow rules are what let a read-only reviewer in ``plan`` mode call the
tools headless: without them Gemini asks for confirmation, which headless
means "deny", and plan mode does not even offer the tools. Admin policies
still take precedence over these user-tier rules.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from phasegate.agents.base import McpServer
from phasegate.errors import ConfigError

GEMINI_DIR = ".gemini"
SETTINGS_FILE = "settings.json"
POLICY_FILE = "phasegate-mcp-policy.toml"
#: Gemini creates these on first use; made in the real home so a session
#: written during the call stays there (``--resume`` finds it later).
RUNTIME_DIRS = ("tmp", "history")
#: Highest priority inside the user tier (Gemini maps 0..999 to 4.000..4.999).
POLICY_PRIORITY = 999

# Gemini splits ``mcp_<server>_<tool>`` at the first underscore after ``mcp_``.
_SERVER_NAME = re.compile(r"[A-Za-z0-9-]+")
# Strings first, so comment markers inside them are left alone.
_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)


def check_servers(servers: Sequence[McpServer]) -> None:
    """Refuse servers Gemini would misread; one ConfigError line naming the problem."""
    for server in servers:
        if not _SERVER_NAME.fullmatch(server.name):
            raise ConfigError(
                f"backend 'gemini': MCP server name {server.name!r} must use only letters, "
                "digits and '-' (Gemini splits mcp_<server>_<tool> at the first '_')"
            )
        values = [server.command, *server.args, *server.env.values()]
        if any("$" in value for value in values):
            raise ConfigError(
                f"backend 'gemini': MCP server {server.name!r}: its command, arguments and "
                "environment cannot contain '$' (Gemini expands $VAR in settings files)"
            )


def overlay_home(
    base: Path,
    overlay: Path,
    servers: Sequence[McpServer],
    policy_dir: Path,
    core_tools: Sequence[str] | None = None,
    shell_env_allowed: Sequence[str] | None = None,
) -> None:
    """Build the overlay home at ``overlay`` for the real home ``base`` (see module doc);
    ``core_tools`` ``None`` leaves the built-in tools as the user's settings have them.
    ``shell_env_allowed`` not ``None`` turns on Gemini's redaction of secret-looking
    variables (``*KEY*``, ``*TOKEN*``...) in what its shell commands see, unless the
    user's settings turn it off; the names listed there are kept if they do not look
    secret (Gemini hides those whatever is allowed)."""
    real = base / GEMINI_DIR
    if base.is_dir():
        for name in RUNTIME_DIRS:
            (real / name).mkdir(parents=True, exist_ok=True)
    overlay.mkdir()
    _link_entries(base, overlay, skip={GEMINI_DIR})
    gemini = overlay / GEMINI_DIR
    gemini.mkdir()
    _link_entries(real, gemini, skip={SETTINGS_FILE})
    settings = read_settings(real / SETTINGS_FILE)
    if core_tools is not None:
        tools = settings.get("tools")
        settings["tools"] = {**(tools if isinstance(tools, dict) else {}), "core": list(core_tools)}
    if shell_env_allowed is not None:
        security = settings.get("security")
        security = security if isinstance(security, dict) else {}
        redaction = security.get("environmentVariableRedaction")
        redaction = redaction if isinstance(redaction, dict) else {}
        allowed = redaction.get("allowed")
        allowed = [str(a) for a in allowed] if isinstance(allowed, list) else []
        redaction = {
            **redaction,
            # An explicit ``false`` in the user's settings is their opt-out.
            "enabled": redaction.get("enabled") is not False,
            "allowed": [*allowed, *(n for n in shell_env_allowed if n not in allowed)],
        }
        settings["security"] = {**security, "environmentVariableRedaction": redaction}
    if servers:
        policy = policy_dir / POLICY_FILE
        _write_private(policy, policy_toml(servers))
        settings["mcpServers"] = {server.name: _server_entry(server) for server in servers}
        settings["policyPaths"] = [*_user_policy_paths(settings, real), str(policy)]
    _write_private(gemini / SETTINGS_FILE, json.dumps(settings, indent=2))


def policy_toml(servers: Iterable[McpServer]) -> str:
    """Policy-engine rules allowing exactly each server's listed tools, in every mode."""
    rules = ["# Written by phasegate for one call: the MCP tools this role may use.\n"]
    for server in servers:
        for tool in server.tools:
            rules.append(
                "[[rule]]\n"
                f"mcpName = {json.dumps(server.name)}\n"
                f"toolName = {json.dumps(tool)}\n"
                'decision = "allow"\n'
                f"priority = {POLICY_PRIORITY}\n"
            )
    return "\n".join(rules)


def read_settings(path: Path) -> dict[str, Any]:
    """The user's settings (JSON with comments, as Gemini accepts); empty when absent."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"backend 'gemini': cannot read {path}: {exc.strerror}") from None
    stripped = _JSONC_TOKEN.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else " ", text)
    try:
        data = json.loads(stripped) if stripped.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"backend 'gemini': {path} is not valid JSON ({exc.msg}, line {exc.lineno}); "
            "phasegate copies it to set the tools of each call"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"backend 'gemini': {path} is not a JSON object")
    return data


def _server_entry(server: McpServer) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "command": server.command,
        "args": list(server.args),
        "includeTools": list(server.tools),
    }
    if server.env:
        entry["env"] = dict(server.env)
    return entry


def _user_policy_paths(settings: Mapping[str, Any], real: Path) -> list[str]:
    """The user-tier policy paths Gemini would use without phasegate's addition."""
    configured = settings.get("policyPaths")
    if isinstance(configured, list) and configured:
        return [str(p) for p in configured]
    default = real / "policies"
    return [str(default)] if default.is_dir() else []


def _link_entries(source: Path, target: Path, skip: set[str]) -> None:
    """Symlink every entry of ``source`` (if it exists) into ``target``, except ``skip``."""
    try:
        names = sorted(os.listdir(source))
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in names:
        if name not in skip:
            (target / name).symlink_to(source / name)


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` readable by the owner only (the servers' env may hold secrets)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
