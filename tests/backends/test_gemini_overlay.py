"""The per-call settings overlay of the gemini backend: the user's settings with the role's
tool set (and the call's MCP servers), the user's own files untouched."""

from __future__ import annotations

import json
from pathlib import Path

from phasegate.agents.base import McpServer
from phasegate.agents.gemini_mcp import overlay_home

USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "tools": {"exclude": ["web_fetch"], "core": ["run_shell_command"]},
    "mcpServers": {"mine": {"command": "my-server"}},
}


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(USER_SETTINGS))
    (home / ".gemini" / "oauth_creds.json").write_text("{}")
    return home


def _settings(overlay: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((overlay / ".gemini" / "settings.json").read_text())
    return loaded


def test_a_call_without_mcp_servers_gets_its_tool_set_and_keeps_the_users_servers(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path)
    overlay = tmp_path / "overlay"
    overlay_home(home, overlay, [], tmp_path, ["read_file", "glob"])
    settings = _settings(overlay)
    assert settings["tools"] == {"exclude": ["web_fetch"], "core": ["read_file", "glob"]}
    assert settings["mcpServers"] == USER_SETTINGS["mcpServers"]
    assert settings["security"] == USER_SETTINGS["security"]
    assert "policyPaths" not in settings
    assert (overlay / ".gemini" / "oauth_creds.json").resolve() == (
        home / ".gemini" / "oauth_creds.json"
    ).resolve()
    assert json.loads((home / ".gemini" / "settings.json").read_text()) == USER_SETTINGS


def test_a_call_with_mcp_servers_gets_only_them_and_its_tool_set(tmp_path: Path) -> None:
    home = _home(tmp_path)
    overlay = tmp_path / "overlay"
    server = McpServer(name="phasegate", command="srv", args=("--x",), tools=("create_review",))
    overlay_home(home, overlay, [server], tmp_path, ["read_file"])
    settings = _settings(overlay)
    assert settings["tools"] == {"exclude": ["web_fetch"], "core": ["read_file"]}
    assert settings["mcpServers"] == {
        "phasegate": {"command": "srv", "args": ["--x"], "includeTools": ["create_review"]}
    }
    assert (tmp_path / "phasegate-mcp-policy.toml").is_file()


def test_gemini_s_own_tool_set_leaves_the_users_tools_setting(tmp_path: Path) -> None:
    home = _home(tmp_path)
    overlay = tmp_path / "overlay"
    server = McpServer(name="phasegate", command="srv", args=(), tools=("create_review",))
    overlay_home(home, overlay, [server], tmp_path, None)
    assert _settings(overlay)["tools"] == USER_SETTINGS["tools"]
