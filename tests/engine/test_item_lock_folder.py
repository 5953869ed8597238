"""The item's write lock looks for its folder at every use: one removed since is made again."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine_helpers import init_repo, make_repo


def test_the_lock_folder_removed_between_two_locks_is_made_again(tmp_path: Path) -> None:
    repo = make_repo(init_repo(tmp_path / "repo"))
    repo.new("auth", mode="standard", description="Add login")
    item = repo.item("auth")
    with item.locked():
        assert item.lock_path.exists()
    shutil.rmtree(item.lock_path.parent)
    with item.locked(), item.locked():  # re-entrant
        assert item.lock_path.parent.is_dir()
        assert item.lock_path.exists()
    assert item.lock_path.parent.is_dir()
