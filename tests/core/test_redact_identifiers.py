"""phasegate's own identifiers are recorded as they are, whatever the environment holds.

A variable named like a secret may hold an ordinary word that is also the name of a
workflow or one of its phases (``AUTH_MODE=review-loop``): the state and journal
still name the workflow and phase, while real secrets in free text stay masked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from phasegate.dashboard import data
from phasegate.redact import MASK, Redactor
from review_loop_cli_helpers import ITEM, approving_agents, review_loop_repo, run_cli

SECRET = "MYSECRETVALUE123"
#: Secret-named variables holding identifiers of review-loop, and one real secret.
ENV = {
    "SESSION_TOKEN": "implementing",
    "AUTH_MODE": "review-loop",
    "DECISION_SECRET": "plan-rejected",
    "MY_API_KEY": SECRET,
}


def test_identifiers_are_kept_and_secrets_in_free_text_masked(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo", approving_agents(summary=f"ok, used {SECRET}"))
    ran = run_cli(repo, "run", ITEM, env=ENV)
    assert ran.returncode == 0, ran.stderr
    folder = repo / "work" / ITEM
    engine = json.loads((folder / ".engine.json").read_text())
    assert engine["workflow"] == "review-loop"
    assert engine["brief"]["workflow"] == "review-loop"
    assert engine["brief"]["currentPhase"] == "implementing"
    journal = [json.loads(line) for line in (folder / ".journal.jsonl").read_text().splitlines()]
    phases = {event.get("phase") for event in journal} - {None}
    assert "implementing" in phases and MASK not in phases
    attempts = [event["attempt"] for event in journal if "attempt" in event]
    assert any(a.startswith("implementing.1.developer.") for a in attempts)
    # The reviewers' summaries are free text: the real secret is masked there.
    recorded = "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    assert SECRET not in recorded and MASK in recorded
    # Read back without the variables, the item is where it is.
    status = run_cli(repo, "status", ITEM, "--json")
    assert status.returncode == 0, status.stderr
    assert MASK not in status.stdout and "implementing" in status.stdout


def test_the_dashboard_names_the_workflow_with_such_variables_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = review_loop_repo(tmp_path / "repo")
    assert run_cli(repo, "run", ITEM).returncode == 0
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    detail = data.item_detail(repo, ITEM)
    assert detail["workflow"] == "review-loop"
    (row,) = data.list_items(repo)
    assert row["workflow"] == "review-loop"


def test_a_redactor_spares_identifiers_only() -> None:
    redactor = Redactor(["implementing", SECRET], use_environ=False)
    spared = redactor.sparing(["implementing", "planning"])
    assert spared.text("implementing the plan") == "implementing the plan"
    assert spared.text(f"key {SECRET}") == f"key {MASK}"
    assert redactor.text("implementing the plan") == f"{MASK} the plan"
