"""Seed 000's `.meta.json`: its camelCase fields, written from the engine's state, and kept
readable by people who add to it or break it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.engine.runner import RunOptions
from phasegate.errors import StateCorruptError

FOLDER = Path("docs/features/auth")
REJECT = {
    "verdict": {
        "approved": False,
        "issues": [{"severity": "blocker", "description": "Scope of SSO unclear"}],
        "summary": "unclear",
    }
}


def specify(tmp_path: Path, verdicts: list[dict[str, Any]] | None = None) -> Repo:
    """A feature item run through specify (the chain reviewer answering ``verdicts``)."""
    repo = make_repo(init_repo(tmp_path / "repo"))
    repo.new("auth", mode="standard", description="Add login")
    script = approving_script()
    if verdicts is not None:
        script["chain-reviewer"] = {"specify": verdicts, "*": [script["*"]["*"][0]]}
    backend = ScriptedBackend(script=script)
    repo.run("auth", backends={"default": backend}, options=RunOptions(until="specify"))
    return repo


def meta(repo: Repo) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo.root / FOLDER / ".meta.json").read_text())
    return data


def test_seed_000_camel_case_fields_are_written(tmp_path: Path) -> None:
    """Interface 3 fields: currentPhase, phases[name].{started, completed, iterations,
    reviewerNotes, verified}."""
    document = meta(specify(tmp_path, [REJECT] * 3))
    assert document["currentPhase"] == "specify"
    record = document["phases"]["specify"]
    assert record["started"] and record["completed"]
    assert (record["iterations"], record["verified"]) == (3, False)
    assert record["reviewerNotes"] == ["[blocker] Scope of SSO unclear"]
    assert {"currentPhase", "baseCommit", "usage", "mode", "status", "worktree"} <= set(document)
    assert "current_phase" not in document
    assert {"inputTokens", "outputTokens", "costUsd"} <= set(record["usage"])


def test_unknown_keys_a_person_adds_are_kept(tmp_path: Path) -> None:
    """Hand-added keys survive the next run, at the top and inside a phase."""
    repo = specify(tmp_path)
    document = meta(repo)
    document["owner"] = "ana"
    document["phases"]["specify"]["ticket"] = "JIRA-1"
    (repo.root / FOLDER / ".meta.json").write_text(json.dumps(document))
    backend = ScriptedBackend(script=approving_script())
    repo.run("auth", backends={"default": backend}, options=RunOptions(until="design"))
    after = meta(repo)
    assert after["owner"] == "ana"
    assert after["phases"]["specify"]["ticket"] == "JIRA-1"
    assert after["phases"]["design"]["completed"]


def test_reading_the_state_rewrites_nothing(tmp_path: Path) -> None:
    """status reads the state; the files stay byte for byte (no drift between runs)."""
    repo = specify(tmp_path)
    files = [repo.root / FOLDER / name for name in (".meta.json", ".engine.json")]
    before = [f.read_bytes() for f in files]
    Repo(repo.root).status("auth")
    assert [f.read_bytes() for f in files] == before


@pytest.mark.parametrize(
    ("broken", "field"),
    [
        ({"mode": None}, "mode"),
        ({"phases": {"specify": {"iterations": "many"}}}, "phases.specify.iterations"),
        ({"status": "paused"}, "status"),
    ],
)
def test_invalid_state_document_names_the_file_and_field(
    tmp_path: Path, broken: dict[str, Any], field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``.meta.json`` is written from the engine state: one a person broke is named with its
    field in a warning, and the run writes it again."""
    repo = specify(tmp_path)
    path = repo.root / FOLDER / ".meta.json"
    text = json.dumps({**meta(repo), **broken})
    path.write_text(text)
    backends = {"default": ScriptedBackend(script=approving_script())}
    repo.run("auth", backends=backends, options=RunOptions(until="design"))
    message = capsys.readouterr().err
    assert str(path) in message
    assert f"invalid at {field}" in message
    assert "the next run writes it again" in message
    written = json.loads(path.read_text())
    assert written["mode"] == "standard" and written["status"] == "active"
    assert isinstance(written["phases"]["specify"]["iterations"], int)


def test_an_unknown_mode_in_the_engine_state_is_corrupt_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    """Detect before writing: a state naming a mode the workflow lacks stops at load (exit 5)."""
    repo = specify(tmp_path)
    engine = repo.root / FOLDER / ".engine.json"
    data = json.loads(engine.read_text())
    data["mode"] = "turbo"
    engine.write_text(json.dumps(data))
    journal = repo.root / FOLDER / ".journal.jsonl"
    before = (engine.read_bytes(), journal.read_bytes())
    with pytest.raises(StateCorruptError, match=r"unknown mode 'turbo'"):
        repo.run("auth", backends={"default": ScriptedBackend(script=approving_script())})
    assert (engine.read_bytes(), journal.read_bytes()) == before
