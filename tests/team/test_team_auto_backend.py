"""The ``auto`` backend smoke-runs the ``team`` workflow without a model or a script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from team_helpers import ITEM, cli, init_repo, status_json, write_config


@pytest.mark.parametrize(
    ("mode", "answers"),
    [
        (
            "full",
            ["--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch"],
        ),
        (
            "full",
            [
                "--answer",
                "UD-APPROVE-DESIGN=approved",
                "--answer",
                "UD-REVIEW-STRATEGY=single-final",
            ],
        ),
        ("lean", []),
    ],
)
def test_auto_backend_walks_team_to_done(tmp_path: Path, mode: str, answers: list[str]) -> None:
    """Every executor writes a valid example of its outputs (the parsers offer one), every
    review passes, the gates are answered with --answer: the session reaches DONE with the
    Definition of Done checked like any other."""
    repo = init_repo(tmp_path / "repo")
    write_config(repo, {})
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text().replace("backend: scripted", "backend: auto"))
    assert cli(repo, "new", ITEM, "-w", "team", "-m", mode, "-d", "Add a login").returncode == 0
    result = cli(repo, "run", ITEM, *answers)
    assert result.returncode == 0, result.stderr
    status = status_json(repo)
    assert status["current_state"] == "DONE"
    assert [t["status"] for t in status["tasks"]] == ["completed"]
    assert status["last_ci_result"] == "green"


def _auto_repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "repo")
    write_config(repo, {})
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text().replace("backend: scripted", "backend: auto"))
    return repo


def test_auto_backend_fills_a_folder_output(tmp_path: Path) -> None:
    """A request naming a user interface runs the Designer, whose output is the folder
    design-specs/: the backend writes a file into it, so DESIGN passes and the session
    reaches DONE."""
    repo = _auto_repo(tmp_path)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", "Add a settings page").returncode == 0
    answers = ["UD-APPROVE-DESIGN=approved", "UD-REVIEW-STRATEGY=single-final"]
    result = cli(repo, "run", ITEM, *(a for x in answers for a in ("--answer", x)))
    assert result.returncode == 0, result.stdout + result.stderr
    designs = repo / ".agents-work" / ITEM / "design-specs"
    assert designs.is_dir()
    assert [p.name for p in designs.iterdir() if p.is_file() and p.read_text().strip()]
    assert status_json(repo)["current_state"] == "DONE"


def test_status_table_shows_done_for_a_finished_lean_session(tmp_path: Path) -> None:
    """The table's phase of a finished lean session is DONE, as ``status --json`` says."""
    repo = _auto_repo(tmp_path)
    new = cli(repo, "new", ITEM, "-w", "team", "-m", "lean", "-d", "Fix the typo in the text")
    assert new.returncode == 0
    assert cli(repo, "run", ITEM).returncode == 0
    as_json = json.loads(cli(repo, "status", ITEM, "--json").stdout)
    assert (as_json["currentState"], as_json["currentPhase"]) == ("DONE", "DONE")
    table = cli(repo, "status").stdout
    row = next(line.split() for line in table.splitlines() if line.split()[:1] == [ITEM])
    assert row[:4] == [ITEM, "team", "completed", "DONE"], table
    assert "INTAKE_LEAN" not in table


@pytest.mark.parametrize("name", ["specs/", "specs"])
def test_auto_backend_writes_a_file_into_a_folder_output(tmp_path: Path, name: str) -> None:
    """A folder output (named with a trailing "/", or already a folder) gets a non-empty
    file in it, which is what the gate needs of a folder."""
    from phasegate.agents.auto import AutoBackend
    from phasegate.agents.base import Access, AgentRequest

    if not name.endswith("/"):
        (tmp_path / name).mkdir()
    request = AgentRequest(
        role="designer",
        prompt=(),
        workdir=tmp_path,
        access=Access.WRITE,
        hints={"outputs": [name]},
    )
    assert AutoBackend().run(request).exit_status == 0
    written = [p for p in (tmp_path / "specs").rglob("*") if p.is_file()]
    assert written and all(p.read_text().strip() for p in written)
