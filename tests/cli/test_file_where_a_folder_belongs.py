"""A file where phasegate keeps a folder, or a folder where it keeps a file: one line naming
it and a documented exit code, never "internal error"; moved away, the run carries on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import item_run_until
from engine_helpers import phasegate_cli as phasegate

from phasegate.errors import ExitCode

ITEM = Path("docs/features/x")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the approving scripted agents and item ``x`` run to brainstorm."""
    return item_run_until(tmp_path / "repo", "brainstorm")


def one_error(result: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("phasegate:")]
    assert len(lines) == 1, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    return lines[0]


def test_a_file_in_place_of_the_locks_folder_is_named(repo: Path) -> None:
    locks = repo / ".phasegate" / "locks"
    for lock in locks.iterdir():
        lock.unlink()
    locks.rmdir()
    locks.write_text("")
    for args in (("run", "x"), ("answer", "x", "some-decision", "yes")):
        refused = phasegate(repo, *args)
        assert refused.returncode == ExitCode.BAD_INPUT, (args, refused.stderr)
        assert one_error(refused) == (
            "phasegate: error: .phasegate/locks exists and is not a folder; "
            "move it away to work on item 'x'"
        )
    locks.unlink()
    assert phasegate(repo, "run", "x").returncode == 0


def test_a_folder_in_place_of_the_journal_is_named(repo: Path) -> None:
    journal = repo / ITEM / ".journal.jsonl"
    kept = journal.read_bytes()
    journal.unlink()
    journal.mkdir()
    for args in (("run", "x"), ("status", "x"), ("logs", "x")):
        refused = phasegate(repo, *args)
        assert refused.returncode == ExitCode.STORAGE, (args, refused.stderr)
        assert one_error(refused).startswith(
            f"phasegate: error: cannot access {journal}: a folder is where a file belongs "
            "(EISDIR); "
        )
    state = repo / ITEM / ".engine.json"
    state.write_bytes(state.read_bytes())  # changed since the index read it: read afresh
    listed = phasegate(repo, "status")  # the item is listed as unreadable, naming the file
    assert listed.returncode == 0, listed.stderr
    assert f"cannot access {journal}: a folder is where a file belongs" in listed.stdout
    journal.rmdir()
    journal.write_bytes(kept)
    assert phasegate(repo, "run", "x").returncode == 0


def test_a_folder_in_place_of_the_state_file_is_named_not_a_missing_item(repo: Path) -> None:
    """The item is there: its state file is not a file (exit 5), not "no work item"."""
    state = repo / ITEM / ".engine.json"
    kept = state.read_bytes()
    state.unlink()
    state.mkdir()
    expected = (
        f"phasegate: error: state file {state} cannot be read: a folder is where a file "
        "belongs (EISDIR)"
    )
    for args in (("run", "x"), ("status", "x")):
        refused = phasegate(repo, *args)
        assert refused.returncode == ExitCode.STATE, (args, refused.stderr)
        assert one_error(refused) == expected
    listed = phasegate(repo, "status")
    assert listed.returncode == 0, listed.stderr
    assert expected.removeprefix("phasegate: error: ") in listed.stdout + listed.stderr
    state.rmdir()
    state.write_bytes(kept)
    assert phasegate(repo, "run", "x").returncode == 0


def test_a_folder_in_place_of_the_config_is_not_called_invalid_yaml(repo: Path) -> None:
    config = repo / ".phasegate" / "config.yaml"
    kept = config.read_bytes()
    config.unlink()
    config.mkdir()
    refused = phasegate(repo, "run", "x")
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stderr
    assert one_error(refused) == (
        f"phasegate: error: {config} cannot be read: a folder is where a file belongs (EISDIR)"
    )
    config.rmdir()
    config.write_bytes(kept)
    assert phasegate(repo, "run", "x").returncode == 0
