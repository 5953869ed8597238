"""``install`` / ``uninstall claude-code`` keep the form of the user's settings file: its
line endings (CRLF), a symlink standing for it, and its permissions."""

from __future__ import annotations

import json
import stat

from claude_code_helpers import cli

from phasegate.api import Repo

CRLF_SETTINGS = (
    b'{\r\n  "permissions": {\r\n    "allow": ["Bash(npm test:*)"]\r\n  },\r\n'
    b'  "hooks": {\r\n    "SessionStart": [\r\n'
    b'      {"hooks": [{"type": "command", "command": "cat NOTES.md"}]}\r\n'
    b"    ]\r\n  }\r\n}\r\n"
)


def test_crlf_settings_stay_crlf_and_uninstall_gives_back_the_same_bytes(repo: Repo) -> None:
    path = repo.root / ".claude/settings.json"
    path.parent.mkdir()
    path.write_bytes(CRLF_SETTINGS)
    done = cli(repo.root, "install", "claude-code", "--command", "phasegate")
    assert done.returncode == 0, done.stderr
    installed = path.read_bytes()
    assert b"phasegate hook session-start" in installed
    assert installed.count(b"\n") == installed.count(b"\r\n")  # no bare LF mixed in
    assert json.loads(installed)["permissions"] == {"allow": ["Bash(npm test:*)"]}
    again = cli(repo.root, "install", "claude-code", "--command", "phasegate")
    assert again.returncode == 0 and "nothing changed" in again.stdout
    done = cli(repo.root, "uninstall", "claude-code")
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == CRLF_SETTINGS


def test_a_symlinked_settings_file_is_edited_through_its_link(repo: Repo) -> None:
    target = repo.root / "dotfiles/claude-settings.json"
    target.parent.mkdir()
    original = '{\n  "permissions": {"allow": ["Read"]}\n}\n'
    target.write_text(original, encoding="utf-8")
    link = repo.root / ".claude/settings.json"
    link.parent.mkdir()
    link.symlink_to("../dotfiles/claude-settings.json")
    done = cli(repo.root, "install", "claude-code", "--command", "phasegate")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink()
    assert "phasegate hook session-start" in target.read_text(encoding="utf-8")
    done = cli(repo.root, "uninstall", "claude-code")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == original


def test_a_symlinked_empty_settings_file_keeps_its_link_after_uninstall(repo: Repo) -> None:
    target = repo.root / "dotfiles/claude-settings.json"
    target.parent.mkdir()
    target.write_text("{}\n", encoding="utf-8")
    link = repo.root / ".claude/settings.json"
    link.parent.mkdir()
    link.symlink_to("../dotfiles/claude-settings.json")
    assert cli(repo.root, "install", "claude-code", "--command", "phasegate").returncode == 0
    assert "phasegate hook session-start" in target.read_text(encoding="utf-8")
    assert cli(repo.root, "uninstall", "claude-code").returncode == 0
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "{}\n"


def test_the_settings_files_permissions_are_kept(repo: Repo) -> None:
    path = repo.root / ".claude/settings.json"
    path.parent.mkdir()
    path.write_text('{"env": {"TOKEN_FILE": "~/.token"}}\n', encoding="utf-8")
    path.chmod(0o600)
    done = cli(repo.root, "install", "claude-code", "--command", "phasegate")
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    done = cli(repo.root, "uninstall", "claude-code")
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
