"""Leaving lean mode: seed 003 INTAKE_LEAN, "If Coder discovers complexity, exit lean mode
and restart from full INTAKE"."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from team_helpers import (
    DESCRIPTION,
    ITEM,
    calls_at,
    cli,
    in_process,
    journal,
    make_team_repo,
    run_through,
    status_json,
    task_entries,
    tasks_yaml,
    team_script,
)

from phasegate.agents.scripted import ScriptedBackend, ScriptedReply

WHY = "The limiter needs a shared store and a migration: more than one task.\n"


def _lean_script() -> dict[str, Any]:
    """Lean INTAKE writes one task; the full run after it is the usual scripted team."""
    script = team_script()
    script["spec-agent"]["intake-lean"] = [
        {
            "write": {
                **script["spec-agent"]["intake"][0]["write"],
                "{item_dir}/tasks.yaml": tasks_yaml(task_entries()[:1]),
            }
        }
    ]
    return script


def _coder_finds_it_too_complex(script: dict[str, Any]) -> ScriptedBackend:
    """The script's agents, except that the first Coder call writes lean-exit.md."""
    inner = ScriptedBackend(script=script)
    calls: list[str] = []

    def handler(request: Any) -> ScriptedReply | None:
        if request.role == "coder" and not calls:
            calls.append(request.labels["path"])
            return ScriptedReply.from_mapping({"write": {"{item_dir}/lean-exit.md": WHY}}, "exit")
        return inner.reply_for(request)

    return ScriptedBackend(handler=handler)


def test_lean_coder_that_finds_the_change_too_complex_restarts_the_session_in_full_mode(
    tmp_path: Path,
) -> None:
    """Seed 003 INTAKE_LEAN: the Coder writes lean-exit.md instead of implementing; the task
    is not reviewed, the session switches to full mode and runs every full state from
    INTAKE (both gates, every core agent) to DONE."""
    script = _lean_script()
    repo, _ = in_process(tmp_path / "repo", script, mode="lean")
    agents = _coder_finds_it_too_complex(script)
    answers = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}
    assert run_through(repo, agents, **answers).status == "completed"

    state = repo.state(ITEM)
    assert state.mode == "full"
    states = [change["to"] for change in state.get("history")]
    assert states[:3] == ["IMPLEMENT_LOOP", "INTAKE", "DESIGN"]
    assert states[-1] == "DONE" and "APPROVE_DESIGN" in states and "REVIEW_STRATEGY" in states
    status = status_json(tmp_path / "repo")
    assert status["mode"] == "full" and status["current_state"] == "DONE"
    assert [d["decision_id"] for d in status["user_decisions"]] == [
        "UD-APPROVE-DESIGN",
        "UD-REVIEW-STRATEGY",
    ]
    coder = calls_at(agents, "tasks[T1]/code", "coder")
    assert len(coder) == 2  # the lean attempt, then T1 of the full plan
    first_review = next(
        i for i, r in enumerate(agents.requests) if r.labels["path"] == "tasks[T1]/review"
    )
    assert agents.requests.index(coder[1]) < first_review  # the lean attempt was not reviewed
    intake = calls_at(agents, "intake", "spec-agent")
    assert len(intake) == 1 and "lean-exit.md" in "".join(p.body for p in intake[0].prompt)
    roles = {r.role for r in agents.requests}
    assert {"architect", "planner", "integrator", "docs"} <= roles


def test_lean_exit_means_nothing_in_full_mode(tmp_path: Path) -> None:
    """Seed 003: only lean mode can be left; a full-mode Coder that writes lean-exit.md and
    does not mark its task implemented is sent back to do it."""
    script = team_script()
    repo, _ = in_process(tmp_path / "repo", script)
    agents = _coder_finds_it_too_complex(script)
    answers = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}
    assert run_through(repo, agents, **answers).status == "completed"
    coder = calls_at(agents, "tasks[T1]/code", "coder")
    assert len(coder) == 2  # sent back once: the first call marked nothing
    assert "mark it 'status: implemented'" in "".join(p.body for p in coder[1].prompt)
    assert repo.state(ITEM).mode == "full"
    assert [c["to"] for c in repo.state(ITEM).get("history")].count("INTAKE") == 0


def _lean_exit_repo(root: Path) -> Path:
    """A lean session whose Coder writes lean-exit.md the first time it works on T1."""
    script = _lean_script()
    normal = script["coder"]["code:T1"][0]
    script["coder"]["code:T1"] = [{"write": {"{item_dir}/lean-exit.md": WHY}}, normal]
    repo = make_team_repo(root, script)
    created = cli(repo, "new", ITEM, "-w", "team", "-m", "lean", "-d", DESCRIPTION)
    assert created.returncode == 0, created.stderr
    return repo


ANSWERS = ("--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch")


def test_a_crash_once_the_lean_exit_is_journaled_still_restarts_in_full_mode(
    tmp_path: Path,
) -> None:
    """Seed 003 INTAKE_LEAN exit and the resume protocol: killed (SIGKILL) right after the
    restart's outcome reached the journal, before the state with the full mode was
    committed, the next run still continues in full mode from INTAKE and ends DONE."""
    reference = _lean_exit_repo(tmp_path / "reference")
    before = len(journal(reference))
    assert cli(reference, "run", ITEM, *ANSWERS).returncode == 0
    events = journal(reference)
    restart = next(
        i
        for i, e in enumerate(events)
        if e["event"] == "action.done" and e.get("node") == "restart-full"
    )
    appends = restart - before + 1  # journal appends of the run process, that one included

    repo = _lean_exit_repo(tmp_path / "repo")
    crash = {"PHASEGATE_CRASH_AT": f"journal.after_append@{appends}"}
    killed = cli(repo, "run", ITEM, *ANSWERS, env=crash)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    last = journal(repo)[-1]
    assert (last["event"], last.get("node")) == ("action.done", "restart-full")

    resumed = cli(repo, "run", ITEM, *ANSWERS)
    assert resumed.returncode == 0, resumed.stderr
    status = status_json(repo)
    assert (status["mode"], status["current_state"]) == ("full", "DONE")
    roles = {e["role"] for e in journal(repo) if e["event"] == "agent.dispatched"}
    assert {"architect", "planner", "integrator", "docs"} <= roles
