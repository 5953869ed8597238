"""An agent that replaces ``.phasegate/`` by a link to a copy of it with files added (a
workflow that overrides a built-in one, a prompt), or a folder of phasegate's files by a
file, has that found and put back: the folder is a folder again with what it held, the
added files are gone from it, and the call is journaled as a violation and fails."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest
from engine_helpers import init_repo
from test_agent_cannot_answer_gates import signoff_repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
from phasegate.engine.runner import RunOptions
from phasegate.errors import AgentError, WaitingForHuman


def test_phasegate_folder_swapped_for_a_link_is_put_back(tmp_path: Path) -> None:
    root = signoff_repo(tmp_path / "repo")
    before = (root / ".phasegate/config.yaml").read_bytes()

    def handler(request: AgentRequest) -> ScriptedReply:
        folder, copy = root / ".phasegate", root / "copy"
        if not copy.exists():
            shutil.copytree(folder, copy, symlinks=True)
            (copy / "workflows/feature.yaml").write_text("name: feature\n")
            shutil.rmtree(folder)
            folder.symlink_to(copy)
        return ScriptedReply(write={"{item_dir}/notes.md": "notes\n"})

    with contextlib.suppress(WaitingForHuman):
        Repo(root).run("it", backends={"executor": ScriptedBackend(handler=handler)})
    folder = root / ".phasegate"
    assert not folder.is_symlink() and folder.is_dir()
    assert not (folder / "workflows/feature.yaml").exists()
    assert (folder / "config.yaml").read_bytes() == before
    assert (folder / "workflows/signoff.yaml").is_file()
    lines = (root / "work/it/.journal.jsonl").read_text().splitlines()
    (violation,) = [e for e in map(json.loads, lines) if e["event"] == "agent.violation"]
    assert ".phasegate" in violation["paths"]


def _replace_by_a_file(folder: Path) -> None:
    shutil.rmtree(folder)
    folder.write_text("not a folder\n")


@pytest.mark.parametrize("folder", [".phasegate", "docs/features/item"])
def test_a_folder_of_phasegates_files_replaced_by_a_file_is_put_back(
    folder: str, tmp_path: Path
) -> None:
    """Not a crash (``Not a directory``): the folder comes back with its files, and the
    call is a violation."""
    root = init_repo(tmp_path / "repo")
    (root / ".phasegate").mkdir()
    (root / ".phasegate/config.yaml").write_text("retries: {agent: 0}\n")
    repo = Repo(root)
    repo.new("item", mode="hotfix", description="Add rate limiting")

    def handler(request: AgentRequest) -> ScriptedReply:
        _replace_by_a_file(root / folder)
        return ScriptedReply()

    with pytest.raises(AgentError, match="changed phasegate's own files"):
        repo.run(
            "item",
            backends={"executor": ScriptedBackend(handler=handler)},
            options=RunOptions(until="brainstorm"),
        )
    assert (root / ".phasegate/config.yaml").read_text() == "retries: {agent: 0}\n"
    assert repo.status("item")["phases"][0]["status"] != "completed"  # its state reads
    lines = (root / "docs/features/item/.journal.jsonl").read_text().splitlines()
    assert [e for e in map(json.loads, lines) if e["event"] == "agent.violation"]
