"""A person who breaks tasks.yaml while the session waits inside IMPLEMENT_LOOP is told so
by `status`, and by the run in one line naming the file and what is wrong (exit 4),
before a task's completion is lost or a Coder is called without its task; once the file
is fixed, the run goes on from there and marks the task completed."""

from __future__ import annotations

from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    dispatched,
    make_team_repo,
    status_json,
    team_script,
    verdict,
)


def _waiting_at_t1_security(root: Path) -> Path:
    """A session stopped at UD-T1-SECURITY (Security's NEEDS_DECISION on T1)."""
    script = team_script("per-batch")
    script["security"] = {
        "security:T1": [verdict("NEEDS_DECISION", "no lockout logging"), verdict("OK")],
        "*": [verdict("OK")],
    }
    repo = make_team_repo(root, script)
    created = cli(repo, "new", ITEM, "--workflow", "team", "--description", DESCRIPTION)
    assert created.returncode == 0, created.stderr
    waiting = cli(
        repo,
        "run",
        ITEM,
        "--answer",
        "UD-APPROVE-DESIGN=approved",
        "--answer",
        "UD-REVIEW-STRATEGY=per-batch",
    )
    assert waiting.returncode == 3, waiting.stderr
    return repo


def _break(tasks: Path) -> str:
    """Make tasks.yaml invalid YAML, as a slip of an edit does; its text before."""
    good = tasks.read_text()
    tasks.write_text(good.replace("- acceptance_checks:", "- acceptance_checks: [", 1))
    return good


def test_a_broken_tasks_yaml_stops_the_run_naming_it_and_the_fix_resumes(tmp_path: Path) -> None:
    repo = _waiting_at_t1_security(tmp_path / "repo")
    assert cli(repo, "answer", ITEM, "UD-T1-SECURITY", "accept").returncode == 0

    tasks = repo / SESSION / "tasks.yaml"
    good = _break(tasks)
    calls = len(dispatched(repo))

    stopped = cli(repo, "run", ITEM)
    assert stopped.returncode == 4, stopped.stderr
    last = stopped.stderr.strip().splitlines()[-1]
    assert ".agents-work/login/tasks.yaml" in last and "not valid YAML" in last, last
    assert f"phasegate run {ITEM}" in last, last
    assert len(dispatched(repo)) == calls  # T2's Coder was not called with a broken file

    tasks.write_text(good)
    finished = cli(repo, "run", ITEM)
    assert finished.returncode == 0, finished.stderr
    status = status_json(repo)
    assert status["current_state"] == "DONE"
    assert [t["status"] for t in status["tasks"]] == ["completed", "completed"]
    assert [e["path"] for e in dispatched(repo)].count("tasks[T1]/code") == 1


def test_a_broken_tasks_yaml_stops_a_repair_round_before_its_coder_is_called(
    tmp_path: Path,
) -> None:
    """``fix`` sends T1 back to its Coder: with tasks.yaml broken meanwhile, the Coder
    would get no task to fix (the session's description instead of T1)."""
    repo = _waiting_at_t1_security(tmp_path / "repo")
    assert cli(repo, "answer", ITEM, "UD-T1-SECURITY", "fix").returncode == 0
    tasks = repo / SESSION / "tasks.yaml"
    good = _break(tasks)
    calls = len(dispatched(repo))
    shown = cli(repo, "status", ITEM).stdout
    assert "Blocked: .agents-work/login/tasks.yaml cannot be used: it is not valid YAML" in shown

    stopped = cli(repo, "run", ITEM)
    assert stopped.returncode == 4, stopped.stderr
    last = stopped.stderr.strip().splitlines()[-1]
    assert ".agents-work/login/tasks.yaml cannot be used" in last, last
    assert len(dispatched(repo)) == calls

    tasks.write_text(good)
    finished = cli(repo, "run", ITEM)
    assert finished.returncode == 0, finished.stderr
    assert status_json(repo)["current_state"] == "DONE"
