"""``phasegate logs NAME`` of a folder renamed or copied by hand: refused as the other
commands refuse it (one line, exit 5), from its state file or, when that cannot be
read, from its journal; an item whose state file alone is corrupt still shows its log."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

from phasegate.errors import ExitCode

FEATURES = Path("docs/features")


def phasegate(repo: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def specified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Item ``rl`` run up to specify."""
    repo = init_repo(tmp_path_factory.mktemp("logs") / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(repo, "new", "rl", "-d", "rate limit").returncode == 0
    assert phasegate(repo, "run", "rl", "--until", "specify").returncode == 0
    return repo


@pytest.fixture
def repo(specified: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(specified, copy, symlinks=True)
    return copy


def one_error(result: subprocess.CompletedProcess[str]) -> str:
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("phasegate: error: ") and "Traceback" not in result.stderr
    return line


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_logs_of_a_renamed_folder_is_refused_as_status_refuses_it(repo: Path) -> None:
    (repo / FEATURES / "rl").rename(repo / FEATURES / "rl3")
    before = files_of(repo / FEATURES / "rl3")
    status = phasegate(repo, "status", "rl3")
    assert status.returncode == ExitCode.STATE
    expected = one_error(status)
    for args in (["logs", "rl3"], ["logs", "rl3", "-f"]):
        result = phasegate(repo, *args, timeout=60)
        assert result.returncode == ExitCode.STATE, (args, result.stdout, result.stderr)
        assert result.stdout == ""
        assert one_error(result) == expected
        assert "holds work item 'rl'" in expected and "docs/features/rl;" in expected
    as_json = phasegate(repo, "logs", "rl3", "--json")
    assert as_json.returncode == ExitCode.STATE and as_json.stdout == ""
    assert "holds work item 'rl'" in json.loads(as_json.stderr)["error"]
    assert files_of(repo / FEATURES / "rl3") == before


def test_logs_of_a_copied_folder_is_refused_and_the_original_shown(repo: Path) -> None:
    shutil.copytree(repo / FEATURES / "rl", repo / FEATURES / "rl2")
    result = phasegate(repo, "logs", "rl2")
    assert result.returncode == ExitCode.STATE, result.stdout
    line = one_error(result)
    assert "docs/features/rl exists too: delete docs/features/rl2 if it is a copy" in line
    original = phasegate(repo, "logs", "rl")
    assert original.returncode == 0, original.stderr
    assert "specify" in original.stdout


def test_logs_of_an_item_whose_state_file_is_corrupt_still_shows_its_journal(
    repo: Path,
) -> None:
    (repo / FEATURES / "rl" / ".engine.json").write_text("{bad")
    assert phasegate(repo, "status", "rl").returncode == ExitCode.STATE
    result = phasegate(repo, "logs", "rl")
    assert result.returncode == 0, result.stderr
    assert "brainstorm" in result.stdout and "specify" in result.stdout


def test_logs_of_a_renamed_folder_whose_state_file_is_corrupt_is_refused_by_its_journal(
    repo: Path,
) -> None:
    (repo / FEATURES / "rl" / ".engine.json").write_text("{bad")
    (repo / FEATURES / "rl").rename(repo / FEATURES / "rl4")
    result = phasegate(repo, "logs", "rl4")
    assert result.returncode == ExitCode.STATE, result.stdout
    assert result.stdout == ""
    line = one_error(result)
    assert "folder docs/features/rl4 holds work item 'rl' (its .journal.jsonl says so)" in line
    assert "rename the folder back to docs/features/rl;" in line
