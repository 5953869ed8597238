"""The index's heads: what the SessionStart hook reads of every item (its state file's
identity, status and worktree) without parsing the briefs of the items it does not show,
agreeing with the whole index for lines written with a head, before heads existed, for an
item removed, and for a line cut short by a crash."""

from __future__ import annotations

import json
from pathlib import Path

from phasegate.engine.index import (
    INDEX_FORMAT,
    head_brief,
    index_path,
    read_heads,
    read_index,
    record_brief,
)


def _brief(status: str, worktree: str | None = None) -> dict[str, object]:
    return {
        "workflow": "feature",
        "description": 'say "status": "done"',
        "status": status,
        "worktree": worktree,
        "concerns": [["plan", 'a "brief": {x}']],
    }


def _state(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".engine.json"
    path.write_text(text)
    return path


def test_heads_agree_with_the_whole_index(tmp_path: Path) -> None:
    repo = tmp_path
    one = _state(repo / "docs" / "one", "{}")
    two = _state(repo / "docs" / "two", "{ }")
    gone = _state(repo / "docs" / "gone", "{  }")
    record_brief(repo, "feature", "one", one, _brief("active", ".phasegate/worktrees/one"))
    record_brief(repo, "feature", "two", two, _brief("active"))
    record_brief(repo, "feature", "two", two, _brief("completed"))
    record_brief(repo, "feature", "gone", gone, _brief("active"))
    record_brief(repo, "feature", "gone", gone, None)  # removed
    heads = read_heads(repo)
    index = read_index(repo)
    assert sorted(heads) == sorted(index) == ["feature/one", "feature/two"]
    for key, (identity, status, worktree, _) in heads.items():
        assert identity == index[key][0]
        assert status == index[key][1]["status"]
        assert worktree == index[key][1]["worktree"]
        assert head_brief(heads[key]) == index[key][1]
    assert heads["feature/two"][1] == "completed"
    assert heads["feature/one"][2] == ".phasegate/worktrees/one"


def test_lines_written_before_heads_and_a_torn_last_line(tmp_path: Path) -> None:
    """An index from before heads (the brief holds the status) is read whole; a line cut
    short by a crash leaves the item's line before it in force."""
    repo = tmp_path
    one = _state(repo / "docs" / "one", "{}")
    old = {"item": "feature/one", "state": [1, 2, 3], "brief": _brief("blocked")}
    newer = {
        "item": "feature/one",
        "status": "active",
        "worktree": None,
        "state": [4, 5, 6],
        "brief": _brief("active"),
    }
    torn = json.dumps(newer)[:-30]
    path = index_path(repo)
    path.parent.mkdir(parents=True)
    header = json.dumps({"format": INDEX_FORMAT, "rewritten_at": 0})
    path.write_text(f"{header}\n{json.dumps(old)}\n{torn}\n")
    assert one.exists()
    heads = read_heads(repo)
    assert heads["feature/one"][:3] == ((1, 2, 3), "blocked", None)
    assert read_index(repo)["feature/one"][0] == (1, 2, 3)
