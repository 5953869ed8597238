"""A read-only Codex role reads the work tree, its extra folders and git; nothing else.

Codex's ``-s read-only`` confines writes only (``cat ~/.ssh/id_rsa`` works);
phasegate's permission profile for read-only roles confines reads too, on a
fresh call and on a resumed session alike.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from backend_helpers import GIT_ENV, codex_settings, init_git_repo, make_request

from phasegate.agents.base import Access, AgentResult
from phasegate.agents.codex import CodexBackend
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, ToolCall

pytestmark = pytest.mark.cli_e2e

SECRET = "secret beside the tree"


def _run(home: Path, workdir: Path, cmd: str, **fields: object) -> tuple[AgentResult, str]:
    script = Script(
        openai=[
            Rule(
                Reply(tool_calls=(ToolCall("exec_command", {"cmd": cmd}),)),
                Match(tool_result=False),
            ),
            Rule(Reply(text="done"), Match(tool_result=True)),
        ]
    )
    with StubLLMServer(script) as stub:
        backend = CodexBackend(codex_settings(stub, home))
        result = backend.run(make_request(workdir, "Review.", access=Access.READ_ONLY, **fields))
        turns = stub.model_requests("openai")
    return result, turns[-1].last


def test_reviewer_reads_the_tree_and_extra_folders_only(
    codex_bin: Path, home: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "inside.txt").write_text("inside the tree\n")
    item = tmp_path / "item"
    item.mkdir()
    (item / "spec.md").write_text("the item's spec\n")
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (home / "key.txt").write_text(SECRET + "\n")
    cmd = (
        f"cat inside.txt; cat {item}/spec.md; cat ../secret.txt; cat {tmp_path}/secret.txt; "
        f"cat {home}/key.txt; echo x > new.txt; python3 -c 'print(6*7)'"
    )
    result, shown = _run(home, tree, cmd, extra_dirs=(item,))
    assert result.ok, result.error
    assert "inside the tree" in shown and "the item's spec" in shown
    assert "42" in shown  # system tools still run
    assert SECRET not in shown
    # Nothing written, not even the sandbox's placeholders (.git, .codex...).
    assert [p.name for p in tree.iterdir()] == ["inside.txt"]


def test_reviewer_in_a_worktree_can_use_git(codex_bin: Path, home: Path, tmp_path: Path) -> None:
    repo = init_git_repo(tmp_path / "repo")
    tree = tmp_path / "wt"
    env = {**os.environ, **GIT_ENV}
    subprocess.run(
        ["git", "worktree", "add", "-q", "-b", "item", str(tree)],
        cwd=repo,
        check=True,
        capture_output=True,
        env=env,
    )
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    result, shown = _run(home, tree, "git log --oneline -1; cat ../secret.txt")
    assert result.ok, result.error
    assert " init" in shown
    assert SECRET not in shown


def test_resumed_reviewer_stays_confined(codex_bin: Path, home: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    first, _ = _run(home, tree, "ls")
    assert first.ok and first.session_id, first.error
    result, shown = _run(home, tree, "cat ../secret.txt; echo read", session=first.session_id)
    assert result.ok, result.error
    assert "read" in shown and SECRET not in shown
