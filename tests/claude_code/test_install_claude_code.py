"""``phasegate install claude-code`` / ``uninstall``: merge, never clobber, undo exactly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from claude_code_helpers import cli, git, new_item, venv_phasegate

from phasegate.api import Repo
from phasegate.errors import BadInputError
from phasegate.integrations.claude_code.install import install, uninstall

CMD = "/opt/pg/bin/phasegate"
PHASES = [("specify", "Write the specification."), ("design", "Design it.")]

USER_GROUP = '{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}'
USER_START = '{"hooks": [{"type": "command", "command": "cat NOTES.md"}]}'
STYLES = {
    "two-spaces-with-own-hooks": (
        "{\n"
        '  "permissions": {\n    "allow": ["Bash(npm test:*)"]\n  },\n'
        '  "hooks": {\n'
        f'    "PreToolUse": [\n      {USER_GROUP}\n    ],\n'
        f'    "SessionStart": [{USER_START}]\n'
        "  },\n"
        '  "env": {"FOO": "1"}\n'
        "}\n"
    ),
    "four-spaces-no-hooks": '{\n    "model": "opus",\n    "permissions": {"deny": []}\n}\n',
    "one-line-no-newline": '{"permissions":{"allow":["Read"]},"hooks":{"Stop":[]}}',
    "tabs-other-events": '{\n\t"hooks": {\n\t\t"Stop": [\n\t\t\t{"hooks": []}\n\t\t]\n\t}\n}\n',
}


def settings(root: Path) -> Path:
    return root / ".claude/settings.json"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under the repo except .git, as bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def hook_commands(root: Path, event: str) -> list[str]:
    data = json.loads(settings(root).read_text())
    return [h["command"] for g in data["hooks"].get(event, []) for h in g["hooks"]]


def test_install_adds_hooks_guard_and_slash_commands(repo: Repo) -> None:
    """Seed 000 §4 and §5: the SessionStart hook, the guard, and phase commands calling the CLI."""
    report = install(repo.root, CMD, PHASES)
    assert hook_commands(repo.root, "SessionStart") == [f"{CMD} hook session-start"]
    assert hook_commands(repo.root, "PreToolUse") == [f"{CMD} hook pre-tool-use"]
    data = json.loads(settings(repo.root).read_text())
    assert data["hooks"]["PreToolUse"][0]["matcher"] == "Edit|Write|MultiEdit|NotebookEdit"
    commands = sorted(p.name for p in (repo.root / ".claude/commands").iterdir())
    assert commands == [
        "phasegate-design.md",
        "phasegate-run.md",
        "phasegate-specify.md",
        "phasegate-status.md",
    ]
    specify = (repo.root / ".claude/commands/phasegate-specify.md").read_text()
    assert f"    {CMD} run $ARGUMENTS --phase specify\n" in specify
    assert f'allowed-tools: "Bash({CMD} run:*), Bash({CMD} status:*)"' in specify
    status = (repo.root / ".claude/commands/phasegate-status.md").read_text()
    assert f"!`{CMD} status $ARGUMENTS`" in status
    assert report.changed


def test_second_install_changes_nothing(repo: Repo) -> None:
    """Principle 4, nothing recorded is overwritten: a second install changes nothing."""
    install(repo.root, CMD, PHASES)
    before = snapshot(repo.root)
    mtimes = {p: p.stat().st_mtime_ns for p in (repo.root / ".claude").rglob("*")}
    report = install(repo.root, CMD, PHASES)
    assert not report.changed
    assert snapshot(repo.root) == before
    assert {p: p.stat().st_mtime_ns for p in (repo.root / ".claude").rglob("*")} == mtimes


@pytest.mark.parametrize("style", sorted(STYLES))
def test_uninstall_after_install_restores_the_users_settings_byte_for_byte(
    repo: Repo, style: str
) -> None:
    """Principle 4: the user's own settings survive install and uninstall byte for byte."""
    original = STYLES[style]
    settings(repo.root).parent.mkdir()
    settings(repo.root).write_text(original)
    install(repo.root, CMD, PHASES)
    installed = json.loads(settings(repo.root).read_text())
    for key, value in json.loads(original).items():
        if key != "hooks":
            assert installed[key] == value
    uninstall(repo.root)
    assert settings(repo.root).read_text() == original
    assert not (repo.root / ".claude/commands").exists()


def test_install_keeps_the_users_hook_entries_verbatim_next_to_its_own(repo: Repo) -> None:
    """Principle 4: phasegate's entries are appended; the user's keep their exact text."""
    settings(repo.root).parent.mkdir()
    settings(repo.root).write_text(STYLES["two-spaces-with-own-hooks"])
    install(repo.root, CMD, PHASES)
    text = settings(repo.root).read_text()
    assert USER_GROUP in text and USER_START in text
    assert hook_commands(repo.root, "SessionStart") == ["cat NOTES.md", f"{CMD} hook session-start"]
    assert hook_commands(repo.root, "PreToolUse") == ["./lint.sh", f"{CMD} hook pre-tool-use"]


def test_fresh_install_is_undone_completely(repo: Repo) -> None:
    """Principle 4: uninstall removes exactly what install added: here, everything under .claude."""
    before = snapshot(repo.root)
    install(repo.root, CMD, PHASES)
    uninstall(repo.root)
    assert snapshot(repo.root) == before
    assert not (repo.root / ".claude").exists()


def test_a_users_command_file_with_the_same_name_is_never_overwritten(repo: Repo) -> None:
    """Principle 4: install refuses (changing nothing) rather than overwrite a user's own command
    file."""
    own = repo.root / ".claude/commands/phasegate-status.md"
    own.parent.mkdir(parents=True)
    own.write_text("my own status command\n")
    before = snapshot(repo.root)
    with pytest.raises(BadInputError, match=r"phasegate-status\.md exists and is not phasegate's"):
        install(repo.root, CMD, PHASES)
    assert snapshot(repo.root) == before


def test_uninstall_leaves_the_users_own_command_files(repo: Repo) -> None:
    """Principle 4: only files carrying phasegate's marker are removed."""
    install(repo.root, CMD, PHASES)
    own = repo.root / ".claude/commands/phasegate-notes.md"
    own.write_text("mine\n")
    uninstall(repo.root)
    assert own.read_text() == "mine\n"
    assert sorted(p.name for p in own.parent.iterdir()) == ["phasegate-notes.md"]


def test_guard_can_be_left_out_and_added_later(repo: Repo) -> None:
    """Seed 000 §4: ``--no-guard`` installs only the SessionStart hook; a later install adds the
    guard."""
    install(repo.root, CMD, PHASES, guard=False)
    assert "PreToolUse" not in json.loads(settings(repo.root).read_text())["hooks"]
    install(repo.root, CMD, PHASES)
    assert hook_commands(repo.root, "PreToolUse") == [f"{CMD} hook pre-tool-use"]


def test_mcp_server_is_merged_into_mcp_json_and_removed_exactly(repo: Repo) -> None:
    """Principle 4: with an ``mcp`` command, ``.mcp.json`` gains the phasegate server next to the
    user's."""
    mcp = repo.root / ".mcp.json"
    original = '{\n  "mcpServers": {\n    "db": {"command": "db-mcp", "args": []}\n  }\n}\n'
    mcp.write_text(original)
    install(repo.root, CMD, PHASES, mcp=True)
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers == {
        "db": {"command": "db-mcp", "args": []},
        "phasegate": {"command": CMD, "args": ["mcp"]},
    }
    uninstall(repo.root)
    assert mcp.read_text() == original


def test_a_users_own_phasegate_mcp_server_is_left_alone(repo: Repo) -> None:
    """Principle 4: an ``mcpServers.phasegate`` entry that is not phasegate's own is never
    replaced."""
    mcp = repo.root / ".mcp.json"
    original = '{"mcpServers": {"phasegate": {"url": "http://localhost:9000"}}}'
    mcp.write_text(original)
    report = install(repo.root, CMD, PHASES, mcp=True)
    uninstall(repo.root)
    assert mcp.read_text() == original
    assert any("left the user's own 'phasegate' server" in n for n in report.notes)


def test_invalid_settings_json_stops_the_install_with_one_line(repo: Repo) -> None:
    """Principle 4: a broken settings file is named, and nothing is written."""
    settings(repo.root).parent.mkdir()
    settings(repo.root).write_text('{"hooks": ')
    before = snapshot(repo.root)
    result = cli(repo.root, "install", "claude-code")
    assert result.returncode == 2
    assert result.stderr.startswith(f"phasegate: error: {settings(repo.root)} is not valid JSON")
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot(repo.root) == before


def test_cli_install_writes_an_absolute_command_when_phasegate_is_not_on_path(repo: Repo) -> None:
    """Seed 000 §4 hooks run in Claude Code's environment: off PATH, the absolute script is used."""
    first = cli(repo.root, "install", "claude-code", env={"PATH": "/usr/bin:/bin"})
    second = cli(repo.root, "install", "claude-code", env={"PATH": "/usr/bin:/bin"})
    assert first.returncode == 0, first.stderr
    assert hook_commands(repo.root, "SessionStart") == [f"{venv_phasegate()} hook session-start"]
    assert (second.returncode, second.stdout) == (0, "Already installed; nothing changed.\n")


def test_cli_install_writes_plain_phasegate_when_it_is_on_path(repo: Repo) -> None:
    """Seed 000 §4: on PATH, settings say just ``phasegate``; a team can commit them."""
    path = f"{venv_phasegate().parent}{os.pathsep}/usr/bin:/bin"
    result = cli(repo.root, "install", "claude-code", env={"PATH": path})
    assert result.returncode == 0, result.stderr
    assert hook_commands(repo.root, "SessionStart") == ["phasegate hook session-start"]
    mcp_command = "\n  mcp " in cli(repo.root, "--help").stdout
    assert (repo.root / ".mcp.json").exists() == mcp_command


def test_item_worktrees_get_the_hooks_in_their_local_settings(repo: Repo) -> None:
    """TD4: sessions started in a worktree read its own .claude/; it gets the hooks, kept out of
    git."""
    new_item(repo, "wt", worktree=True)
    install(repo.root, CMD, PHASES)
    worktree = repo.root / ".phasegate/worktrees/wt"
    local = worktree / ".claude/settings.local.json"
    assert json.loads(local.read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"] == (
        f"{CMD} hook session-start"
    )
    assert git(worktree, "status", "--porcelain") == ""
    uninstall(repo.root)
    assert not (worktree / ".claude").exists()
    assert "phasegate" not in (repo.root / ".git/info/exclude").read_text()


def test_new_worktree_after_install_gets_the_hooks_too(repo: Repo) -> None:
    """TD4: ``phasegate new --worktree`` in an installed repo sets up the worktree's hooks."""
    install(repo.root, CMD, PHASES)
    result = cli(repo.root, "new", "later", "--worktree")
    assert result.returncode == 0, result.stderr
    local = repo.root / ".phasegate/worktrees/later/.claude/settings.local.json"
    assert json.loads(local.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == (
        f"{CMD} hook pre-tool-use"
    )


def test_cli_install_writes_every_slash_command_the_docs_list(repo: Repo) -> None:
    """docs/claude-code.md names one command per phase of the feature workflow, finish
    included (seed 000's /finish): ``install claude-code`` writes exactly those."""
    import re

    docs = (Path(__file__).parents[2] / "docs" / "claude-code.md").read_text()
    row = next(
        line for line in docs.splitlines() if "`.claude/commands/phasegate-<phase>.md`" in line
    )
    listed = re.findall(r"`([a-z-]+)`", row.split("workflow (", 1)[1].split(")", 1)[0])
    assert "finish" in listed
    result = cli(repo.root, "install", "claude-code")
    assert result.returncode == 0, result.stderr
    written = sorted(p.name for p in (repo.root / ".claude/commands").glob("*.md"))
    expected = ["phasegate-run.md", "phasegate-status.md", *(f"phasegate-{p}.md" for p in listed)]
    assert written == sorted(expected)
    finish = (repo.root / ".claude/commands/phasegate-finish.md").read_text()
    assert "run $ARGUMENTS --phase finish" in finish
