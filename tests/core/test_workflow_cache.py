"""The cache of validated workflows: a workflow that loaded once is read back without
parsing or checking it again while nothing it depends on changed; a changed file is
loaded again, an entry that cannot be used is written anew, and nothing is kept inside
the repository (where an agent could write one).

Each load runs in a new process, as each ``phasegate`` command does (and because a
plug-in registered at run time by another test turns the cache off in its process)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate.workflow import cache
from phasegate.workflow.registry import WorkflowRegistry

LOAD = """
import json, sys
from pathlib import Path
from phasegate.errors import WorkflowError
from phasegate.workflow.registry import WorkflowRegistry
try:
    loaded = WorkflowRegistry(Path(sys.argv[1])).get(sys.argv[2])
    found = {"workflow": loaded.workflow.model_dump(mode="json"),
             "prompts": [str(p) for p in loaded.prompt_path]}
except WorkflowError as exc:
    found = {"error": str(exc)}
found["parsed"] = "phasegate.workflow.loader" in sys.modules
print(json.dumps(found))
"""


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user cache dir of this test's own (inherited by the processes it starts)."""
    folder = tmp_path / "user-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


def load(repo: Path, name: str = "demo", *before: str) -> dict[str, Any]:
    """Workflow ``name`` of ``repo`` loaded in a new process (``parsed``: whether the YAML
    was read and checked rather than taken from the cache)."""
    code = "\n".join(before) + LOAD
    done = subprocess.run(
        [sys.executable, "-c", code, str(repo), name],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=dict(os.environ),
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def entries(cache_home: Path) -> list[Path]:
    folder = cache_home / "phasegate" / "workflows"
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def repo(tmp_path: Path, write_workflow: Any, demo_yaml: str, cache_home: Path) -> Path:
    """A repository with its own workflow ``demo`` (and its prompt templates)."""
    root = tmp_path / "repo"
    write_workflow(demo_yaml, directory=root / ".phasegate" / "workflows")
    return root


def test_a_workflow_that_loaded_once_is_read_back_from_the_cache(
    repo: Path, cache_home: Path
) -> None:
    """The second process builds the same workflow without reading the YAML; nothing is
    written into the repository."""
    before = files_of(repo)
    first = load(repo)
    # Every workflow is loaded (no two may keep their items in one folder), each kept once.
    assert first["parsed"] and len(entries(cache_home)) == len(WorkflowRegistry(repo).names())
    second = load(repo)
    assert not second["parsed"]
    assert second == {**first, "parsed": False}
    assert files_of(repo) == before


def test_a_copied_repository_shares_the_entries(repo: Path, tmp_path: Path) -> None:
    """Keys name the repository's files by their place in it: a copy (same bytes, same
    times) is not parsed again, and its workflow has its own paths."""
    first = load(repo)
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    again = load(copy)
    assert not again["parsed"]
    assert again["workflow"] == first["workflow"]
    assert all(str(copy) in prompts for prompts in again["prompts"])


def test_an_edited_workflow_file_is_loaded_again(repo: Path) -> None:
    """A changed YAML file is read again (its bytes are part of the key)."""
    load(repo)
    path = repo / ".phasegate" / "workflows" / "demo.yaml"
    path.write_text(
        path.read_text().replace("A small workflow for tests.", "Edited."), encoding="utf-8"
    )
    again = load(repo)
    assert again["parsed"] and again["workflow"]["description"] == "Edited."
    assert not load(repo)["parsed"]


def test_a_deleted_prompt_template_is_not_served_from_the_cache(
    repo: Path, cache_home: Path
) -> None:
    """The workflow is refused, naming the template, exactly as without a cache."""
    load(repo)
    (repo / ".phasegate" / "workflows" / "prompts" / "demo" / "draft.md").unlink()
    refused = load(repo)
    assert refused["parsed"] and "draft.md" in refused["error"]
    shutil.rmtree(cache_home)
    assert load(repo)["error"] == refused["error"]


def test_an_edited_prompt_template_is_checked_again(repo: Path) -> None:
    """A template given an unknown placeholder is refused, though its workflow is cached."""
    load(repo)
    draft = repo / ".phasegate" / "workflows" / "prompts" / "demo" / "draft.md"
    draft.write_text("Write {{ no_such_value }} at length.\n", encoding="utf-8")
    assert "no_such_value" in load(repo)["error"]


@pytest.mark.parametrize(
    "spoil",
    [
        lambda entry: "{ not json",
        lambda entry: "",
        lambda entry: json.dumps({**entry, "format": 999}),
        lambda entry: json.dumps({**entry, "name": "another"}),
        lambda entry: json.dumps({**entry, "data": {"name": "demo", "nodes": "nonsense"}}),
    ],
    ids=["not JSON", "empty", "another format", "another workflow", "data that does not validate"],
)
def test_an_entry_that_cannot_be_used_is_ignored_and_written_anew(
    repo: Path, cache_home: Path, spoil: Any
) -> None:
    """The workflow loads in full as if there were no cache, and the entry is rewritten."""
    first = load(repo)
    (path,) = [p for p in entries(cache_home) if json.loads(p.read_bytes())["name"] == "demo"]
    path.write_text(spoil(json.loads(path.read_text(encoding="utf-8"))), encoding="utf-8")
    assert load(repo) == first
    assert json.loads(path.read_text(encoding="utf-8"))["name"] == "demo"
    assert not load(repo)["parsed"]


def test_a_plug_in_registered_at_run_time_turns_the_cache_off(repo: Path, cache_home: Path) -> None:
    """A registered object, not an installed entry point, decides validity: no entry is
    read or written in that process."""
    register = (
        "from phasegate import plugins\nplugins.register('selectors', 'pick-someone', object())\n"
    )
    assert load(repo, "demo", register)["parsed"]
    assert entries(cache_home) == []
    load(repo)
    assert load(repo, "demo", register)["parsed"]


def test_the_oldest_entries_go_beyond_the_limit(cache_home: Path) -> None:
    """The folder holds at most MAX_ENTRIES entries: writing one removes the oldest."""
    folder = cache_home / "phasegate" / "workflows"
    folder.mkdir(parents=True)
    for number in range(cache.MAX_ENTRIES + 5):
        old = folder / f"old-{number:03d}.json"
        old.write_text("{}", encoding="utf-8")
        os.utime(old, ns=(number * 10**9, number * 10**9))
    cache.remember("demo", "new", {"name": "demo"})
    left = sorted(p.name for p in folder.glob("*.json"))
    assert len(left) == cache.MAX_ENTRIES and "new.json" in left
    assert "old-000.json" not in left and f"old-{cache.MAX_ENTRIES + 4:03d}.json" in left
