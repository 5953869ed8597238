"""An item's folder and files as people handle them: a folder renamed or copied by hand,
a journal gone missing, a ``.meta.json`` edited or broken."""

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

from phasegate.dashboard import data
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
def designed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Item ``rl`` run up to design."""
    repo = init_repo(tmp_path_factory.mktemp("folders") / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(repo, "new", "rl", "-d", "rate limit").returncode == 0
    assert phasegate(repo, "run", "rl", "--until", "design").returncode == 0
    return repo


@pytest.fixture
def repo(designed: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(designed, copy, symlinks=True)
    return copy


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def one_error(result: subprocess.CompletedProcess[str]) -> str:
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("phasegate: error: ") and "Traceback" not in result.stderr
    return line


# -- a folder renamed or copied -----------------------------------------------------------


def test_a_renamed_folder_is_named_with_the_way_back_never_shown_under_the_old_name(
    repo: Path,
) -> None:
    """``status`` lists the folder as unreadable with one line saying which item it holds
    and to rename it back; ``status``/``run`` of it stop (exit 5) writing nothing; no
    command suggests the old name; renamed back, the item goes on."""
    (repo / FEATURES / "rl").rename(repo / FEATURES / "rl3")
    before = files_of(repo / FEATURES / "rl3")

    table = phasegate(repo, "status")
    assert table.returncode == 0, table.stderr
    assert "phasegate run rl" not in table.stdout
    assert "rl3" in table.stdout and "unreadable" in table.stdout
    assert (
        "folder docs/features/rl3 holds work item 'rl' (its .engine.json says so), not 'rl3'"
        in table.stdout
    )
    assert "rename the folder back to docs/features/rl;" in table.stdout
    listed = json.loads(phasegate(repo, "status", "--json").stdout)
    assert [(row["id"], "error" in row) for row in listed] == [("rl3", True)]
    assert [row["id"] for row in data.list_items(repo)] == ["rl3"]
    assert "error" in data.list_items(repo)[0]

    for args in (["status", "rl3"], ["run", "rl3"], ["decisions", "rl3"]):
        result = phasegate(repo, *args)
        assert result.returncode == ExitCode.STATE, (args, result.stderr)
        line = one_error(result)
        assert "holds work item 'rl'" in line and "docs/features/rl;" in line, line
        assert "phasegate new" not in line
    assert files_of(repo / FEATURES / "rl3") == before

    (repo / FEATURES / "rl3").rename(repo / FEATURES / "rl")
    assert phasegate(repo, "run", "rl", "--until", "create-plan").returncode == 0
    shown = json.loads(phasegate(repo, "status", "rl", "--json").stdout)
    assert shown["id"] == "rl" and shown["currentPhase"] == "create-plan"


def test_a_copied_folder_is_not_a_second_item_of_the_same_name(repo: Path) -> None:
    """A copy is listed once, as unreadable, told to be deleted if it is a copy; the
    original is listed and runs as before."""
    shutil.copytree(repo / FEATURES / "rl", repo / FEATURES / "rl2")
    listed = json.loads(phasegate(repo, "status", "--json").stdout)
    assert sorted((row["id"], "error" in row) for row in listed) == [
        ("rl", False),
        ("rl2", True),
    ]
    copy = next(row for row in listed if row["id"] == "rl2")
    assert "docs/features/rl exists too: delete docs/features/rl2 if it is a copy" in copy["error"]
    shown = phasegate(repo, "status", "rl2")
    assert shown.returncode == ExitCode.STATE
    assert "Next: phasegate run rl" not in shown.stdout
    assert "holds work item 'rl'" in one_error(shown)
    assert phasegate(repo, "run", "rl", "--until", "create-plan").returncode == 0


# -- logs of a missing journal --------------------------------------------------------------


def test_logs_of_a_missing_journal_is_the_state_error_runs_give(repo: Path) -> None:
    """``logs`` (and ``logs -f``) of an item whose journal the state has lines of: the one
    line ``run`` gives, exit 5."""
    (repo / FEATURES / "rl" / ".journal.jsonl").unlink()
    ran = phasegate(repo, "run", "rl")
    assert ran.returncode == ExitCode.STATE
    expected = one_error(ran)
    assert ".journal.jsonl is missing although the state records" in expected
    for args in (["logs", "rl"], ["logs", "rl", "--json"], ["logs", "rl", "-f"]):
        result = phasegate(repo, *args, timeout=60)
        assert result.returncode == ExitCode.STATE, (args, result.stderr)
        assert result.stdout == ""
        if "--json" in args:
            error = json.loads(result.stderr)
            assert error["exit_code"] == ExitCode.STATE and "is missing" in error["error"]
        else:
            assert one_error(result) == expected


def test_logs_of_an_item_that_journaled_nothing_is_empty(repo: Path) -> None:
    """A change written by hand has no journal yet: nothing to show, exit 0."""
    folder = repo / "changes" / "c1"
    folder.mkdir(parents=True)
    (folder / "STATE.yaml").write_text("change_id: c1\nphase: proposed\n")
    result = phasegate(repo, "logs", "c1")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


# -- .meta.json: written from the engine state -------------------------------------------


BROKEN_META = {
    "not JSON": lambda text: "{bad",
    "empty": lambda text: "",
    "unknown mode": lambda text: text.replace('"mode": "standard"', '"mode": "turbo"'),
    "unknown currentPhase": lambda text: text.replace(
        '"currentPhase": "design"', '"currentPhase": "deploy"'
    ),
    "wrong-typed field": lambda text: text.replace('"iterations": 1', '"iterations": "two"', 1),
    "unknown phase": lambda text: text.replace('"phases": {', '"phases": {"deploy": {},', 1),
}


@pytest.mark.parametrize("case", list(BROKEN_META))
def test_a_broken_meta_json_is_warned_of_and_written_again(repo: Path, case: str) -> None:
    """A ``.meta.json`` that cannot be used stops nothing: ``status`` and the dashboard
    show the item from ``.engine.json`` with one warning line, and the next run writes
    the file again from it."""
    meta = repo / FEATURES / "rl" / ".meta.json"
    good = json.loads(meta.read_text())
    spoiled = BROKEN_META[case](meta.read_text())
    assert spoiled != meta.read_text()
    meta.write_text(spoiled)

    shown = phasegate(repo, "status", "rl")
    assert shown.returncode == 0, shown.stderr
    assert "Next: phasegate run rl" in shown.stdout
    (warning,) = shown.stderr.strip().splitlines()
    assert warning.startswith(f"phasegate: warning: {meta} ")
    assert warning.endswith(
        "phasegate writes it from .engine.json, and the next run writes it again"
    )
    assert phasegate(repo, "status").returncode == 0
    assert data.item_detail(repo, "rl")["currentPhase"] == "design"
    assert meta.read_text() == spoiled  # reading it never writes it

    ran = phasegate(repo, "run", "rl", "--until", "create-plan")
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.count("phasegate: warning: ") == 1
    rebuilt = json.loads(meta.read_text())
    assert rebuilt["mode"] == good["mode"] and rebuilt["currentPhase"] == "create-plan"
    assert rebuilt["phases"]["design"] == good["phases"]["design"]
    assert phasegate(repo, "status", "rl").stderr == ""


def test_edits_of_meta_json_fields_are_overwritten_and_added_keys_kept(repo: Path) -> None:
    """The file is written from the engine state: a field edited by hand is written back
    as the engine has it; a key a person added stays."""
    meta = repo / FEATURES / "rl" / ".meta.json"
    document = json.loads(meta.read_text())
    document["mode"] = "hotfix"
    document["owner"] = "ana"
    meta.write_text(json.dumps(document, indent=2))
    ran = phasegate(repo, "run", "rl", "--until", "create-plan")
    assert ran.returncode == 0, ran.stderr
    rebuilt = json.loads(meta.read_text())
    assert (rebuilt["mode"], rebuilt["owner"]) == ("standard", "ana")
