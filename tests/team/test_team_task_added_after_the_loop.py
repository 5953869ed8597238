"""A task added to tasks.yaml after IMPLEMENT_LOOP ended is implemented and reviewed
before DONE: seed 003 enters INTEGRATE only once every task is ``completed``, so the
Definition of Done requires every task of tasks.yaml ``completed``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from team_helpers import (
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    dispatched,
    item_file,
    make_team_repo,
    status_json,
    task_entries,
    tasks_yaml,
    team_script,
    verdict,
)

T3: dict[str, Any] = {
    "id": "T3",
    "title": "Log refusals",
    "goal": "Log each refused attempt",
    "dependencies": ["T1"],
    "acceptance_checks": ["cmd: test -s src/log.py"],
    "done_when": ["refusals are logged"],
    "risk_flags": ["none"],
    "files": ["src/log.py"],
    "status": "not-started",
}


def _script() -> dict[str, Any]:
    script = team_script()
    script["coder"]["code:T3"] = [
        {
            "write": {
                "src/log.py": "def log(attempt):\n    print(attempt)\n",
                item_file("tasks.yaml"): tasks_yaml(
                    [*task_entries(), T3], T1="completed", T2="completed", T3="implemented"
                ),
            },
            "text": "logging written",
        }
    ]
    return script


def _repo(tmp_path: Path, script: dict[str, Any]) -> Path:
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    assert cli(root, "new", ITEM, "--workflow", "team", "-d", DESCRIPTION).returncode == 0
    return root


def _add_t3(root: Path) -> None:
    tasks = root / SESSION / "tasks.yaml"
    tasks.write_text(tasks.read_text() + tasks_yaml([T3]).split("tasks:\n", 1)[1])


ANSWERS = ("--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch")


def test_a_task_added_after_the_loop_is_run_before_done(tmp_path: Path) -> None:
    script = _script()
    # The final review has notes: the session stops at UD-META-REVIEW-NOTES, after the loop.
    script["reviewer"] = {
        "final-review": [verdict("PASS WITH NOTES", "say the unit"), verdict("OK")],
        "*": [verdict("OK")],
    }
    root = _repo(tmp_path, script)
    first = cli(root, "run", ITEM, *ANSWERS)
    assert first.returncode == 3, first.stdout + first.stderr
    assert "UD-META-REVIEW-NOTES" in first.stderr

    _add_t3(root)
    again = cli(root, "run", ITEM, "--answer", "UD-META-REVIEW-NOTES=accept")
    # T3 is coded and reviewed, then the final review looks at every change once more.
    assert again.returncode == 3, again.stdout + again.stderr
    assert "UD-META-REVIEW-NOTES" in again.stderr
    calls = [str(e["key"]) for e in dispatched(root)]
    t3_review = next(i for i, k in enumerate(calls) if "tasks[T3]/review" in k)
    assert any("tasks[T3]/code" in k for k in calls[:t3_review])
    assert any(k.startswith("final-review") for k in calls[t3_review:])
    assert not any(k.startswith("integrate") for k in calls)

    again = cli(root, "run", ITEM, "--answer", "UD-META-REVIEW-NOTES=accept")
    assert again.returncode == 0, again.stdout + again.stderr
    statuses = {t["id"]: t["status"] for t in status_json(root)["tasks"]}
    assert statuses == {"T1": "completed", "T2": "completed", "T3": "completed"}
    assert status_json(root)["current_state"] == "DONE"
    assert (root / "src" / "log.py").exists()


def test_a_lean_task_added_at_the_build_decision_runs_before_the_checks(tmp_path: Path) -> None:
    """Lean mode: the build is red (AC-2's document is missing) and FIX_BUILD is
    exhausted; the person adds T2, which writes it, and accepts: T2 is coded and
    reviewed, then the checks run again and pass, and the session reaches DONE."""
    script = team_script()
    one = task_entries()[:1]
    script["spec-agent"]["intake-lean"] = [
        {
            "write": {
                **script["spec-agent"]["intake"][0]["write"],
                item_file("tasks.yaml"): tasks_yaml(one),
            }
        }
    ]
    script["coder"]["code:T1"][0]["write"][item_file("tasks.yaml")] = tasks_yaml(
        one, T1="implemented"
    )
    root = make_team_repo(tmp_path / "repo", script)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    created = cli(root, "new", ITEM, "--workflow", "team", "--mode", "lean", "-d", DESCRIPTION)
    assert created.returncode == 0, created.stderr
    first = cli(root, "run", ITEM)
    assert first.returncode == 3, first.stdout + first.stderr
    assert "UD-META-FIX-BUILD" in first.stderr

    tasks = root / SESSION / "tasks.yaml"
    tasks.write_text(tasks_yaml(task_entries(), T1="completed"))
    again = cli(root, "run", ITEM, "--answer", "UD-META-FIX-BUILD=accept")
    assert again.returncode == 0, again.stdout + again.stderr
    statuses = {t["id"]: t["status"] for t in status_json(root)["tasks"]}
    assert statuses == {"T1": "completed", "T2": "completed"}
    assert status_json(root)["current_state"] == "DONE"
    calls = [str(e["key"]) for e in dispatched(root)]
    assert any("tasks[T2]/code" in k for k in calls)
    assert any("tasks[T2]/review" in k for k in calls)
    assert (root / "docs" / "limit.md").exists()


def test_done_needs_every_task_completed(tmp_path: Path) -> None:
    """At UD-DOD the person fixes the build by hand but marks T2 blocked: checking again
    does not reach DONE, and the decision names the task; `review` runs it again."""
    from team_helpers import LIMIT_BROKEN, LIMIT_OK, in_process, run_through

    from phasegate.errors import WaitingForHuman

    script = team_script()
    script["coder"]["code:T1"][0]["write"]["src/limit.py"] = LIMIT_BROKEN
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    gates = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}
    with pytest.raises(WaitingForHuman, match="UD-META-FIX-BUILD"):
        run_through(repo, agents, **gates)
    repo.answer(ITEM, "UD-META-FIX-BUILD", "accept")
    with pytest.raises(WaitingForHuman, match="UD-DOD"):
        run_through(repo, agents)
    (root / "src" / "limit.py").write_text(LIMIT_OK)  # fixed by hand
    tasks = root / SESSION / "tasks.yaml"
    tasks.write_text(tasks_yaml(T1="completed", T2="blocked"))
    repo.answer(ITEM, "UD-DOD", "recheck")
    with pytest.raises(WaitingForHuman, match="task T2 is not completed \\(status blocked\\)"):
        run_through(repo, agents)

    repo.answer(ITEM, "UD-DOD", "review")
    assert run_through(repo, agents).status == "completed"
    statuses = {t["id"]: t["status"] for t in status_json(root)["tasks"]}
    assert statuses == {"T1": "completed", "T2": "completed"}
    assert sum("tasks[T2]/code" in str(e["key"]) for e in dispatched(root)) == 2


def test_a_session_at_done_with_a_task_added_runs_it(tmp_path: Path) -> None:
    """A session at DONE whose tasks.yaml gets a new task is reopened (as an implement
    item whose PLAN.md has open tasks again is): `run` codes and reviews the new task
    only, then the final pass, INTEGRATE, RELEASE and DONE run again."""
    root = _repo(tmp_path, _script())
    first = cli(root, "run", ITEM, *ANSWERS)
    assert first.returncode == 0, first.stdout + first.stderr
    assert status_json(root)["current_state"] == "DONE"

    _add_t3(root)
    shown = cli(root, "status", ITEM)
    assert "(team, mode full, active)" in shown.stdout, shown.stdout
    listed = cli(root, "status").stdout.splitlines()
    row = next(line.split() for line in listed if line.split()[:1] == [ITEM])
    assert row[2] == "active", listed
    again = cli(root, "run", ITEM)
    assert again.returncode == 0, again.stdout + again.stderr
    statuses = {t["id"]: t["status"] for t in status_json(root)["tasks"]}
    assert statuses == {"T1": "completed", "T2": "completed", "T3": "completed"}
    assert status_json(root)["current_state"] == "DONE"
    assert (root / "src" / "log.py").exists()
    calls = [str(e["key"]) for e in dispatched(root)]
    assert sum("tasks[T1]/code" in k for k in calls) == 1
    assert sum("tasks[T3]/review" in k for k in calls) == 1
    assert sum(k.startswith("final-review") for k in calls) == 2
