"""``phasegate status`` (the item table) reads each item's brief from the item index kept
by phasegate's own commits, so it need not load every state file of a large repository;
an item whose state file is no longer the one its index entry was written for is read
from the file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.cli.item_rows import full_status, item_rows
from phasegate.engine.index import index_path
from phasegate.engine.runner import RunOptions

SHOWN = ("id", "workflow", "status", "inProgress", "currentPhase", "nextCommand")


def _repo_with_items(tmp_path: Path) -> Repo:
    repo = make_repo(init_repo(tmp_path / "repo"))
    backend = ScriptedBackend(script=approving_script())
    for name, until in (("fresh", None), ("halfway", "design"), ("done", "")):
        repo.new(name, description=f"Item {name}")
        if until is not None:
            options = RunOptions(until=until or None, yes=True)
            repo.run(name, backends={"default": backend}, options=options)
    return repo


def _full_rows(repo: Repo) -> dict[str, dict[str, object]]:
    rows = {}
    for name in ("fresh", "halfway", "done"):
        data = full_status(repo.root, name, "feature", repo.registry, repo.config)
        rows[name] = {key: data[key] for key in SHOWN}
    return rows


def test_status_rows_from_the_index_equal_the_rows_of_full_status(tmp_path: Path) -> None:
    """The table shows the same item, workflow, status, phase and next command whether the
    row comes from the index or from loading the item; the index is written by the
    first commits of a repository that had no cache folder."""
    repo = _repo_with_items(tmp_path)
    assert index_path(repo.root).is_file()
    rows = {row["id"]: row for row in item_rows(repo.root, repo.registry, repo.config)}
    assert rows == _full_rows(repo)
    assert rows["done"]["status"] == "completed"
    assert rows["halfway"]["currentPhase"] is not None


def test_an_item_whose_state_file_changed_since_its_index_entry_is_read_from_the_file(
    tmp_path: Path,
) -> None:
    """A state file restored or edited after the last commit (its identity differs from the
    index entry's) is read in full: the table shows the file, and a corrupt file shows
    as unreadable rather than as its stale brief."""
    repo = _repo_with_items(tmp_path)
    engine = repo.item("halfway").item_dir / ".engine.json"
    data = json.loads(engine.read_text(encoding="utf-8"))
    data["description"] = "edited by hand"
    data["status"] = "completed"
    engine.write_text(json.dumps(data), encoding="utf-8")
    rows = {row["id"]: row for row in item_rows(repo.root, repo.registry, repo.config)}
    assert rows["halfway"]["status"] == "completed"
    engine.write_text("{ not json", encoding="utf-8")
    rows = {row["id"]: row for row in item_rows(repo.root, repo.registry, repo.config)}
    assert "error" in rows["halfway"]
    assert str(engine) in rows["halfway"]["error"]
    assert rows["done"]["status"] == "completed"
