"""IMPLEMENT_LOOP (seed 003): task order, task statuses, the two review paths, what reviews get."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from team_helpers import (
    SESSION,
    in_process,
    part,
    run_through,
    status_json,
    task_entries,
    task_json,
    tasks_yaml,
    team_script,
    verdict,
    verdicts_of,
)

from phasegate.agents.scripted import ScriptedBackend
from phasegate.errors import WaitingForHuman
from phasegate.team.rules import behaviour_task, risky_task
from phasegate.team.tasks import TeamTask, read_tasks

GATES = {"UD_APPROVE_DESIGN": "approved"}


def _calls(agents: Any, role: str | None = None) -> list[Any]:
    return [r for r in agents.requests if role is None or r.role == role]


def test_tasks_run_in_dependency_order(tmp_path: Path) -> None:
    """IMPLEMENT_LOOP: "for each task ready (deps done)": T2 is listed first but depends on
    T1, so T1 is coded (and passes its gates) first."""
    script = team_script()
    reversed_plan = list(reversed(task_entries()))
    script["planner"]["plan"] = [{"write": {"{item_dir}/tasks.yaml": tasks_yaml(reversed_plan)}}]
    repo, agents = in_process(tmp_path / "repo", script)
    run_through(repo, agents, **GATES, UD_REVIEW_STRATEGY="per-batch")
    paths = [r.labels["path"] for r in agents.requests if r.role in ("coder", "reviewer")]
    assert paths.index("tasks[T1]/review") < paths.index("tasks[T2]/code")


def test_coder_marks_implemented_and_only_phasegate_marks_completed(tmp_path: Path) -> None:
    """IMPLEMENT_LOOP gate per task: the Coder marks the task ``implemented``; phasegate
    promotes it to ``completed`` only after Reviewer, QA and Security passed."""
    seen: list[tuple[str, str]] = []
    script = team_script()
    repo, recorded = in_process(tmp_path / "repo", script)
    tasks_file = tmp_path / "repo" / SESSION / "tasks.yaml"

    def watching(request: Any) -> Any:
        if request.role in ("reviewer", "qa", "security"):
            t1 = next(t for t in read_tasks(tasks_file)[0] if t.id == "T1")
            seen.append((request.labels["path"], t1.status))
        return recorded.reply_for(request)

    run_through(repo, ScriptedBackend(handler=watching), **GATES, UD_REVIEW_STRATEGY="per-batch")
    during = [status for path, status in seen if path.startswith("tasks[T1]/")]
    assert during == ["implemented", "implemented", "implemented"]  # review, qa, security
    assert [t["status"] for t in status_json(tmp_path / "repo")["tasks"]] == ["completed"] * 2


def test_coder_that_does_not_mark_the_task_implemented_is_sent_back(tmp_path: Path) -> None:
    """IMPLEMENT_LOOP: a Coder that leaves the task unmarked has not finished it (checked in
    code): it is told so, and no review runs until it is marked."""
    script = team_script()
    marked = script["coder"]["code:T1"][0]
    script["coder"]["code:T1"] = [
        {"write": {"src/limit.py": "def ok():\n    return True\n"}},
        marked,
    ]
    repo, agents = in_process(tmp_path / "repo", script)
    run_through(repo, agents, **GATES, UD_REVIEW_STRATEGY="per-batch")
    (first, *_) = verdicts_of(tmp_path / "repo", "tasks[T1]/code")
    assert (
        "task T1 is not-started: mark it 'status: implemented'" in first["issues"][0]["description"]
    )
    t1 = [r.labels["path"] for r in agents.requests if r.labels["path"].startswith("tasks[T1]")]
    assert t1[:2] == ["tasks[T1]/code", "tasks[T1]/code"]


def test_single_final_codes_every_task_then_one_combined_meta_pass(tmp_path: Path) -> None:
    """Single-final review path: Coder on every task, no review meanwhile; then ONE combined
    Reviewer + QA + Security pass with task id ``meta``; then every task is completed."""
    repo, agents = in_process(tmp_path / "repo", team_script("single-final"))
    run_through(repo, agents, **GATES, UD_REVIEW_STRATEGY="single-final")
    order = [(r.role, r.labels["path"]) for r in agents.requests]
    reviews = [o for o in order if o[0] in ("reviewer", "qa", "security")]
    assert reviews == [
        ("reviewer", "final-review"),
        ("qa", "final-qa"),
        ("security", "final-security"),
    ]
    assert order.index(("coder", "tasks-single[T2]/code")) < order.index(reviews[0])
    review = next(r for r in agents.requests if r.labels["path"] == "final-review")
    task = task_json(review)
    assert (task["id"], task["goal"]) == ("meta", "Single-final review of all session changes")
    assert [t["status"] for t in status_json(tmp_path / "repo")["tasks"]] == ["completed"] * 2


def test_per_batch_ends_with_a_cross_task_meta_review_and_lean_mode_has_none(
    tmp_path: Path,
) -> None:
    """Cross-task final review: mandatory in full per-batch mode (task meta, after every
    task is completed, before INTEGRATE); skipped in lean mode."""
    repo, agents = in_process(tmp_path / "full", team_script())
    run_through(repo, agents, **GATES, UD_REVIEW_STRATEGY="per-batch")
    final = next(r for r in agents.requests if r.labels["path"] == "final-review")
    assert task_json(final)["goal"] == "Cross-task final review of all session changes"
    paths = [r.labels["path"] for r in agents.requests]
    assert paths.index("final-review") < paths.index("integrate")

    lean_script = team_script()
    lean_script["spec-agent"]["intake-lean"] = [
        {
            "write": {
                **lean_script["spec-agent"]["intake"][0]["write"],
                "{item_dir}/tasks.yaml": tasks_yaml(task_entries()[:1]),
            }
        }
    ]
    lean_script["coder"]["code:T1"][0]["write"]["docs/limit.md"] = "# Limit\n"
    lean_script["coder"]["code:T1"][0]["write"]["{item_dir}/tasks.yaml"] = tasks_yaml(
        task_entries()[:1], T1="implemented"
    )
    lean, lean_agents = in_process(tmp_path / "lean", lean_script, mode="lean")
    assert run_through(lean, lean_agents).status == "completed"
    lean_paths = [r.labels["path"] for r in lean_agents.requests]
    assert not [p for p in lean_paths if p.startswith("final-")]


def test_reviewer_gets_every_session_changed_file_from_git(tmp_path: Path) -> None:
    """Full-scope context rule: the Reviewer's task carries ``session_changed_files``, every
    file changed in the session by any agent with its change_type (computed from git);
    other agents get an empty list."""
    root = tmp_path / "repo"
    script = team_script()
    repo, agents = in_process(root, script)
    (root / "old.txt").write_text("old\n")
    (root / "gone.txt").write_text("bye\n")
    from engine_helpers import git

    git(root, "add", "-A")
    git(root, "commit", "-qm", "more")
    state = repo.state("login")
    item = repo.item("login")
    state["base_commit"] = git(root, "rev-parse", "HEAD").strip()
    item.save(state, durable=True)
    (root / "gone.txt").unlink()
    git(root, "mv", "old.txt", "renamed.txt")
    (root / "README.md").write_text("# changed\n")
    run_through(repo, agents, **GATES, UD_REVIEW_STRATEGY="per-batch")
    review = next(r for r in agents.requests if r.labels["path"] == "tasks[T1]/review")
    changed = {f["path"]: f for f in task_json(review)["session_changed_files"]}
    assert changed["gone.txt"]["change_type"] == "deleted"
    assert changed["renamed.txt"] == {
        "path": "renamed.txt",
        "change_type": "renamed",
        "old_path": "old.txt",
    }
    assert changed["README.md"]["change_type"] == "modified"
    assert changed["src/limit.py"]["change_type"] == "added"
    assert not [p for p in changed if p.startswith((".agents-work", ".phasegate"))]
    coder = next(r for r in agents.requests if r.role == "coder")
    assert task_json(coder)["session_changed_files"] == []


def test_per_task_review_focuses_on_its_files_and_the_final_review_reads_all(
    tmp_path: Path,
) -> None:
    """Per-task review (incremental) vs final review (comprehensive): a task's review gets
    the diff of its own files and is told to follow others only as needed; the final
    review is told to read every changed file and gets the whole diff."""
    repo, agents = in_process(tmp_path / "repo", team_script())
    run_through(repo, agents, **GATES, UD_REVIEW_STRATEGY="per-batch")
    t2 = next(r for r in agents.requests if r.labels["path"] == "tasks[T2]/review")
    assert "docs/limit.md" in part(t2, "Session changes")
    assert "src/limit.py" not in part(t2, "Session changes")
    assert "review of task T2: read its files in depth (docs/limit.md)" in part(t2, "Review scope")
    final = next(r for r in agents.requests if r.labels["path"] == "final-review")
    assert "src/limit.py" in part(final, "Session changes")
    assert "docs/limit.md" in part(final, "Session changes")
    assert "read every non-deleted file" in part(final, "Review scope")


def test_reviewer_pass_with_notes_asks_the_user(tmp_path: Path) -> None:
    """ASK_USER trigger: Reviewer PASS WITH NOTES -> the person decides which notes to fix;
    ``fix`` sends them to the Coder and the Reviewer looks again."""
    script = team_script()
    script["reviewer"] = {
        "review:T2": [verdict("PASS WITH NOTES", "name the unit"), verdict("OK"), verdict("OK")],
        "*": [verdict("OK")],
    }
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    with pytest.raises(WaitingForHuman, match="UD-T2-REVIEW-NOTES"):
        run_through(repo, agents, **GATES, UD_REVIEW_STRATEGY="per-batch")
    assert status_json(root)["current_state"] == "ASK_USER"
    (asked,) = repo.decisions("login")
    assert "name the unit" in asked["question"]
    repo.answer("login", "UD-T2-REVIEW-NOTES", "fix: say attempts per minute")
    run_through(repo, agents)
    fix = [
        r for r in agents.requests if r.role == "coder" and r.labels["path"] == "tasks[T2]/review"
    ]
    assert len(fix) == 1
    assert "say attempts per minute" in part(fix[0], "Feedback to address")
    assert "UD-T2-REVIEW-NOTES: fix" in part(fix[0], "A person decided")
    assert status_json(root)["current_state"] == "DONE"


def test_qa_and_security_apply_by_the_documented_rules() -> None:
    """Per-batch path steps 3 and 4: QA when the task concerns behaviour; Security when
    risk_flags hold security, or the task affects auth, input or the network."""
    docs = TeamTask(id="T", title="Document it", files=("docs/a.md", "README.md"))
    code = TeamTask(id="T", title="Limit", files=("src/limit.py",))
    assert (behaviour_task(docs), behaviour_task(code)) == (False, True)
    assert behaviour_task(TeamTask(id="T", title="Docs", files=("docs/a.md",), qa=True))
    assert risky_task(TeamTask(id="T", title="x", risk_flags=("input",)))
    assert risky_task(TeamTask(id="T", title="Hash passwords"))
    assert not risky_task(TeamTask(id="T", title="Rename a variable", risk_flags=("perf",)))
    assert not risky_task(TeamTask(id="T", title="Login page", security=False))


def test_tasks_yaml_that_is_not_yaml_is_described_by_its_line(tmp_path: Path) -> None:
    """The PLAN gate's reason names the line of tasks.yaml and the problem, without the
    parser's own framing, so it reads as one line in the gate's feedback."""
    path = tmp_path / "tasks.yaml"
    path.write_text("tasks:\n  - id: T1\n    title: [unclosed\n", encoding="utf-8")
    tasks, problems = read_tasks(path)
    assert tasks == []
    (problem,) = problems
    assert problem.startswith("it is not valid YAML (line 4, column 1): ")
    assert "<unicode string>" not in problem and "\n" not in problem
