"""REVIEW_STRATEGY (seed 003): canonical answers, the question, the recommendation in code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from team_helpers import (
    DESCRIPTION,
    ITEM,
    cli,
    decision,
    make_team_repo,
    status_json,
    team_repo_api,
)

from phasegate.engine.plugin_api import PluginContext
from phasegate.errors import BlockedError
from phasegate.plugins import load
from phasegate.team.rules import classify_strategy, recommend_strategy
from phasegate.team.tasks import TeamTask


def _at_strategy(tmp_path: Path) -> Path:
    repo = make_team_repo(tmp_path / "repo")
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    result = cli(repo, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")
    assert result.returncode == 3 and "UD-REVIEW-STRATEGY" in result.stderr, result.stderr
    return repo


def _task(tid: str, deps: tuple[str, ...] = (), flags: tuple[str, ...] = ()) -> TeamTask:
    return TeamTask(id=tid, title=tid, dependencies=deps, risk_flags=flags)


def test_review_strategy_accepts_only_canonical_answers(tmp_path: Path) -> None:
    """REVIEW_STRATEGY step 2: only ``per-batch`` or ``single-final`` is persisted; an obvious
    synonym is normalised, anything else is refused and the gate stays pending."""
    repo = _at_strategy(tmp_path)
    refused = cli(repo, "answer", ITEM, "UD-REVIEW-STRATEGY", "whatever is faster")
    assert refused.returncode == 2
    assert decision(repo, "UD-REVIEW-STRATEGY")["status"] == "pending"
    assert cli(repo, "answer", ITEM, "UD-REVIEW-STRATEGY", "per batch").returncode == 0
    entry = decision(repo, "UD-REVIEW-STRATEGY")
    assert (entry["status"], entry["answer"]) == ("answered", "per-batch")


@pytest.mark.parametrize(
    ("said", "read_as"),
    [
        ("per-batch", "per-batch"),
        ("Per Batch", "per-batch"),
        ("after each task", "per-batch"),
        ("single final", "single-final"),
        ("once", "single-final"),
        ("cancel", "cancel"),
        ("fast please", "fast please"),
    ],
)
def test_strategy_answers_are_normalised_to_canonical_values(said: str, read_as: str) -> None:
    """REVIEW_STRATEGY step 2: synonyms become the canonical value; unknown ones stay invalid."""
    assert classify_strategy(said) == read_as


def test_strategy_question_states_count_scope_and_recommendation(tmp_path: Path) -> None:
    """REVIEW_STRATEGY Mechanism: the question gives the number of tasks, their scope, both
    strategies and the recommendation computed in code; the answer command shows it."""
    repo = _at_strategy(tmp_path)
    (gate,) = json.loads(cli(repo, "decisions", ITEM, "--json").stdout)
    question = gate["question"]
    assert "2 task(s) planned: T1 Rate limiter; T2 Document the limit" in question
    assert "2 file(s) named" in question and "risk flags: security" in question
    assert "per-batch:" in question and "single-final:" in question
    assert "Recommended: per-batch (high risk flags (security))" in question
    assert gate["recommendation"] == "per-batch"
    assert gate["command"] == f"phasegate answer {ITEM} UD-REVIEW-STRATEGY per-batch"
    assert status_json(repo)["current_state"] == "REVIEW_STRATEGY"


def test_recommendation_follows_the_seed_thresholds() -> None:
    """REVIEW_STRATEGY step 4: >= 5 tasks, cross-cutting dependencies or high risk flags ->
    per-batch; otherwise single-final."""
    small = [_task("T1"), _task("T2", ("T1",))]
    assert recommend_strategy(small)[0] == "single-final"
    assert recommend_strategy([_task(f"T{n}") for n in range(5)])[0] == "per-batch"
    fan_in = [_task("T1"), _task("T2"), _task("T3", ("T1", "T2"))]
    assert recommend_strategy(fan_in) == ("per-batch", "cross-cutting dependencies (T3)")
    assert recommend_strategy([_task("T1", flags=("auth",))])[0] == "per-batch"
    assert recommend_strategy([_task("T1", flags=("perf",))])[0] == "single-final"


def test_strategy_is_read_from_status_json_before_each_review_dispatch(tmp_path: Path) -> None:
    """REVIEW_STRATEGY step 5: before a Reviewer, QA or Security dispatch the strategy is
    re-read from status.json on disk, never from memory: a file without a canonical
    answer stops the dispatch, one that disagrees with the path being run stops it too."""
    repo_dir = _at_strategy(tmp_path)
    assert cli(repo_dir, "answer", ITEM, "UD-REVIEW-STRATEGY", "per-batch").returncode == 0
    item = team_repo_api(repo_dir).item(ITEM)
    state = item.load()
    applies = load("predicates", "team-review-applies")
    ctx = PluginContext(item, state, "tasks[T1]/review", None, None, {})
    assert applies(ctx) is True
    path = item.item_dir / "status.json"
    original = path.read_text()
    document = json.loads(original)
    for entry in document["user_decisions"]:
        if entry["decision_id"] == "UD-REVIEW-STRATEGY":
            entry.update(status="pending", answer=None, resolved_at=None, answered_by=None)
    path.write_text(json.dumps(document))
    with pytest.raises(BlockedError, match="no answered per-batch or single-final"):
        applies(ctx)
    for entry in document["user_decisions"]:
        if entry["decision_id"] == "UD-REVIEW-STRATEGY":
            entry.update(
                status="answered", answer="single-final", resolved_at="2026-01-01T00:00:00Z"
            )
    path.write_text(json.dumps(document))
    with pytest.raises(BlockedError, match="disagree"):
        applies(ctx)
    assert state.decisions["UD-REVIEW-STRATEGY"]["answer"]["choice"] == "per-batch"
