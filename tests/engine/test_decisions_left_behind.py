"""A decision waiting at a node the run leaves without it no longer waits: `run --phase` past a
gate that waits for a person, or a gate edited into another kind of node while its decision
waits. `decisions`, `status` (and its JSON), the SessionStart hook and the dashboard no longer
list it, `status` names the real next command, and an answer to it is refused as too late;
the decision is kept in the item's state, marked skipped, with why."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli
from phasegate.dashboard.data import decisions as dashboard_decisions
from phasegate.errors import ExitCode

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}}
nodes:
  - id: g1
    kind: gate
    question: Go on?
    choices: {yes: polish, no: stopped}
  - id: polish
    kind: check
    run: [{name: ok, run: "true"}]
    on: {fail: stopped}
  - id: done
    kind: end
  - id: stopped
    kind: end
    status: stopped
"""


def waiting_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A repository whose item ``one`` waits at gate ``g1`` (exit 3)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    (repo / ".phasegate" / "workflows").mkdir(parents=True, exist_ok=True)
    (repo / ".phasegate" / "workflows" / "wf.yaml").write_text(WORKFLOW)
    code, out, err = cli(capsys, "new", "one", "--workflow", "wf", "-C", str(repo))
    assert code == 0, out + err
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == ExitCode.WAITING, out + err
    code, out, err = cli(capsys, "decisions", "-C", str(repo))
    assert "one g1: Go on?" in out, out + err
    return repo


def hook_output(
    capsys: pytest.CaptureFixture[str], repo: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """What ``phasegate hook session-start`` prints in ``repo``."""

    monkeypatch.chdir(repo)
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"})
    monkeypatch.setattr("sys.stdin", io.StringIO(payload))
    code, out, err = cli(capsys, "hook", "session-start")
    assert code == 0, err
    return out


def assert_nothing_waits(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, nxt: str
) -> None:
    code, out, err = cli(capsys, "decisions", "-C", str(repo))
    assert code == 0, err
    assert "g1" not in out, out
    code, out, err = cli(capsys, "status", "one", "--json", "-C", str(repo))
    assert code == 0, err
    status = json.loads(out)
    assert status["pendingDecisions"] == []
    assert status["nextCommand"] == nxt
    code, out, err = cli(capsys, "status", "one", "-C", str(repo))
    assert "phasegate answer" not in out, out
    assert "phasegate answer" not in hook_output(capsys, repo, monkeypatch)
    listed = dashboard_decisions(repo, "one")
    assert [d["id"] for d in listed if d["status"] == "pending" or d["id"] == "g1"] == []
    code, out, err = cli(capsys, "answer", "one", "g1", "yes", "-C", str(repo))
    assert code == ExitCode.BAD_INPUT, out + err
    assert "came too late" in err and "nothing changed" in err, err
    engine = json.loads((repo / "wfitems" / "one" / ".engine.json").read_text())
    [kept] = engine["skipped_decisions"]
    assert (kept["id"], kept["status"], kept["question"]) == ("g1", "skipped", "Go on?")
    assert kept["reason"]


def test_run_phase_past_a_waiting_gate_leaves_no_decision_waiting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = waiting_item(tmp_path, capsys)
    code, out, err = cli(capsys, "run", "one", "--phase", "polish", "--yes", "-C", str(repo))
    assert code == 0, out + err
    assert_nothing_waits(repo, capsys, monkeypatch, "phasegate run one")
    code, out, err = cli(capsys, "status", "one", "--json", "-C", str(repo))
    phases = {p["node"]: p["status"] for p in json.loads(out)["phases"]}
    assert phases == {"g1": "skipped", "polish": "completed"}, phases
    assert "Next command: phasegate run one" in hook_output(capsys, repo, monkeypatch)
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == 0, out + err
    code, out, err = cli(capsys, "status", "one", "--json", "-C", str(repo))
    assert json.loads(out)["status"] == "completed"


def test_a_gate_edited_into_a_check_while_it_waits_leaves_no_decision_waiting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = waiting_item(tmp_path, capsys)
    edited = WORKFLOW.replace(
        "    kind: gate\n    question: Go on?\n    choices: {yes: polish, no: stopped}\n",
        '    kind: check\n    run: [{name: ok2, run: "true"}]\n    on: {fail: stopped}\n',
    )
    assert edited != WORKFLOW
    (repo / ".phasegate" / "workflows" / "wf.yaml").write_text(edited)
    code, out, err = cli(capsys, "run", "one", "-C", str(repo))
    assert code == 0, out + err
    code, out, err = cli(capsys, "status", "one", "--json", "-C", str(repo))
    assert json.loads(out)["status"] == "completed"
    assert_nothing_waits(repo, capsys, monkeypatch, json.loads(out)["nextCommand"])
