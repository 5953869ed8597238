"""``install claude-code`` with a file where one of its folders goes: one line naming the
file, exit code 2, and nothing written (no half-done install)."""

from __future__ import annotations

from claude_code_helpers import cli

from phasegate.api import Repo


def test_a_file_named_claude_commands_stops_the_install_before_anything_is_written(
    repo: Repo,
) -> None:
    settings = repo.root / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus"}\n', encoding="utf-8")
    (repo.root / ".claude/commands").write_text("notes\n", encoding="utf-8")
    done = cli(repo.root, "install", "claude-code", "--command", "phasegate")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "internal error" not in lines[0]
    assert ".claude/commands exists and is not a folder" in lines[0]
    assert settings.read_text(encoding="utf-8") == '{"model": "opus"}\n'
    assert not (repo.root / ".mcp.json").exists()


def test_a_file_named_claude_is_named_as_in_the_way(repo: Repo) -> None:
    (repo.root / ".claude").write_text("notes\n", encoding="utf-8")
    done = cli(repo.root, "install", "claude-code", "--command", "phasegate")
    assert done.returncode == 2, done.stderr
    assert ".claude exists and is not a folder" in done.stderr
    assert (repo.root / ".claude").read_text(encoding="utf-8") == "notes\n"
