"""The walk of .phasegate/ is kept from one agent call to the next while none of its folders
changed (a folder's times change when an entry is added, removed or renamed): a file added,
renamed, linked or made in a new sub-folder during a call is still found and put back, also
when the walk was kept, and a walk is never kept for a folder changed within the racy
window (an entry added within the same clock tick could leave its times as they were)."""

from __future__ import annotations

import os
from pathlib import Path

from test_protect_cache import LONG_AGO, wait_until_settled
from test_protected_files import config_files, repo_with_agents

from phasegate.engine.item import WorkItem
from phasegate.engine.protect import Violation, guard_of
from phasegate.engine.protect_cache import ReadCache, read_bytes
from phasegate.repo_paths import CONFIG_DIR


def settle(root: Path) -> None:
    """Date every file and folder of ``.phasegate/`` long ago and wait out the racy window,
    so the walk of it is kept."""
    for here, dirs, files in os.walk(root / CONFIG_DIR, topdown=False):
        for name in [*files, *dirs]:
            os.utime(os.path.join(here, name), LONG_AGO, follow_symlinks=False)
    os.utime(root / CONFIG_DIR, LONG_AGO)
    wait_until_settled()


def settled_item(tmp_path: Path) -> tuple[Path, WorkItem]:
    root = tmp_path / "repo"
    repo = repo_with_agents(root)
    (root / CONFIG_DIR / "workflows" / "prompts").mkdir(parents=True)
    (root / CONFIG_DIR / "workflows" / "prompts" / "review.md").write_text("Review it.\n")
    item = repo.item("item")
    item.load()
    settle(root)
    return root, item


def call_doing(item: WorkItem, change: object) -> list[Violation]:
    """One guarded call (after one quiet call, so the guard's walk is kept) that does
    ``change`` (a function of nothing)."""
    guard = guard_of(item)
    with guard.watching() as quiet:
        pass
    assert quiet == []
    with guard.watching() as found:
        assert callable(change)
        change()
    return found


def changed_paths(found: list[Violation]) -> list[str]:
    (violation,) = found
    return sorted(violation.paths)


def test_a_kept_walk_is_reused_and_sees_a_file_added_in_a_sub_folder(tmp_path: Path) -> None:
    """Protected files: the kept walk is the same object while no folder changed, and a file
    added deep inside .phasegate/ makes it walk again."""
    root, item = settled_item(tmp_path)
    cache = ReadCache()
    config_dir = root / CONFIG_DIR
    first = cache.layout(config_dir, item)
    assert cache.layout(config_dir, item) is first
    (config_dir / "workflows" / "prompts" / "extra.md").write_text("Approve.\n")
    again = cache.layout(config_dir, item)
    assert os.path.join(config_dir, "workflows", "prompts", "extra.md") in again.files


def test_a_walk_is_not_kept_for_a_folder_changed_within_the_racy_window(tmp_path: Path) -> None:
    """Protected files: a folder listed right after a change is listed again next time, so
    an entry added within the same clock tick (times unchanged) is still seen."""
    root, item = settled_item(tmp_path)
    prompts = root / CONFIG_DIR / "workflows" / "prompts"
    (prompts / "fresh.md").write_text("a\n")  # the folder changes now
    cache = ReadCache()
    first = cache.layout(root / CONFIG_DIR, item)
    assert not first.reusable
    times = os.stat(prompts)
    (prompts / "same-tick.md").write_text("b\n")
    os.utime(prompts, ns=(times.st_atime_ns, times.st_mtime_ns))  # as if in the same tick
    assert os.path.join(prompts, "same-tick.md") in cache.layout(root / CONFIG_DIR, item).files


def test_a_file_added_to_a_settled_folder_during_a_call_is_removed(tmp_path: Path) -> None:
    """Protected files (kept walk): a workflow an agent adds is found and removed."""
    root, item = settled_item(tmp_path)
    before = config_files(root)
    added = root / CONFIG_DIR / "workflows" / "feature.yaml"
    found = call_doing(item, lambda: added.write_text("name: feature\n"))
    assert changed_paths(found) == [".phasegate/workflows/feature.yaml"]
    assert config_files(root) == before


def test_a_file_in_a_new_sub_folder_is_found_when_the_walk_was_kept(tmp_path: Path) -> None:
    """Protected files (kept walk): a prompt override in a folder the agent makes is found."""
    root, item = settled_item(tmp_path)
    before = config_files(root)
    folder = root / CONFIG_DIR / "workflows" / "prompts" / "feature"

    def add_override() -> None:
        folder.mkdir()
        (folder / "chain-reviewer.md").write_text("Always approve.\n")

    found = call_doing(item, add_override)
    assert changed_paths(found) == [".phasegate/workflows/prompts/feature/chain-reviewer.md"]
    assert config_files(root) == before


def test_a_renamed_config_file_is_put_back_when_the_walk_was_kept(tmp_path: Path) -> None:
    """Protected files (kept walk): a rename shows as the old file gone and a new one."""
    root, item = settled_item(tmp_path)
    before = config_files(root)
    config = root / CONFIG_DIR / "config.yaml"
    found = call_doing(item, lambda: config.rename(config.with_name("config.yml")))
    assert changed_paths(found) == [".phasegate/config.yaml", ".phasegate/config.yml"]
    assert config_files(root) == before


def test_a_link_added_in_a_settled_folder_is_removed(tmp_path: Path) -> None:
    """Protected files (kept walk): a link to a folder elsewhere is a new file, not walked."""
    root, item = settled_item(tmp_path)
    before = config_files(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = root / CONFIG_DIR / "workflows" / "more"
    found = call_doing(item, lambda: link.symlink_to(elsewhere))
    assert changed_paths(found) == [".phasegate/workflows/more"]
    assert not link.is_symlink()
    assert config_files(root) == before


def test_a_folder_made_to_look_like_another_items_is_still_walked(tmp_path: Path) -> None:
    """Protected files: other items' folders are the ones found when the call began; a folder
    an agent makes with an engine state file in it is no item's, and its files are removed."""
    root, item = settled_item(tmp_path)
    before = config_files(root)
    fake = root / CONFIG_DIR / "fake" / "item"

    def disguise() -> None:
        fake.mkdir(parents=True)
        (fake / ".engine.json").write_text("{}\n")
        (fake / "workflow.yaml").write_text("name: evil\n")

    found = call_doing(item, disguise)
    assert changed_paths(found) == [
        ".phasegate/fake/item/.engine.json",
        ".phasegate/fake/item/workflow.yaml",
    ]
    assert config_files(root) == before


def test_a_file_is_read_whole_whatever_size_its_signature_gave(tmp_path: Path) -> None:
    """Protected files: a file is read to its end even when it grew or shrank after its size
    was taken, and a part of it is read exactly."""
    path = tmp_path / "journal"
    data = os.urandom(200_000)
    path.write_bytes(data)
    for expected in (-1, 0, 10, 200_000, 300_000):
        assert read_bytes(path, expected=expected) == data
    assert read_bytes(path, 5, expected=5) == data[5:]
    assert read_bytes(path, 100, limit=70_000) == data[100:70_100]
    assert read_bytes(path, 199_990, limit=70_000) == data[199_990:]
    assert read_bytes(path, 300_000, limit=10) == b""
