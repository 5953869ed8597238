"""Notify events: ``completed`` is announced only by the run that completed its item.

A run that stops before its item ends (``--until``, ``--phase``, a ``--command`` that
stops at one of its ``stops_at`` labels) did not complete it, and a run with nothing to
do announces nothing either.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))
from review_loop_cli_helpers import ITEM, review_loop_repo, run_cli

COMMANDS_WORKFLOW = """\
name: cm
modes: {standard: {max_iterations: 1}}
roles: {w: {access: write}}
commands:
  draft: {runs_in: [drafting], stops_at: [building]}
  build: {runs_in: [building]}
nodes:
  - {id: a, label: drafting, executor: w, prompt: a.md}
  - {id: b, label: building, executor: w, prompt: b.md}
  - {id: fin, kind: end}
"""


def recording(repo: Path) -> Path:
    """Configure a notify command that appends every event it hears to a file."""
    heard = repo.parent / "heard.jsonl"
    config = repo / ".phasegate" / "config.yaml"
    command = json.dumps(f"cat >> {heard}")
    config.write_text(config.read_text() + f"\nnotify:\n  command: {command}\n")
    return heard


def events(heard: Path) -> list[str]:
    if not heard.exists():
        return []
    found: list[dict[str, Any]] = [
        json.loads(line) for line in heard.read_text().splitlines() if line.strip()
    ]
    return [e["event"] for e in found]


def _status(repo: Path, name: str) -> str:
    shown = run_cli(repo, "status", name, "--json")
    assert shown.returncode == 0, shown.stderr
    return str(json.loads(shown.stdout)["status"])


def test_until_and_phase_runs_announce_nothing_until_the_item_completes(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo")
    heard = recording(repo)
    for args in (("--phase", "planning"), ("--until", "planning"), ("--until", "planning")):
        ran = run_cli(repo, "run", ITEM, *args)
        assert ran.returncode == 0, ran.stderr
        assert _status(repo, ITEM) == "active"
        assert events(heard) == [], args
    done = run_cli(repo, "run", ITEM)
    assert done.returncode == 0, done.stderr
    assert _status(repo, ITEM) == "completed"
    assert events(heard) == ["completed"]
    last = json.loads(heard.read_text().splitlines()[-1])
    assert (last["item"], last["exit_code"]) == (ITEM, 0)


def test_a_command_stopping_at_its_label_announces_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert run_cli(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "cm"
    prompts.mkdir(parents=True)
    (prompts / "a.md").write_text("draft {{ item }}\n")
    (prompts / "b.md").write_text("build {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "cm.yaml").write_text(COMMANDS_WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    assert run_cli(repo, "new", "k2", "--workflow", "cm").returncode == 0
    heard = recording(repo)
    drafted = run_cli(repo, "run", "k2", "--command", "draft")
    assert drafted.returncode == 0, drafted.stderr
    assert _status(repo, "k2") == "active"
    assert events(heard) == []
    built = run_cli(repo, "run", "k2", "--command", "build")
    assert built.returncode == 0, built.stderr
    assert _status(repo, "k2") == "completed"
    assert events(heard) == ["completed"]
