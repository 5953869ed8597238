"""What a person reads about a task that waits for them: the progress line of a review
that is not approved counts the severities the reviewer gave, a task whose review is
unclear is shown so (not as escalated), a PLAN.md put back is logged with its every field,
and a merge conflict's `resolved` choice says what the docs say to do."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli, git, key
from test_implement_cli import scripted_repo

TWO_TASKS = """# Plan: Rates

## Phase 1: Core

- [ ] **Medium issue** [`agent: the-developer`]
- [ ] **Unclear one** [`agent: the-developer`]
"""
MEDIUM, UNCLEAR = key("Medium issue"), key("Unclear one")
MEDIUM_REVIEW = {
    "verdict": {
        "verdict": "NEEDS_REVISION",
        "summary": "meh",
        "issues": [{"severity": "medium", "description": "naming", "location": None}],
    }
}
SCRIPT = {
    "the-developer": {"implement": [{"write": {"src/{task}.py": "x = 1\n", PLAN: "rewritten\n"}}]},
    "*": {f"implement:{UNCLEAR}": [{"text": "Hmm."}], "*": [MEDIUM_REVIEW]},
}


def unclear_repo(tmp_path: Path) -> Path:
    return scripted_repo(tmp_path, SCRIPT, plan=TWO_TASKS, max_cycles=1)


def test_a_review_not_approved_counts_its_issues_by_severity(tmp_path: Path) -> None:
    """A NEEDS_REVISION naming one `medium` issue is not "0 blocker(s)"."""
    root = unclear_repo(tmp_path)
    result = cli(root, "implement", "006")
    assert result.returncode == 3, result.stderr
    shown = result.stdout + result.stderr
    assert "iteration 1: not approved (1 issue(s): 1 medium)" in shown, shown
    assert "0 blocker(s)" not in shown


def test_a_task_whose_review_is_unclear_is_not_shown_as_escalated(tmp_path: Path) -> None:
    root = unclear_repo(tmp_path)
    assert cli(root, "implement", "006", "-q").returncode == 3
    escalation = cli(root, "answer", "006", f"escalate-{MEDIUM}", "skip_with_warning")
    assert escalation.returncode == 0, escalation.stderr
    assert cli(root, "implement", "006", "-q").returncode == 3
    rows = {r["key"]: r for r in json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]}
    assert rows[UNCLEAR]["state"] == "unclear review"
    assert rows[UNCLEAR]["decision"] == f"unclear-{UNCLEAR}"
    shown = cli(root, "status", "006", env={"COLUMNS": "300"}).stdout
    assert f"unclear review (decision unclear-{UNCLEAR})" in shown, shown
    assert "escalated" not in shown, shown


def test_an_escalated_task_is_still_shown_as_escalated(tmp_path: Path) -> None:
    root = unclear_repo(tmp_path)
    assert cli(root, "implement", "006", "-q").returncode == 3
    rows = {r["key"]: r for r in json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]}
    assert rows[MEDIUM]["state"] == "escalated"
    assert rows[MEDIUM]["decision"] == f"escalate-{MEDIUM}"


def test_logs_name_every_field_of_a_plan_put_back(tmp_path: Path) -> None:
    """`implement.plan_restored` with `removed: false` reads `removed=false`, not `removed=`."""
    root = unclear_repo(tmp_path)
    assert cli(root, "implement", "006", "-q").returncode == 3
    lines = [x for x in cli(root, "logs", "006").stdout.splitlines() if "plan_restored" in x]
    assert lines, cli(root, "logs", "006").stdout
    assert "removed=false" in lines[0], lines[0]


CLASHING = """# Plan: Rates

## Phase 1: Core
**Execution: Parallel**

- [ ] **Task A edits common** [`agent: the-developer`]
- [ ] **Task B edits common** [`agent: the-data-engineer`]
"""
CLASH = {
    "the-developer": {"*": [{"write": {"common.txt": "line1\nA\nline3\n"}}]},
    "the-data-engineer": {"*": [{"write": {"common.txt": "line1\nB\nline3\n"}}]},
    "*": {"*": [{"text": "APPROVED\nok"}]},
}


def test_the_resolved_choice_of_a_conflict_says_to_stage_each_file(tmp_path: Path) -> None:
    """docs: resolve the files in the worktree, `git add` or `git rm` each, no commit."""
    root = scripted_repo(tmp_path, CLASH, plan=CLASHING)
    (root / "common.txt").write_text("line1\nline2\nline3\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "common")
    assert cli(root, "implement", "006", "-q").returncode == 3
    listed = cli(root, "decisions", "006", env={"COLUMNS": "300"}).stdout
    resolved = " ".join(line for line in listed.splitlines() if "resolved" in line)
    assert "git add" in resolved and "git rm" in resolved, listed
    assert "commit it" not in listed, listed
