"""`phasegate new NAME --workflow change` is refused (a change is created by `plan`): the
refusal, and the commands a user tries next (`run NAME`, `status NAME`), name the
command that creates it, `phasegate plan NAME "DESCRIPTION"`, not `phasegate new`."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import cli_in_process

PLAN = 'phasegate plan fix-x "DESCRIPTION"'


@pytest.fixture
def refused(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Path:
    monkeypatch.chdir(repo)
    code, _, err = cli_in_process(capsys, "new", "fix-x", "--workflow", "change")
    assert code == 2, err
    assert PLAN in err, err
    return repo


@pytest.mark.parametrize("command", ["run", "status"])
def test_the_next_command_after_the_refusal_names_plan(
    refused: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, _, err = cli_in_process(capsys, command, "fix-x")
    assert code != 0
    assert PLAN in err, err
    assert "phasegate new fix-x" in err, err  # still how an item of the default workflow starts
    assert len(err.strip().splitlines()) == 1, err
