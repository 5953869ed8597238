"""``meta`` names the final (cross-task) review in every dispatch, retry count and decision
id, so a Planner's task called ``meta`` would be reviewed as the final review and share its
retry counts: the PLAN gate sends such a plan back to the Planner."""

from __future__ import annotations

from pathlib import Path

from team_helpers import (
    DESCRIPTION,
    ITEM,
    cli,
    journal,
    make_team_repo,
    task_entries,
    tasks_yaml,
    team_script,
)


def test_a_task_called_meta_goes_back_to_the_planner(tmp_path: Path) -> None:
    clashing = task_entries()
    clashing[1]["id"] = "META"
    script = team_script()
    script["planner"]["plan"] = [
        {"write": {"{item_dir}/tasks.yaml": tasks_yaml(clashing)}},
        {"write": {"{item_dir}/tasks.yaml": tasks_yaml()}},
    ]
    repo = make_team_repo(tmp_path / "repo", script)
    created = cli(repo, "new", ITEM, "--workflow", "team", "--description", DESCRIPTION)
    assert created.returncode == 0, created.stderr
    result = cli(repo, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")
    assert result.returncode == 3 and "UD-REVIEW-STRATEGY" in result.stderr, result.stderr
    verdicts = [e for e in journal(repo) if e["event"] == "review.verdict" and e["node"] == "plan"]
    problems = " ".join(i["description"] for i in verdicts[0]["issues"])
    assert "task id META is the final review's (meta): name the task otherwise" in problems
