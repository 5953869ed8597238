"""Reading the item index (``.phasegate/cache/index.jsonl``): the last complete line of each
item counts, whether the index is read in one go or line by line."""

from __future__ import annotations

from pathlib import Path

from phasegate.engine.index import _read_lines, identity, index_path, read_index, record_brief


def _index(tmp_path: Path) -> tuple[Path, Path, Path]:
    repo = tmp_path / "repo"
    (repo / ".phasegate").mkdir(parents=True)
    first, second = repo / "a.json", repo / "b.json"
    first.write_text("{}", encoding="utf-8")
    second.write_text("{}", encoding="utf-8")
    record_brief(repo, "feature", "a", first, {"status": "active", "at": "specify"})
    record_brief(repo, "feature", "b", second, {"status": "active", "at": "design"})
    record_brief(repo, "feature", "a", first, {"status": "completed", "at": "@end"})
    return repo, first, second


def test_the_last_line_of_each_item_counts(tmp_path: Path) -> None:
    """Read in one go, as line by line: each item's last brief, with its file's identity."""
    repo, first, second = _index(tmp_path)
    found = read_index(repo)
    assert found["feature/a"][1]["status"] == "completed"
    assert found["feature/b"][1]["at"] == "design"
    assert found["feature/a"][0] == identity(first) and found["feature/b"][0] == identity(second)
    lines = index_path(repo).read_bytes().split(b"\n")
    assert found == _read_lines(lines)


def test_a_line_cut_short_leaves_the_items_line_before_it(tmp_path: Path) -> None:
    """A crash mid-append leaves a partial last line: it is passed over, the item's line
    before it counts, and the other items are read as before."""
    repo, _, _ = _index(tmp_path)
    with index_path(repo).open("ab") as index:
        index.write(b'{"item": "feature/a", "state": [1, 2')
    found = read_index(repo)
    assert found["feature/a"][1]["status"] == "completed"
    assert found["feature/b"][1]["at"] == "design"


def test_a_removed_item_has_no_entry(tmp_path: Path) -> None:
    """An entry without a brief (the item removed) hides the item's earlier ones."""
    repo, first, _ = _index(tmp_path)
    record_brief(repo, "feature", "a", first, None)
    assert set(read_index(repo)) == {"feature/b"}
