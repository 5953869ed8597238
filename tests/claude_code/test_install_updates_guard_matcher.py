"""``install claude-code`` brings the state guard's matcher up to date: a guard entry whose
matcher leaves out some of the file-editing tools (hand-edited, or written by an older
install) would let an agent edit state files with those tools."""

from __future__ import annotations

import json

from claude_code_helpers import cli

from phasegate.api import Repo
from phasegate.integrations.claude_code.guard import GUARDED_TOOLS

NARROW = (
    "{\n"
    '  "hooks": {\n'
    '    "PreToolUse": [\n'
    '      {"matcher": "Edit|Write", "hooks": [{"type": "command", '
    '"command": "phasegate hook pre-tool-use"}]}\n'
    "    ]\n"
    "  }\n"
    "}\n"
)


def guard_groups(repo: Repo) -> list[dict[str, object]]:
    data = json.loads((repo.root / ".claude/settings.json").read_text(encoding="utf-8"))
    return [
        group
        for group in data["hooks"]["PreToolUse"]
        if any("hook pre-tool-use" in h["command"] for h in group["hooks"])
    ]


def test_install_widens_a_guard_matcher_that_leaves_tools_out(repo: Repo) -> None:
    settings = repo.root / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text(NARROW, encoding="utf-8")
    done = cli(repo.root, "install", "claude-code", "--command", "phasegate")
    assert done.returncode == 0, done.stderr
    assert [g["matcher"] for g in guard_groups(repo)] == ["|".join(GUARDED_TOOLS)]
    again = cli(repo.root, "install", "claude-code", "--command", "phasegate")
    assert again.returncode == 0 and "nothing changed" in again.stdout
