"""Crash safety inside a foreach and around a gate: the example workflow killed with SIGKILL.

The run under test (the shipped ``review-loop`` example): the critic rejects
plan v1, the gate ``plan-rejected`` is answered ``revise`` (one more round),
plan v2 is approved; then task T1 is sent back once and approved, and T2 is
approved: ten agent calls, a decision, and two foreach items.

Invariants pinned (architecture principle 3, on nested cursors):
- a kill inside an item of a foreach resumes inside that item: the finished
  items are not run again, and a call whose result was journaled is reused;
- a gate's answer, once persisted, is used once after a kill and never asked
  again; a decision found pending after a kill is asked once;
- whatever the kill, the final state equals an uninterrupted run's, and no
  recorded call is dispatched again.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from crash_helpers import (
    KILLED,
    assert_no_recorded_call_dispatched_again,
    backend_calls,
    crash_until_done,
    differences,
    journal,
    phasegate,
    snapshot,
)
from review_loop_helpers import DECISION, FOLDER, ITEM, approval, make_repo, script, words

from phasegate.engine.state import read_state_file

pytestmark = pytest.mark.slow

ANSWER = ("--answer", f"{DECISION}=revise")
WAITING = 3
#: The developer's call for T2, the 9th call of the run.
T2_EXECUTE = "tasks[T2]/implement#1/1/execute/0"


def agents() -> dict[str, Any]:
    return script(
        [words("REJECTED", "Wrong approach"), words("APPROVED")],
        {"T1": [approval(False, "No test for the limit"), approval(True)]},
        sleep=0.02,
    )


def new_repo(root: Path) -> Path:
    return make_repo(root, agents())


def same_as(repo: Path, reference: tuple[Any, dict[str, bytes]]) -> None:
    ref_state, ref_files = reference
    state, files = snapshot(repo, FOLDER)
    assert state == ref_state, differences(state, ref_state)
    assert files == ref_files, sorted(set(files.items()) ^ set(ref_files.items()))


def counts(repo: Path) -> Counter[str]:
    return Counter(e["event"] for e in journal(repo, FOLDER))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, bytes]]:
    """One uninterrupted run, the gate answered on the command line."""
    repo = new_repo(tmp_path_factory.mktemp("reference") / "repo")
    assert phasegate(repo, "run", ITEM, *ANSWER) == 0
    assert len(backend_calls(repo)) == 10
    state, files = snapshot(repo, FOLDER)
    assert state["engine"]["status"] == "completed"
    return state, files


def test_random_kill_9_moments_resume_to_the_same_final_state(
    reference: tuple[Any, dict[str, bytes]], tmp_path: Path
) -> None:
    """>= 12 SIGKILLs at random moments across the gate and the items; each chain of
    restarts ends equal to a clean run, with no recorded call dispatched again."""
    rng = random.Random(20261123)
    kills = chain = 0
    while kills < 12:
        chain += 1
        repo = new_repo(tmp_path / f"chain{chain}")
        for _ in range(200):
            proc = subprocess.Popen(
                [sys.executable, "-m", "phasegate", "run", ITEM, *ANSWER],
                cwd=repo,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            try:
                code = proc.wait(timeout=rng.uniform(0.3, 1.5))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                kills += 1
                continue
            assert code == 0, proc.stderr.read().decode() if proc.stderr else code
            break
        else:  # pragma: no cover - the run never finished
            pytest.fail("the run made no progress across restarts")
        same_as(repo, reference)
        assert_no_recorded_call_dispatched_again(repo, FOLDER)
        assert counts(repo)["decision.answered"] == 1  # the answer was taken once


@pytest.mark.parametrize(
    ("point", "coalesce"),
    [
        ("journal.after_append", "0"),
        ("state.after_commit", "0"),
        ("dispatch.after_call", "0"),
        ("agent.returned", "0"),
        ("agent.returned", "0.25"),
        ("state.before_commit", "0.25"),
    ],
)
def test_crash_at_each_named_point_in_items_and_gates_resumes_to_the_same_state(
    reference: tuple[Any, dict[str, bytes]], tmp_path: Path, point: str, coalesce: str
) -> None:
    """Kills at a write boundary, again and again, across the gate and both items."""
    repo = new_repo(tmp_path / "repo")
    crashes = crash_until_done(repo, ("run", ITEM, *ANSWER), point, coalesce)
    assert crashes >= 2
    same_as(repo, reference)
    recovered = assert_no_recorded_call_dispatched_again(repo, FOLDER)
    if point in ("journal.after_append", "agent.returned"):
        assert recovered > 0  # results journaled before a kill were reused, not re-run
    # The answer is taken once. (A kill before the pending decision's commit may see it
    # journaled as needed again: it had not been asked yet.)
    assert counts(repo)["decision.answered"] == 1


@pytest.mark.parametrize("coalesce", ["0", "0.25"])
def test_a_kill_inside_a_foreach_item_resumes_in_that_item(
    reference: tuple[Any, dict[str, bytes]], tmp_path: Path, coalesce: str
) -> None:
    """Killed after T2's developer returned (its result journaled, not yet applied): the
    resumed run dispatches nothing but T2's review. T1 is not run again and T2's executor
    result is reused. With every step committed the state on disk already stands inside
    T2; with commits coalesced it lags, and the journal's results carry the run there."""
    repo = new_repo(tmp_path / "repo")
    env = {"PHASEGATE_CRASH_AT": "agent.returned@9", "PHASEGATE_COALESCE_SECONDS": coalesce}
    assert phasegate(repo, "run", ITEM, *ANSWER, env=env) == KILLED
    before = journal(repo, FOLDER)
    finished = [e["key"] for e in before if e["event"] == "agent.finished"]
    assert finished[-1] == T2_EXECUTE
    if coalesce == "0":
        state = read_state_file(repo / FOLDER / ".engine.json").to_dict()
        items = state["nodes"]["tasks"]["items"]
        assert (state["at"], items["T1"]["status"], items["T2"]["status"]) == (
            "tasks",
            "done",
            "running",
        )
        assert items["T2"]["at"] == "implement"
    assert phasegate(repo, "run", ITEM, env={"PHASEGATE_COALESCE_SECONDS": coalesce}) == 0
    resumed = journal(repo, FOLDER)[len(before) :]
    dispatched = [e["key"] for e in resumed if e["event"] == "agent.dispatched"]
    assert dispatched == ["tasks[T2]/implement#1/1/review:reviewer/0"]
    recovered = [e["key"] for e in resumed if e["event"] == "agent.recovered"]
    assert T2_EXECUTE in recovered
    if coalesce == "0":
        assert recovered == [T2_EXECUTE]
    calls = backend_calls(repo)
    assert len(calls) == 10  # not one call more than the uninterrupted run
    assert [c["task"] for c in calls if c["role"] == "developer"] == ["T1", "T1", "T2"]
    same_as(repo, reference)
    assert_no_recorded_call_dispatched_again(repo, FOLDER)


@pytest.mark.parametrize("answered_by", ["flag", "command"])
def test_a_kill_after_the_answer_is_persisted_uses_it_once_and_never_asks_again(
    reference: tuple[Any, dict[str, bytes]], tmp_path: Path, answered_by: str
) -> None:
    """Killed between the answer reaching the disk and the next node starting: the
    answer is on disk, the resumed run (no terminal, no answer given) acts on it once
    (one more planning round, not two) and never asks the decision again."""
    repo = new_repo(tmp_path / "repo")
    crash = {"PHASEGATE_CRASH_AT": "gate.answered"}
    if answered_by == "flag":
        assert phasegate(repo, "run", ITEM, *ANSWER, env=crash) == KILLED
    else:
        assert phasegate(repo, "run", ITEM, ok=(WAITING,)) == WAITING
        assert phasegate(repo, "answer", ITEM, DECISION, "revise") == 0
        assert phasegate(repo, "run", ITEM, env=crash) == KILLED
    on_disk = read_state_file(repo / FOLDER / ".engine.json").to_dict()["decisions"][DECISION]
    assert on_disk["status"] == "answered"
    assert (on_disk["answer"]["choice"], on_disk["answer"]["by"]) == ("revise", answered_by)
    assert phasegate(repo, "run", ITEM) == 0  # would exit 3 if it asked again
    events = counts(repo)
    assert (events["decision.needed"], events["decision.answered"]) == (1, 1)
    assert events["node.extended"] == 1
    assert [c["role"] for c in backend_calls(repo)].count("planner") == 2
    ref_state, ref_files = reference
    if answered_by == "command":
        ref_state = json.loads(json.dumps(ref_state))
        ref_state["engine"]["decisions"][DECISION]["answer"]["by"] = "command"
    same_as(repo, (ref_state, ref_files))
    assert_no_recorded_call_dispatched_again(repo, FOLDER)


def test_a_kill_right_after_a_decision_is_pending_asks_it_once(
    reference: tuple[Any, dict[str, bytes]], tmp_path: Path
) -> None:
    """Killed just after the pending decision reached the disk, before it was asked: it
    is listed as pending, the next run asks that same decision (exit 3), and once answered
    the run ends as an uninterrupted one does."""
    repo = new_repo(tmp_path / "repo")
    assert phasegate(repo, "run", ITEM, env={"PHASEGATE_CRASH_AT": "gate.pending"}) == KILLED
    listed = subprocess.run(
        [sys.executable, "-m", "phasegate", "decisions", ITEM, "--json"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    (pending,) = json.loads(listed.stdout)
    assert (pending["id"], pending["status"]) == (DECISION, "pending")
    assert phasegate(repo, "run", ITEM, ok=(WAITING,)) == WAITING
    assert phasegate(repo, "run", ITEM, *ANSWER) == 0
    assert counts(repo)["decision.needed"] == 1
    same_as(repo, reference)
    assert_no_recorded_call_dispatched_again(repo, FOLDER)


def test_a_kill_between_journaling_a_decision_and_committing_it_journals_it_once(
    reference: tuple[Any, dict[str, bytes]], tmp_path: Path
) -> None:
    """Killed after ``decision.needed`` reached the journal but before the pending decision
    was committed: the next run commits that same decision without journaling it again,
    asks it (exit 3), and once answered ends as an uninterrupted run does."""
    repo = new_repo(tmp_path / "repo")
    assert phasegate(repo, "run", ITEM, env={"PHASEGATE_CRASH_AT": "gate.needed"}) == KILLED
    (needed,) = [e for e in journal(repo, FOLDER) if e["event"] == "decision.needed"]
    assert phasegate(repo, "run", ITEM, ok=(WAITING,)) == WAITING
    on_disk = read_state_file(repo / FOLDER / ".engine.json").to_dict()["decisions"][DECISION]
    assert (on_disk["status"], on_disk["asked_at"]) == ("pending", needed["ts"])
    assert phasegate(repo, "run", ITEM, *ANSWER) == 0
    assert counts(repo)["decision.needed"] == 1
    same_as(repo, reference)
    assert_no_recorded_call_dispatched_again(repo, FOLDER)
