"""Error lines and the dashboard's timeline spare the names of the items they are about.

A variable named like a secret may hold an item's or a phase's name
(``RELEASE_TOKEN=abc-item``, ``W_TOKEN=brainstorm``): the item's own files keep those
names, and so do the lines phasegate prints about the item (errors, waiting lines) and
the journal events the dashboard shows, while a real secret in them is still masked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from cli_process import run_cli
from phasegate.redact import MASK

ITEM = "abc-item"
SECRET = "MYSECRETVALUE123"
ENV = {"RELEASE_TOKEN": ITEM, "W_TOKEN": "brainstorm", "MY_API_KEY": SECRET}


def _repo(path: Path) -> Path:
    """A git repository with the feature item ``abc-item`` waiting at a skip warning."""
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    done = run_cli(path, "init", env={"PHASEGATE_AGENT_CLIS": "none"})
    assert done.returncode == 0, done.stderr
    done = run_cli(path, "new", ITEM, "--workflow", "feature", "--description", "x", env=ENV)
    assert done.returncode == 0, done.stderr
    return path


def test_error_and_waiting_lines_keep_the_items_names(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    ran = run_cli(repo, "run", ITEM, "--phase", "design", env=ENV)
    assert ran.returncode == 3, ran.stderr
    assert "skipping brainstorm, specify" in ran.stderr, ran.stderr
    assert f"(phasegate run {ITEM} --phase design --yes)" in ran.stderr, ran.stderr
    assert MASK not in ran.stderr, ran.stderr
    answered = run_cli(repo, "answer", ITEM, "nosuch", "yes", env=ENV)
    assert answered.returncode == 2, answered.stderr
    assert answered.stderr.startswith(f"phasegate: error: {ITEM} has no decision 'nosuch'")
    assert MASK not in answered.stderr, answered.stderr
    # A secret in the line is still masked.
    asked = run_cli(repo, "answer", ITEM, SECRET, "yes", env=ENV)
    assert asked.returncode == 2, asked.stderr
    assert SECRET not in asked.stderr and f"no decision '{MASK}'" in asked.stderr, asked.stderr
    assert f"phasegate: error: {ITEM} " in asked.stderr, asked.stderr


def test_the_dashboard_timeline_keeps_the_items_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path / "repo")
    ran = run_cli(repo, "run", ITEM, "--phase", "design", env=ENV)
    assert ran.returncode == 3, ran.stderr
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    from phasegate.dashboard import data

    events, _ = data.journal_events(repo, ITEM)
    shown = json.dumps(events)
    assert MASK not in shown, shown
    question = next(e["question"] for e in events if e["event"] == "decision.needed")
    assert question.startswith("Warning: skipping brainstorm, specify"), question
    assert events[0]["item"] == ITEM


RECORDER = """\
import sys
from pathlib import Path
Path(sys.argv[1]).write_text(sys.stdin.read())
"""


def test_the_notify_command_hears_the_items_names(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    heard = tmp_path / "heard.json"
    config = repo / ".phasegate" / "config.yaml"
    settings = {"command": f"{sys.executable} {script} {heard}"}
    config.write_text(config.read_text() + "\nnotify: " + json.dumps(settings) + "\n")
    ran = run_cli(repo, "run", ITEM, "--phase", "design", env=ENV)
    assert ran.returncode == 3, ran.stderr
    event = json.loads(heard.read_text())
    assert event["event"] == "waiting" and event["item"] == ITEM
    assert "skipping brainstorm, specify" in event["message"], event
    assert MASK not in json.dumps(event), event


def test_the_dashboard_shows_artifacts_under_their_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path / "repo")
    notes = f"# Brainstorm\n\nbrainstorm of {ITEM}, key {SECRET}\n"
    (repo / "docs" / "features" / ITEM / "brainstorm.md").write_text(notes)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    from starlette.testclient import TestClient

    from phasegate.dashboard.server import create_app

    with TestClient(create_app(repo), base_url="http://127.0.0.1:8765") as client:
        listed = client.get(f"/api/items/{ITEM}/artifacts").json()
        assert {"name": "brainstorm.md", "url": f"/items/{ITEM}/artifacts/brainstorm.md"} in listed
        shown = client.get(f"/api/items/{ITEM}/artifacts/brainstorm.md").json()
    assert shown["markdown"] == f"# Brainstorm\n\nbrainstorm of {ITEM}, key {MASK}\n", shown
