"""The shortcuts an agent call takes on paths and files give the answers the long way
gives: a path written below a resolved folder is what ``realpath`` makes of it, a
file a scripted agent writes over holds exactly the new bytes, a file of the item
folder is shown only when it stays inside, and the paths of a node's outputs follow
the item's folder when it moves."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from phasegate.agents import scripted
from phasegate.engine import calls
from phasegate.engine.prompting import PromptFor, read_inside
from phasegate.engine.template_text import inside_any, plainly_inside_any


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """A resolved work folder with files, folders and symlinks in and out of it."""
    root = tmp_path / "work"
    outside = tmp_path / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (root / "a" / "b" / "f.md").write_text("f")
    (root / "file").write_text("x")
    (outside / "s.md").write_text("secret")
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "a" / "in").symlink_to(root / "a" / "b", target_is_directory=True)
    (root / "a" / "b" / "link.md").symlink_to(outside / "s.md")
    (root / "a" / "b" / "dangling.md").symlink_to(tmp_path / "nowhere" / "x.md")
    return Path(os.path.realpath(root)), outside


RELATIVES = [
    "a/b/f.md",
    "a/b/new.md",
    "new/deeper/x.md",
    "file/under-a-file.md",
    "out/s.md",
    "out/new.md",
    "a/in/f.md",
    "a/b/link.md",
    "a/b/dangling.md",
    "a/../a/b/f.md",
    "./a/b/f.md",
    "a//b/f.md",
    "a/b/",
    "../outside/s.md",
    "/etc/passwd",
    "a",
]


@pytest.mark.parametrize("relative", RELATIVES)
def test_a_scripted_write_resolves_its_path_as_realpath_does(tmp_path: Path, relative: str) -> None:
    root, _ = _tree(tmp_path)
    expected = os.path.realpath(os.path.join(str(root), relative))
    shortcut = scripted._plainly_below(str(root), relative)
    assert shortcut in (None, expected)
    allowed = [str(root)]
    if expected == str(root) or expected.startswith(str(root) + os.sep):
        assert scripted._inside(str(root), relative, allowed) == expected
    else:
        with pytest.raises(ValueError, match="escapes the working directory"):
            scripted._inside(str(root), relative, allowed)


def test_a_path_through_a_symlink_is_never_taken_as_written(tmp_path: Path) -> None:
    root, _ = _tree(tmp_path)
    for relative in ("out/s.md", "a/in/f.md", "a/b/link.md", "a/b/dangling.md"):
        assert scripted._plainly_below(str(root), relative) is None


@pytest.mark.parametrize(
    ("before", "after"),
    [("a long first version\n", "short\n"), ("x", "a longer second version\n"), ("same", "same")],
)
def test_a_file_written_over_holds_exactly_the_new_text(
    tmp_path: Path, before: str, after: str
) -> None:
    target = tmp_path / "doc.md"
    target.write_text(before, encoding="utf-8")
    inode = target.stat().st_ino
    scripted._write(str(target), after)
    assert target.read_bytes() == after.encode("utf-8")
    assert target.stat().st_ino == inode


def test_a_file_written_in_a_missing_folder_is_created_with_it(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "doc.md"
    scripted._write(str(target), "héllo\n")
    assert target.read_bytes() == "héllo\n".encode()


def test_text_that_is_not_utf8_fails_as_a_text_write_does(tmp_path: Path) -> None:
    """The file is emptied, then the write fails (the agent's failure, as before)."""
    target = tmp_path / "doc.md"
    target.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        scripted._write(str(target), "bad \udc80\n")
    assert target.read_bytes() == b""


@pytest.mark.parametrize(
    ("path", "root"),
    [
        ("/r/item", "/r"),
        ("/r", "/r"),
        ("/rx/item", "/r"),
        ("/r/a/b/c", "/r/a"),
        ("/r/a", "/r/a/b"),
        ("/anything/else", "/"),
        ("/", "/"),
        ("rel/item", "rel"),
        ("rel/item", "."),
    ],
)
def test_the_item_folder_is_inside_the_work_folder_as_pathlib_says(path: str, root: str) -> None:
    item_dir, workdir = Path(path), Path(root)
    expected = (
        item_dir == workdir
        or workdir in item_dir.parents
        or workdir.resolve() in item_dir.resolve().parents
    )
    assert calls._inside(item_dir, workdir) == expected


def test_an_item_folder_outside_the_work_folder_is_found_so(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (tmp_path / "items").mkdir()
    (tmp_path / "alias").symlink_to(work, target_is_directory=True)
    assert not calls._inside(tmp_path / "items", work)
    assert not calls._inside(tmp_path / "work2", work)
    assert calls._inside(tmp_path / "alias" / "sub", work)
    assert calls._inside(work / "sub", work)


def test_a_file_of_the_item_folder_is_shown_only_while_it_stays_inside(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    item_dir = repo / ".phasegate" / "items" / "it"
    item_dir.mkdir(parents=True)
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    (repo / "kept.md").write_text("kept")
    roots = (repo, item_dir)
    (item_dir / "plain.md").write_text("plain")
    assert read_inside(item_dir / "plain.md", roots) == "plain"
    assert read_inside(item_dir / "missing.md", roots) is None
    (item_dir / "in.md").symlink_to(repo / "kept.md")
    assert read_inside(item_dir / "in.md", roots) == "kept"
    (item_dir / "out.md").symlink_to(outside)
    shown = read_inside(item_dir / "out.md", roots)
    assert shown is not None and "secret" not in shown and "outside" in shown
    # A file that was plain becomes a symlink out of the repository: seen at once.
    (item_dir / "plain.md").unlink()
    (item_dir / "plain.md").symlink_to(outside)
    shown = read_inside(item_dir / "plain.md", roots)
    assert shown is not None and "secret" not in shown
    for name in ("plain.md", "in.md", "out.md", "missing.md"):
        path = str(item_dir / name)
        assert plainly_inside_any(path, roots) <= inside_any(path, roots)
        assert plainly_inside_any(path, roots) == plainly_inside_any(path, roots[::-1])


def test_the_paths_of_outputs_follow_the_item_folder_when_it_moves(tmp_path: Path) -> None:
    item = SimpleNamespace(item_dir=tmp_path / "one")
    prompts = PromptFor.__new__(PromptFor)
    prompts.item = cast(Any, item)
    prompts._paths, prompts._paths_of = {}, None
    first = prompts.item_path("spec.md")
    assert first == tmp_path / "one" / "spec.md"
    assert prompts.item_path("spec.md") is first
    item.item_dir = tmp_path / "two"
    assert prompts.item_path("spec.md") == tmp_path / "two" / "spec.md"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"plain\n",
        b"windows\r\nlines\r\n",
        b"old mac\rlines\r",
        b"mixed\r\r\n\n\r",
        b"\xef\xbb\xbfwith a BOM\n",
        b"bad \xff\xfe bytes \xe2\x82 cut\n",
        b"ends cut \xe2\x82",
        ("\u00e9" * 700_000 + "\r\n").encode(),
    ],
)
def test_a_file_is_read_as_a_text_file_is(tmp_path: Path, data: bytes) -> None:
    from phasegate.engine.prompting import read_file

    path = tmp_path / "doc.md"
    path.write_bytes(data)
    with open(path, encoding="utf-8", errors="replace") as handle:
        expected = handle.read()
    assert read_file(path) == expected
    assert read_file(str(path)) == expected


def test_no_text_is_read_from_a_folder_or_a_missing_file(tmp_path: Path) -> None:
    from phasegate.engine.prompting import read_file

    (tmp_path / "file").write_text("x")
    assert read_file(tmp_path) is None
    assert read_file(tmp_path / "missing.md") is None
    assert read_file(tmp_path / "file" / "under.md") is None
