"""The shipped ``review-loop`` example, run end to end: every outcome path of its graph.

docs/workflows.md walks through this workflow; these tests pin what it says:
the critic's three words (APPROVED passes, NEEDS_REVISION goes back to the
planner, REJECTED stops at a gate), the gate's three choices answered without
a terminal (``phasegate answer``, ``run --answer``), and the foreach giving
each task of plan.md its own review loop and budget.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from review_loop_helpers import (
    DECISION,
    FOLDER,
    ITEM,
    PLAN_V1,
    WORKFLOW,
    approval,
    make_repo,
    script,
    words,
)

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import open_repo
from phasegate.engine.state import read_state_file


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI like a script would: no terminal, stdin closed."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env=dict(os.environ),
    )


def engine(repo: Path) -> dict[str, Any]:
    return read_state_file(repo / FOLDER / ".engine.json").to_dict()


def roles_called(repo: Path) -> list[str]:
    lines = (repo / ".phasegate" / "calls.jsonl").read_text().splitlines()
    return [json.loads(line)["role"] for line in lines]


def run_in_process(repo: Path, agents: dict[str, Any]) -> ScriptedBackend:
    """Run the item in this process (no terminal) and return the agents, to read prompts."""
    backend = ScriptedBackend(script=agents)
    open_repo(repo).run(ITEM, backends={"default": backend})
    return backend


def test_init_copies_the_example_and_validate_passes(tmp_path: Path) -> None:
    """`phasegate init --example review-loop` copies it and its prompts; it validates."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    done = cli(repo, "init", "--example", WORKFLOW)
    assert done.returncode == 0, done.stderr
    copied = repo / ".phasegate" / "workflows" / f"{WORKFLOW}.yaml"
    prompts = sorted(p.name for p in (copied.parent / "prompts" / WORKFLOW).iterdir())
    assert prompts == ["critic.md", "implement.md", "plan.md", "review.md"]
    checked = cli(repo, "validate", str(copied))
    assert checked.returncode == 0, checked.stderr
    assert f"ok: workflow '{WORKFLOW}'" in checked.stdout
    copied.write_text("# edited\n" + copied.read_text())
    again = cli(repo, "init", "--example", WORKFLOW)
    assert again.returncode == 0 and "left unchanged" in again.stdout
    assert copied.read_text().startswith("# edited\n")  # a copy the repository owns is kept
    unknown = cli(repo, "init", "--example", "nope")
    assert unknown.returncode == 2 and "unknown example workflow 'nope'" in unknown.stderr


BROKEN = [
    pytest.param(
        "    on: {pass: tasks, rejected: decide}\n",
        "    on: {pass: tasks}\n",
        "    on: {pass: tasks}",
        "nodes[0].on: outcome 'rejected' of node 'plan' is not mapped",
        id="unmapped-outcome",
    ),
    pytest.param(
        "    items: {parser: markdown-tasks, file: plan.md}\n",
        "    items: {parser: markdown-todo, file: plan.md}\n",
        "    items: {parser: markdown-todo",
        "nodes[2].items.parser: unknown parser plug-in 'markdown-todo' (installed: ",
        id="unknown-plugin",
    ),
    pytest.param(
        "      drop:\n        to: dropped\n        description: stop here; the item ends dropped\n",
        "",
        "  - id: dropped",
        "nodes[4].id: node 'dropped' is unreachable from the start node 'plan'",
        id="unreachable-node",
    ),
]


@pytest.mark.parametrize(("original", "broken", "at", "message"), BROKEN)
def test_a_broken_copy_fails_validate_with_file_line_and_field(
    tmp_path: Path, original: str, broken: str, at: str, message: str
) -> None:
    """Graph validation (every outcome mapped, plug-ins installed, nodes reachable) names
    the file, the line and the field of each problem, and exits 2."""
    repo = make_repo(tmp_path / "repo", None, backend="auto")
    path = repo / ".phasegate" / "workflows" / f"{WORKFLOW}.yaml"
    text = path.read_text()
    assert original in text
    path.write_text(text.replace(original, broken))
    line = next(n for n, row in enumerate(path.read_text().splitlines(), 1) if row.startswith(at))
    checked = cli(repo, "validate", str(path))
    assert checked.returncode == 2
    assert f"{path}:{line}: {message}" in checked.stderr


def test_auto_backend_runs_the_example_to_its_end(tmp_path: Path) -> None:
    """With `roles: {default: {backend: auto}}` and no script the example runs to `done`:
    declared outputs written with placeholders, every review approving."""
    repo = make_repo(tmp_path / "repo", None, backend="auto")
    done = cli(repo, "run", ITEM)
    assert done.returncode == 0, done.stderr
    status = json.loads(cli(repo, "status", ITEM, "--json").stdout)
    assert (status["status"], status["label"]) == ("completed", "done")
    tasks = next(p for p in status["phases"] if p["node"] == "tasks")
    assert [(i["key"], i["status"]) for i in tasks["items"]] == [("1", "done")]
    assert (repo / FOLDER / "plan.md").read_text().startswith("# plan.md")
    assert (repo / FOLDER / "reports" / "1.md").is_file()


def test_approved_plan_goes_straight_to_each_task(tmp_path: Path) -> None:
    """APPROVED maps to pass: the tasks follow at once, each implemented and reviewed once."""
    repo = make_repo(tmp_path / "repo", script([words("APPROVED")]))
    done = cli(repo, "run", ITEM)
    assert done.returncode == 0, done.stderr
    assert roles_called(repo) == ["planner", "critic", *["developer", "reviewer"] * 2]
    state = engine(repo)
    assert state["decisions"] == {}
    assert [state["nodes"]["tasks"]["items"][k]["status"] for k in ("T1", "T2")] == ["done"] * 2
    assert (repo / FOLDER / "reports" / "T2.md").read_text() == "# T2\n\nVersion 1.\n"
    assert (repo / "src" / "t1.py").read_text() == "VERSION = 1\n"


def test_needs_revision_sends_the_issues_back_to_the_planner(tmp_path: Path) -> None:
    """NEEDS_REVISION maps to revise: the planner gets the critic's issues, then approval."""
    agents = script([words("NEEDS_REVISION", "Name the limit"), words("APPROVED")])
    repo = make_repo(tmp_path / "repo", agents)
    backend = run_in_process(repo, agents)
    planner = [r for r in backend.requests if r.role == "planner"]
    assert len(planner) == 2
    assert "[high] Name the limit (at plan.md)" in planner[1].prompt_text()
    plan = engine(repo)["nodes"]["plan"]
    assert [i["word"] for i in plan["iterations"]] == ["NEEDS_REVISION", "APPROVED"]
    assert open_repo(repo).status(ITEM)["label"] == "done"


def test_plan_still_needing_revision_at_its_budget_goes_on_with_notes(tmp_path: Path) -> None:
    """`budget: {max: mode, on_exhausted: complete}`: at the mode's limit the plan passes
    with the critic's open issues kept as notes."""
    repo = make_repo(tmp_path / "repo", script([words("NEEDS_REVISION", "Still vague")]))
    done = cli(repo, "run", ITEM)
    assert done.returncode == 0, done.stderr
    assert roles_called(repo)[:6] == ["planner", "critic"] * 3
    plan = engine(repo)["nodes"]["plan"]
    assert (plan["review"], plan["notes"]) == ("concerns", ["[high] Still vague (at plan.md)"])
    assert "developer" in roles_called(repo)


def test_rejected_plan_waits_at_the_gate_without_a_terminal(tmp_path: Path) -> None:
    """REJECTED maps to the gate: without a terminal the run exits 3 and prints the command
    that answers it; `decisions`, `status` and the Claude Code SessionStart hook show it;
    no task has started."""
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    waiting = cli(repo, "run", ITEM)
    assert waiting.returncode == 3
    assert (
        f"Answer with: phasegate answer {ITEM} {DECISION} revise (choices: revise, implement, "
        "drop)" in waiting.stderr
    )
    (pending,) = json.loads(cli(repo, "decisions", ITEM, "--json").stdout)
    assert (pending["id"], pending["status"]) == (DECISION, "pending")
    assert pending["files"] == ["plan.md"]
    assert list(pending["choices"]) == ["revise", "implement", "drop"]
    shown = cli(repo, "status", ITEM).stdout
    assert "waiting on a decision" in shown
    assert f"Next: phasegate answer {ITEM} {DECISION} revise" in shown
    assert roles_called(repo) == ["planner", "critic"]
    hook = subprocess.run(
        [sys.executable, "-m", "phasegate", "hook", "session-start"],
        cwd=repo,
        input=json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- Phase: deciding, waiting on a decision" in context.splitlines()
    assert f"- Next command: phasegate answer {ITEM} {DECISION} revise" in context.splitlines()


def test_revise_answered_by_command_gives_the_plan_one_more_round(tmp_path: Path) -> None:
    """`phasegate answer ... revise` with a note: the next run (no terminal) sends the note
    to the planner as feedback, with one more round of budget, and goes on when approved."""
    agents = script([words("REJECTED", "Wrong approach"), words("APPROVED")])
    repo = make_repo(tmp_path / "repo", agents)
    assert cli(repo, "run", ITEM).returncode == 3
    answered = cli(repo, "answer", ITEM, DECISION, "revise", "--note", "Limit per API key")
    assert answered.returncode == 0, answered.stderr
    assert f"Next: phasegate run {ITEM}" in answered.stdout
    # status agrees: the answer waits for a run (not "phasegate decisions", the label's
    # own next while the gate waits, which would show nothing waiting now)
    shown = json.loads(cli(repo, "status", ITEM, "--json").stdout)
    assert shown["nextCommand"] == f"phasegate run {ITEM}"
    backend = run_in_process(repo, agents)
    planner = [r for r in backend.requests if r.role == "planner"]
    assert len(planner) == 1  # the second round only: the first was the earlier run's
    assert "Limit per API key" in planner[0].prompt_text()
    state = engine(repo)
    answer = state["decisions"][DECISION]["answer"]
    assert (answer["choice"], answer["note"], answer["by"]) == (
        "revise",
        "Limit per API key",
        "command",
    )
    assert [i["word"] for i in state["nodes"]["plan"]["iterations"]] == ["REJECTED", "APPROVED"]
    assert state["nodes"]["plan"]["extra_budget"] == 1
    assert open_repo(repo).status(ITEM)["label"] == "done"


def test_drop_answered_by_command_ends_the_item_stopped(tmp_path: Path) -> None:
    """`drop` leads to the `dropped` end node: the item ends stopped, no task is started."""
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    assert cli(repo, "run", ITEM).returncode == 3
    assert cli(repo, "answer", ITEM, DECISION, "drop").returncode == 0
    done = cli(repo, "run", ITEM)
    assert done.returncode == 0, done.stderr
    status = json.loads(cli(repo, "status", ITEM, "--json").stdout)
    assert (status["status"], status["label"]) == ("stopped", "dropped")
    assert "developer" not in roles_called(repo)


def test_a_dropped_item_run_again_says_it_ended_and_changes_nothing(tmp_path: Path) -> None:
    """An item that reached an end other than done has nothing left to run: running it
    again says so (exit 0), calls no agent and leaves its files as they were; a phase
    name that does not exist is still refused."""
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    assert cli(repo, "run", ITEM).returncode == 3
    assert cli(repo, "answer", ITEM, DECISION, "drop").returncode == 0
    assert cli(repo, "run", ITEM).returncode == 0
    before = {p.name: p.read_bytes() for p in (repo / FOLDER).iterdir() if p.is_file()}
    calls = roles_called(repo)
    again = cli(repo, "run", ITEM)
    assert again.returncode == 0, again.stderr
    assert f"{ITEM} already ended at dropped (stopped); nothing to run" in again.stdout
    assert "internal error" not in again.stderr
    assert roles_called(repo) == calls
    after = {p.name: p.read_bytes() for p in (repo / FOLDER).iterdir() if p.is_file()}
    assert after == before
    unknown = cli(repo, "run", ITEM, "--phase", "nope")
    assert unknown.returncode == 2
    assert "unknown phase 'nope' in workflow 'review-loop'" in unknown.stderr


def test_implement_answered_on_the_command_line_runs_the_plan_as_it_is(tmp_path: Path) -> None:
    """`run --answer plan-rejected=implement` answers the gate before it is asked."""
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    done = cli(repo, "run", ITEM, "--answer", f"{DECISION}=implement")
    assert done.returncode == 0, done.stderr
    assert roles_called(repo) == ["planner", "critic", *["developer", "reviewer"] * 2]
    assert engine(repo)["decisions"][DECISION]["answer"]["by"] == "flag"
    assert (repo / FOLDER / "plan.md").read_text() == PLAN_V1


def test_each_task_has_its_own_review_loop_and_budget(tmp_path: Path) -> None:
    """A task sent back is revised with the reviewer's blocker; the next task starts fresh
    at iteration 1 (a foreach body's budget is per item)."""
    reviews = {"T1": [approval(False, "No test for the limit"), approval(True)]}
    agents = script([words("APPROVED")], reviews)
    repo = make_repo(tmp_path / "repo", agents)
    backend = run_in_process(repo, agents)
    developer = [r for r in backend.requests if r.role == "developer"]
    assert [r.labels["task"] for r in developer] == ["T1", "T1", "T2"]
    assert "[blocker] No test for the limit" in developer[1].prompt_text()
    nodes = engine(repo)["nodes"]
    assert nodes["tasks[T1]/implement"]["iteration"] == 2
    assert nodes["tasks[T2]/implement"]["iteration"] == 1
    assert (repo / "src" / "t1.py").read_text() == "VERSION = 2\n"


def test_ticked_tasks_of_the_plan_are_skipped(tmp_path: Path) -> None:
    """`skip_done` (the default): a task already ticked in plan.md is not run again."""
    agents = script([words("APPROVED")])
    ticked = PLAN_V1.replace("- [ ] T1", "- [x] T1")
    agents["planner"]["plan"][0]["write"] = {"{item_dir}/plan.md": ticked}
    repo = make_repo(tmp_path / "repo", agents)
    done = cli(repo, "run", ITEM)
    assert done.returncode == 0, done.stderr
    items = engine(repo)["nodes"]["tasks"]["items"]
    assert (items["T1"]["status"], items["T2"]["status"]) == ("skipped", "done")
    assert not (repo / "src" / "t1.py").exists()


def test_a_problem_on_line_100_is_printed_with_its_number(tmp_path: Path) -> None:
    """`file:100:` is printed as written (the console does not turn `:100:` into an emoji)."""
    repo = make_repo(tmp_path / "repo", None, backend="auto")
    path = repo / ".phasegate" / "workflows" / f"{WORKFLOW}.yaml"
    rows = path.read_text().replace(BROKEN[0].values[0], BROKEN[0].values[1]).splitlines()
    at = next(n for n, row in enumerate(rows) if row == "    on: {pass: tasks}")
    rows[at:at] = ["    # padding"] * (99 - at)  # the problem's line becomes line 100
    path.write_text("\n".join(rows) + "\n")
    checked = cli(repo, "validate", str(path))
    assert checked.returncode == 2
    assert f"{path}:100: nodes[0].on: outcome 'rejected'" in checked.stderr


def test_a_repository_workflow_with_commands_runs_through_them(tmp_path: Path) -> None:
    """Commands are entry points: `new` creates the item (no command names a `start`),
    plain `run` is refused with the way to run it, `run --command plan` stops at the
    label `plan` stops at, and `--command build` takes it from there to the end."""
    repo = make_repo(tmp_path / "repo", None, backend="auto")
    path = repo / ".phasegate" / "workflows" / f"{WORKFLOW}.yaml"
    commands = (
        "commands:\n  plan:\n    runs_in: [planning, deciding]\n    stops_at: [implementing]\n"
        "  build:\n    runs_in: [implementing]\n"
    )
    path.write_text(path.read_text().replace("\nnodes:\n", f"\n{commands}nodes:\n"))
    created = cli(repo, "new", "other", "--workflow", WORKFLOW)
    assert created.returncode == 0, created.stderr
    assert "Next: phasegate run other --command plan" in created.stdout
    refused = cli(repo, "run", "other")
    assert refused.returncode == 2
    assert "phasegate run other --command NAME" in refused.stderr
    planned = cli(repo, "run", "other", "--command", "plan")
    assert planned.returncode == 0, planned.stderr
    assert "other is at implementing" in planned.stdout
    early = cli(repo, "run", "other", "--command", "plan")
    assert early.returncode == 4 and "other is in phase implementing" in early.stderr
    built = cli(repo, "run", "other", "--command", "build")
    assert built.returncode == 0, built.stderr
    status = json.loads(cli(repo, "status", "other", "--json").stdout)
    assert (status["status"], status["label"]) == ("completed", "done")
