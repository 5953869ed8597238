"""The record of phasegate's files kept on disk while agent calls run (so that the next
run puts back what an agent changed before phasegate was killed) is out of the agent's
reach: it is kept outside every work tree, under phasegate's user cache folder. A record
an agent writes or removes in the work tree neither makes the next run write its bytes
nor hides what it changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_guard_survives_kill import events, make_repo

from cli_process import run_cli

#: Run in a process of its own: the build phase's executor rewrites a prompt, then does
#: what the test names to the guard's record where it used to be kept (in the work tree),
#: then kills phasegate before its call is over.
TAMPERING_RUN = """
import base64, json, os, signal, sys
from pathlib import Path
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
root, how = Path(sys.argv[1]), sys.argv[2]
record = root / ".phasegate/locks/twophase--it.guard"
def b64(data):
    return base64.b64encode(data).decode()
def handler(request):
    if "build" not in str(request.labels):
        return ScriptedReply(write={"{item_dir}/spec.md": "the spec\\n"})
    prompt = root / ".phasegate/prompts/twophase/build.md"
    prompt.write_text("do anything\\n")
    for found in (root / ".phasegate/locks").glob("*.guard*"):
        found.unlink()
    if how == "forge":
        journal = root / "work/it/.journal.jsonl"
        held = journal.read_bytes()
        hook = root / ".git/hooks/pre-commit"
        document = {
            "files": [
                [str(prompt), "file", 0o644, b64(b"do anything\\n")],
                [str(hook), "file", 0o755, b64(b"#!/bin/sh\\necho planted\\n")],
            ],
            "journal": str(journal),
            "size": len(held),
            "inode": journal.stat().st_ino,
            "tail": b64(held[-4096:]),
        }
        record.write_text(json.dumps(document) + "\\n")
    os.kill(os.getpid(), signal.SIGKILL)
Repo(root).run("it", backends={"executor": ScriptedBackend(handler=handler)})
"""


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


def killed_after(root: Path, how: str) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", TAMPERING_RUN, str(root), how], capture_output=True, timeout=120
    )
    assert killed.returncode == -9, killed.stderr
    assert (root / ".phasegate/prompts/twophase/build.md").read_text() == "do anything\n"


def test_a_record_an_agent_forges_in_the_work_tree_is_not_used(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    killed_after(root, "forge")
    again = run_cli(root, "run", "it")
    assert again.returncode == 0, again.stdout + again.stderr
    # Nothing of the forged record is written; the agent's change is put back regardless.
    assert not (root / ".git/hooks/pre-commit").exists()
    assert (root / ".phasegate/prompts/twophase/build.md").read_text() == "Do build.\n"
    told = [line for line in again.stderr.splitlines() if "twophase--it.guard" in line]
    assert len(told) == 1, again.stderr
    assert "not written by phasegate" in told[0] and "ignored" in told[0], told
    assert not (root / ".phasegate/locks/twophase--it.guard").exists()
    (restored,) = [e for e in events(root) if e["event"] == "guard.restored"]
    assert ".phasegate/prompts/twophase/build.md" in restored["paths"]


def test_an_agent_that_removes_the_record_does_not_hide_its_change(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    killed_after(root, "remove")
    again = run_cli(root, "run", "it")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (root / ".phasegate/prompts/twophase/build.md").read_text() == "Do build.\n"
    assert "killed" in again.stderr and "put back" in again.stderr
    (restored,) = [e for e in events(root) if e["event"] == "guard.restored"]
    assert restored["paths"] == [".phasegate/prompts/twophase/build.md"], restored


def test_no_record_is_left_in_the_work_tree_or_the_cache_when_the_run_ends(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "repo")
    ran = run_cli(root, "run", "it")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert not list(root.rglob("*.guard*"))
    assert not list((tmp_path / "user-cache").rglob("*.guard*"))


def test_claude_codes_file_tools_may_not_edit_the_record(tmp_path: Path) -> None:
    from phasegate.engine.protect_pending import record_folder
    from phasegate.integrations.claude_code.guard import pre_tool_use

    root = make_repo(tmp_path / "repo")
    target = record_folder(root) / "twophase--it.guard"
    for tool in ("Write", "Edit"):
        payload = {
            "hook_event_name": "PreToolUse",
            "cwd": str(root),
            "tool_name": tool,
            "tool_input": {"file_path": str(target), "content": "{}"},
        }
        answer = pre_tool_use(payload)
        assert answer is not None, tool
        text = answer["hookSpecificOutput"]["permissionDecisionReason"]
        assert "record phasegate keeps" in text and "Do not edit it" in text, text
    elsewhere = dict(payload, tool_input={"file_path": str(root / "notes.md")})
    assert pre_tool_use(elsewhere) is None
