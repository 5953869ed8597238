"""phasegate's own words in the documents it writes stay as they are, whatever the
environment holds.

A variable named like a secret may hold a word phasegate itself writes as a status, a
review, a stage or a phase (``X_TOKEN=approved``, ``C_KEY=active``): the fields of
state, journal and ``.meta.json`` that hold phasegate's own words keep them, so
``status`` and ``logs`` read them back, while a real secret in free text (a reviewer's
summary, the description) is still masked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))
from phasegate.redact import MASK, Redactor
from review_loop_cli_helpers import ITEM, approving_agents, review_loop_repo, run_cli

SECRET = "MYSECRETVALUE123"
#: Secret-named variables holding words phasegate writes, and one real secret.
WORDS = {
    "X_TOKEN": "approved",
    "C_KEY": "active",
    "A_KEY": "completed",
    "P_TOKEN": "pending",
    "I_TOKEN": "implement",
}
ENV = {**WORDS, "MY_API_KEY": SECRET}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _feature_repo(path: Path) -> Path:
    """A git repository whose roles use the auto backend, with the feature item ``a1``."""
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    done = run_cli(path, "init", env={"PHASEGATE_AGENT_CLIS": "none"})
    assert done.returncode == 0, done.stderr
    config = path / ".phasegate" / "config.yaml"
    text = config.read_text()
    assert "{backend: scripted}" in text
    config.write_text(text.replace("{backend: scripted}", "{backend: auto}"))
    described = ("--description", f"x {SECRET}")
    done = run_cli(path, "new", "a1", "--workflow", "feature", *described, env=ENV)
    assert done.returncode == 0, done.stderr
    return path


def test_feature_state_meta_and_journal_keep_their_words(tmp_path: Path) -> None:
    repo = _feature_repo(tmp_path / "repo")
    ran = run_cli(repo, "run", "a1", "--until", "specify", env=ENV)
    assert ran.returncode == 0, ran.stderr
    folder = repo / "docs" / "features" / "a1"
    engine = json.loads((folder / ".engine.json").read_text())
    assert engine["status"] == "active"
    assert engine["brief"]["status"] == "active"
    assert engine["nodes"]["specify"]["review"] == "approved"
    assert engine["nodes"]["design"]["stage"] == "execute"
    meta = json.loads((folder / ".meta.json").read_text())
    assert meta["status"] == "active"
    assert meta["phases"]["brainstorm"]["review"] == "approved"
    assert meta["phases"]["specify"]["review"] == "approved"
    journal = _lines(folder / ".journal.jsonl")
    reviews = [e["review"] for e in journal if e["event"] == "phase.completed"]
    assert reviews == ["approved", "approved"]
    for event in journal:
        for key in ("event", "phase", "node", "status", "review", "stage", "outcome"):
            assert event.get(key) != MASK, event
    # The description is free text: the secret in it is masked everywhere it is kept.
    recorded = "".join(p.read_text() for p in folder.rglob(".*") if p.is_file())
    assert SECRET not in recorded
    assert engine["description"] == f"x {MASK}"
    # Read back with the variables still set, and without them: nothing is unreadable.
    for env in (ENV, {}):
        status = run_cli(repo, "status", "a1", env=env)
        assert status.returncode == 0, status.stderr
        shown = status.stdout.splitlines()
        assert shown[0] == "a1 (feature, mode standard, active)", status.stdout
        assert shown[1].strip() == f"x {MASK}"  # the description, masked
        assert MASK not in "\n".join(shown[2:]), status.stdout
        assert "approved" in status.stdout
        assert "cannot be used" not in status.stderr, status.stderr
        logs = run_cli(repo, "logs", "a1", env=env)
        assert logs.returncode == 0, logs.stderr
        assert "completed after 1 iteration (approved)" in logs.stdout, logs.stdout


def test_review_loop_keeps_its_words_and_masks_the_summary_secret(tmp_path: Path) -> None:
    agents = approving_agents(summary=f"ok, used {SECRET}")
    repo = review_loop_repo(tmp_path / "repo", agents)
    ran = run_cli(repo, "run", ITEM, env=ENV)
    assert ran.returncode == 0, ran.stderr
    folder = repo / "work" / ITEM
    engine = json.loads((folder / ".engine.json").read_text())
    assert engine["status"] == "completed"
    assert engine["brief"]["status"] == "completed"
    for event in _lines(folder / ".journal.jsonl"):
        for key in ("event", "phase", "node", "status", "review", "stage", "outcome", "attempt"):
            assert event.get(key) != MASK, event
            assert MASK not in str(event.get(key, "")), event
    recorded = "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    assert SECRET not in recorded
    assert f"ok, used {MASK}" in recorded
    status = run_cli(repo, "status", ITEM, "--json")
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    text = json.dumps(shown)
    assert MASK not in text and "completed" in text


def test_a_redactor_spares_structural_fields_only() -> None:
    redactor = Redactor(["approved", SECRET], use_environ=False)
    record = {
        "status": "approved",
        "review": ["approved", {"summary": "approved it"}],
        "summary": f"approved with {SECRET}",
        "nested": {"stage": "approved", "note": "approved"},
        # Token shapes are masked under every key.
        "attempt": "ghp_" + "a" * 30,
    }
    assert redactor.data(record) == {
        "status": "approved",
        "review": ["approved", {"summary": f"{MASK} it"}],
        "summary": f"{MASK} with {MASK}",
        "nested": {"stage": "approved", "note": MASK},
        "attempt": MASK,
    }
    assert redactor.field("status", "approved") == "approved"
    assert redactor.field("summary", "approved") == MASK
