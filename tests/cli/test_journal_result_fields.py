"""A hand-edited ``agent.finished``, ``checks.completed`` or ``check.finished`` line after the
state's position, whose result fields a resumed run would reuse have the wrong types, stops
`phasegate run` with exit code 5 and one line naming the journal, the line and the field, and
nothing written (not an internal error)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

from phasegate.errors import ExitCode

ITEM = Path("docs/features/x")
#: The call the next `phasegate run x` makes first: its recorded result is reused.
NEXT_CALL = '"event": "agent.finished", "key": "design#1/1/execute/0", "attempt": "a", "ok": true'


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture(scope="module")
def specified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = init_repo(tmp_path_factory.mktemp("fields") / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(repo, "new", "x", "--mode", "quick").returncode == 0
    assert phasegate(repo, "run", "x", "--until", "specify").returncode == 0
    return repo


CASES = {
    '"exit_status": "zero"': r"field 'exit_status' has the wrong type (str)",
    '"usage": "lots"': r"field 'usage' has the wrong type (str)",
    '"usage": {"input_tokens": "many"}': r"field 'usage.input_tokens' has the wrong type (str)",
    '"cost_usd": "free"': r"field 'cost_usd' has the wrong type (str)",
    '"duration_s": [1]': r"field 'duration_s' has the wrong type (list)",
}


@pytest.mark.parametrize("fields", list(CASES))
def test_a_wrong_typed_result_field_is_reported_not_crashed_on(
    fields: str, specified: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(specified, repo, symlinks=True)
    journal = repo / ITEM / ".journal.jsonl"
    with open(journal, "a") as handle:
        handle.write(f'{{"ts": "t", {NEXT_CALL}, {fields}}}\n')
    number = len(journal.read_text().splitlines())
    before = journal.read_bytes()
    ran = phasegate(repo, "run", "x")
    assert ran.returncode == ExitCode.STATE, ran.stderr
    line = ran.stderr.strip().splitlines()[-1]
    assert "internal error" not in ran.stderr and "Traceback" not in ran.stderr
    assert line.startswith(f"phasegate: error: journal {journal} line {number}: ")
    assert CASES[fields] in line and line.endswith("it was left untouched")
    assert journal.read_bytes() == before


def test_null_result_fields_are_still_reused(specified: Path, tmp_path: Path) -> None:
    """Missing or null result fields are not a problem: the result is reused."""
    repo = tmp_path / "repo"
    shutil.copytree(specified, repo, symlinks=True)
    with open(repo / ITEM / ".journal.jsonl", "a") as handle:
        handle.write(
            f'{{"ts": "t", {NEXT_CALL}, "exit_status": null, "usage": null, "cost_usd": null}}\n'
        )
    ran = phasegate(repo, "run", "x", "--until", "design")
    assert ran.returncode == 0, ran.stderr
    assert "recorded result (a) reused" in ran.stdout + ran.stderr


@pytest.fixture(scope="module")
def tasked(specified: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An item whose next node is implement: its first check round is implement#1/1/checks."""
    repo = tmp_path_factory.mktemp("tasked") / "repo"
    shutil.copytree(specified, repo, symlinks=True)
    assert phasegate(repo, "run", "x", "--until", "create-tasks").returncode == 0
    return repo


ROUND = '"key": "implement#1/1/checks", "node": "implement", "iteration": 1'
OUTCOME = '"name": "test", "command": "true", "passed": true'
CHECK_CASES = {
    '"event": "checks.completed", "outcomes": [5]': "field 'outcomes[0]' has the wrong type (int)",
    f'"event": "checks.completed", "outcomes": [{{{OUTCOME}, "bogus": 1}}]': (
        "field 'outcomes[0].bogus' is unknown"
    ),
    f'"event": "checks.completed", "outcomes": [{{{OUTCOME}, "duration_s": "x"}}]': (
        "field 'outcomes[0].duration_s' has the wrong type (str)"
    ),
    '"event": "checks.completed", "outcomes": [{"name": "test", "command": "true"}]': (
        "field 'outcomes[0].passed' is missing"
    ),
    '"event": "check.finished", "index": 0, "check": "test", "command": "true", '
    '"passed": true, "duration_s": "x"': "field 'duration_s' has the wrong type (str)",
}


@pytest.mark.parametrize("fields", list(CHECK_CASES))
def test_a_wrong_typed_check_outcome_is_reported_not_crashed_on(
    fields: str, tasked: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(tasked, repo, symlinks=True)
    journal = repo / ITEM / ".journal.jsonl"
    with open(journal, "a") as handle:
        handle.write(f'{{"ts": "t", {ROUND}, {fields}}}\n')
    number = len(journal.read_text().splitlines())
    before = journal.read_bytes()
    ran = phasegate(repo, "run", "x")
    assert ran.returncode == ExitCode.STATE, ran.stderr
    line = ran.stderr.strip().splitlines()[-1]
    assert "internal error" not in ran.stderr and "Traceback" not in ran.stderr
    assert line.startswith(f"phasegate: error: journal {journal} line {number}: ")
    assert CHECK_CASES[fields] in line and line.endswith("it was left untouched")
    assert journal.read_bytes() == before
