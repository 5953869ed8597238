"""A task a person adds to the tasks.yaml of a session at DONE is not silently ignored
when the file then has a problem (a dependency on a task that does not exist): `status`
shows the session active again and `run` stops with one line naming tasks.yaml and the
problem (exit 4), instead of saying the session is complete; once fixed, the task is done."""

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
    write_config,
)

T3 = """- id: T3
  title: Log lockouts
  goal: Log every refused attempt
  dependencies: [{dep}]
  acceptance_checks: ["cmd: true"]
  done_when: ["every refused attempt is logged"]
  risk_flags: [none]
  status: not-started
"""


def test_a_task_added_at_done_with_an_unknown_dependency_is_said_then_done(
    tmp_path: Path,
) -> None:
    script = team_script("per-batch")
    repo = make_team_repo(tmp_path / "repo", script)
    created = cli(repo, "new", ITEM, "--workflow", "team", "--description", DESCRIPTION)
    assert created.returncode == 0, created.stderr
    done = cli(
        repo,
        "run",
        ITEM,
        "--answer",
        "UD-APPROVE-DESIGN=approved",
        "--answer",
        "UD-REVIEW-STRATEGY=per-batch",
    )
    assert done.returncode == 0, done.stderr
    assert status_json(repo)["current_state"] == "DONE"

    tasks = repo / SESSION / "tasks.yaml"
    good = tasks.read_text()
    tasks.write_text(good + T3.format(dep="T9"))

    shown = cli(repo, "status", ITEM)
    assert "(team, mode full, active)" in shown.stdout, shown.stdout
    stopped = cli(repo, "run", ITEM)
    assert stopped.returncode == 4, stopped.stderr
    last = stopped.stderr.strip().splitlines()[-1]
    assert "tasks.yaml" in last and "task T3 depends on T9, which is not a task" in last, last
    assert "complete" not in stopped.stdout

    tasks.write_text(good + T3.format(dep="T1"))
    implemented = good + T3.format(dep="T1").replace("not-started", "implemented")
    script["coder"]["code:T3"] = [{"write": {"{item_dir}/tasks.yaml": implemented}}]
    write_config(repo, script)
    finished = cli(repo, "run", ITEM)
    assert finished.returncode == 0, finished.stderr
    assert status_json(repo)["current_state"] == "DONE"
    assert [t["status"] for t in status_json(repo)["tasks"]] == ["completed"] * 3
    assert [e["path"] for e in dispatched(repo)].count("tasks[T3]/code") == 1
