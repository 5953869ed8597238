"""Files-in-JSON edits are applied inside the work tree only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from phasegate.agents.file_edits import (
    FILE_EDITS_SCHEMA,
    FileEdit,
    FileEdits,
    UnsafePath,
    apply_edits,
)


def _edits(*files: tuple[str, str], delete: tuple[str, ...] = ()) -> FileEdits:
    return FileEdits(
        summary="s", files=[FileEdit(path=p, content=c) for p, c in files], delete=list(delete)
    )


def test_relative_paths_create_folders_and_files(tmp_path: Path) -> None:
    """Nested relative paths are created under the work tree."""
    changed = apply_edits(_edits(("a/b/c.txt", "hello\n")), tmp_path)
    assert changed == ["a/b/c.txt"]
    assert (tmp_path / "a/b/c.txt").read_text() == "hello\n"


def test_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    """Replacing a file keeps its permission bits (an executable script stays executable)."""
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    apply_edits(_edits(("run.sh", "new")), tmp_path)
    assert script.read_text() == "new" and script.stat().st_mode & 0o777 == 0o755


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "absolute"),
        ("../sibling.txt", "'..'"),
        ("a/../../x", "'..'"),
        (".git/hooks/pre-commit", ".git"),
        ("sub/.git/config", ".git"),
        ("a\x00b.txt", "NUL byte"),
    ],
)
def test_unsafe_paths_are_refused(tmp_path: Path, path: str, reason: str) -> None:
    """Absolute paths, '..', .git and NUL bytes are refused with the reason."""
    with pytest.raises(UnsafePath, match=reason):
        apply_edits(_edits((path, "x")), tmp_path)


def test_symlink_leading_out_is_refused(tmp_path: Path) -> None:
    """A folder symlink pointing outside the work tree cannot be written through."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePath, match="symlink"):
        apply_edits(_edits(("link/evil.txt", "x")), work)
    assert not (outside / "evil.txt").exists()


def test_file_symlink_is_replaced_not_written_through(tmp_path: Path) -> None:
    """A symlink at the target is replaced by the new file; what it pointed to is untouched."""
    work = tmp_path / "work"
    work.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("original")
    (work / "notes.txt").symlink_to(victim)
    apply_edits(_edits(("notes.txt", "new")), work)
    assert victim.read_text() == "original"
    assert not (work / "notes.txt").is_symlink()
    assert (work / "notes.txt").read_text() == "new"


def test_one_bad_path_means_nothing_is_written(tmp_path: Path) -> None:
    """Every path is checked before the first write."""
    with pytest.raises(UnsafePath):
        apply_edits(_edits(("good.txt", "x"), ("/tmp/bad.txt", "y")), tmp_path)
    assert not (tmp_path / "good.txt").exists()


def test_absolute_path_inside_a_granted_folder_is_accepted(tmp_path: Path) -> None:
    """The work item folder outside the tree (``extra_dirs``) may be written by absolute path."""
    work, item_dir = tmp_path / "work", tmp_path / "items" / "x"
    work.mkdir()
    item_dir.mkdir(parents=True)
    apply_edits(_edits((str(item_dir / "spec.md"), "# Spec")), work, (item_dir,))
    assert (item_dir / "spec.md").read_text() == "# Spec"


def test_delete_removes_only_inside_the_tree(tmp_path: Path) -> None:
    """Deleting a file works; deleting outside the tree is refused."""
    (tmp_path / "old.txt").write_text("x")
    apply_edits(_edits(delete=("old.txt",)), tmp_path)
    assert not (tmp_path / "old.txt").exists()
    with pytest.raises(UnsafePath):
        apply_edits(_edits(delete=(os.path.join("..", "x"),)), tmp_path)


def _instances(schema: Any) -> list[Any]:
    """Answers valid under ``schema``, boundary cases first (empty, one, the maximum)."""
    kind = schema.get("type")
    if kind == "string":
        return ["", "docs/spec.md", "../escape", "/abs/path", "a\x00b", "x" * 300]
    if kind == "array":
        items = _instances(schema["items"])
        largest = schema.get("maxItems", 3)
        return [[], [items[0]], items[:3], [items[-1]] * largest]
    if kind == "object":
        options = {name: _instances(sub) for name, sub in schema["properties"].items()}
        answers = []
        for index in range(max(len(o) for o in options.values())):
            answers.append({name: o[index % len(o)] for name, o in options.items()})
        return answers
    raise AssertionError(f"unexpected schema node {schema}")


def test_every_answer_valid_under_the_schema_parses() -> None:
    """The schema handed to the model and the model reading the reply cannot disagree:
    each answer the schema accepts parses (an empty path included: it is refused when
    applied, naming it, instead of making the reply unreadable)."""
    answers = _instances(FILE_EDITS_SCHEMA)
    assert len(answers) >= 6
    for answer in answers:
        jsonschema.validate(answer, FILE_EDITS_SCHEMA)
        FileEdits.model_validate_json(json.dumps(answer))


def test_schema_is_strict_mode_ready() -> None:
    """Every object closes its properties and requires all of them (OpenAI strict mode)."""

    def objects(node: Any) -> list[dict[str, Any]]:
        if isinstance(node, dict):
            found = [node] if node.get("type") == "object" else []
            return found + [o for value in node.values() for o in objects(value)]
        return []

    found = objects(FILE_EDITS_SCHEMA)
    assert len(found) == 2
    for node in found:
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    assert "$ref" not in json.dumps(FILE_EDITS_SCHEMA)


def test_empty_path_is_refused_when_applied(tmp_path: Path) -> None:
    """The check the schema leaves out happens before anything is written."""
    with pytest.raises(UnsafePath, match="empty"):
        apply_edits(_edits(("ok.txt", "x"), ("", "y")), tmp_path)
    assert not (tmp_path / "ok.txt").exists()
