"""A parallel foreach: items at once in their own git worktrees, merged back in plan order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engine_helpers import git
from parallel_helpers import (
    FOLDER,
    ITEM,
    Agents,
    fan_repo,
    new_item,
    run,
    task_branches,
    worktrees,
)

from phasegate.engine.state import read_state_file
from phasegate.errors import WorkflowError


def engine_state(root: Path) -> dict:
    return read_state_file(root / FOLDER / ".engine.json").to_dict()


def events(root: Path) -> list[dict]:
    lines = (root / FOLDER / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_independent_items_run_at_once_each_in_its_own_worktree(tmp_path: Path) -> None:
    """Items whose dependencies are done run at the same time, at most ``parallel``, each in
    its own worktree; no two agents ever work in the same tree."""
    root = fan_repo(tmp_path / "repo", parallel=3)
    new_item(root)
    agents = Agents(delay=0.4)
    outcome = run(root, agents)
    assert outcome.status == "completed", outcome.message
    assert agents.most == 3
    trees = {task: agents.workdirs[task] for task in ("T1", "T2", "T3", "T4")}
    assert len(set(trees.values())) == 4
    for where in trees.values():
        assert where != root and (root / ".phasegate" / "worktrees") in where.parents


def test_a_dependent_item_starts_from_its_dependencies_merged_work(tmp_path: Path) -> None:
    """T4 depends on T1, T2 and T3: its worktree holds the three files they wrote; the
    independent ones saw only the base."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = Agents(delay=0.1)
    assert run(root, agents).status == "completed"
    assert agents.seen["T4"] == ["src/T1.py", "src/T2.py", "src/T3.py"]
    assert agents.seen["T1"] == agents.seen["T2"] == agents.seen["T3"] == []


def test_the_merged_work_lands_in_the_work_tree_and_worktrees_are_removed(
    tmp_path: Path,
) -> None:
    """When the loop ends, every item's work is in the work tree (uncommitted, as a sequential
    run leaves it); worktrees, item branches and the fan-out's refs are gone; the merged
    history is the commit the state records."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    assert run(root, Agents(delay=0.05)).status == "completed"
    for task in ("T1", "T2", "T3", "T4"):
        assert (root / "src" / f"{task}.py").read_text() == f"# {task}\n"
    status = git(root, "status", "--porcelain", "--untracked-files=all")
    assert "?? src/T1.py" in status and "?? src/T4.py" in status
    assert git(root, "log", "--oneline", "-1").split(" ", 1)[1].strip() == "phasegate workflow"
    assert worktrees(root) == [] and task_branches(root) == []
    assert "refs/phasegate" not in git(root, "for-each-ref")
    head = engine_state(root)["nodes"]["tasks"]["fanout"]["merged"]
    merged = git(root, "log", "--first-parent", "--format=%s", head)
    assert merged.splitlines() == [
        "phasegate: merge T4",
        "phasegate: merge T3",
        "phasegate: merge T2",
        "fan-one T1: The bucket",  # the first merge is a fast-forward
        "phasegate workflow",
        "init",
    ]
    state = engine_state(root)["nodes"]["tasks"]
    assert [state["items"][k]["status"] for k in ("T1", "T2", "T3", "T4")] == ["done"] * 4
    assert state["fanout"]["landed"]


def test_merges_happen_in_plan_order_whatever_finishes_first(tmp_path: Path) -> None:
    """T1 takes longest, yet the merged history is T1, T2, T3, T4 (plan order)."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = Agents(delay=0.05)
    slow = {"T1": 0.6, "T2": 0.3, "T3": 0.0}

    def special(request):  # type: ignore[no-untyped-def]
        import time

        time.sleep(slow.get(request.labels.get("task", ""), 0.0))
        return None

    agents.special = special
    assert run(root, agents).status == "completed"
    merged = [e["key"] for e in events(root) if e["event"] == "foreach.merged"]
    assert merged == ["T1", "T2", "T3", "T4"]
    finished = [
        e["key"] for e in events(root) if e["event"] == "foreach.item" and e["status"] == "done"
    ]
    assert finished.index("T3") < finished.index("T1")  # it did finish first


def test_jobs_one_runs_the_items_one_at_a_time_in_the_work_tree(tmp_path: Path) -> None:
    """``run --jobs 1`` overrides ``parallel``: a sequential loop, agents in the work tree."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = Agents(delay=0.05)
    assert run(root, agents, jobs=1).status == "completed"
    assert agents.most == 1
    assert {agents.workdirs[t] for t in ("T1", "T2")} == {root}


def test_a_per_backend_cap_limits_agents_running_at_once(tmp_path: Path) -> None:
    """``concurrency.backends`` caps how many agents of one backend run at once."""
    root = fan_repo(
        tmp_path / "repo", config="version: 1\nconcurrency:\n  backends: {scripted: 2}\n"
    )
    new_item(root)
    agents = Agents(delay=0.3)
    assert run(root, agents).status == "completed"
    assert agents.most == 2


def test_a_gate_inside_a_parallel_body_must_name_its_item(tmp_path: Path) -> None:
    """Items running at once must not share one decision: a gate's decision id written out
    names the item (the default one, ``ID-{{ task }}``, does)."""
    extra = ""
    root = fan_repo(tmp_path / "repo", extra=extra)
    path = root / ".phasegate" / "workflows" / "fan.yaml"
    text = path.read_text().replace(
        "      - id: coded\n        kind: end\n",
        "      - id: ok\n        kind: gate\n        decision: ok\n        question: Fine?\n"
        "        choices: {yes: {to: coded}}\n      - id: coded\n        kind: end\n",
    )
    path.write_text(text)
    with pytest.raises(WorkflowError, match=r"decision id must name the item"):
        new_item(root)


def clashing_agents(resolve: bool) -> Agents:
    """T1 and T2 write the same file differently; the repair resolves it (or does nothing)."""
    agents = Agents(
        delay=0.05,
        files={"T1": {"src/shared.py": "RATE = 10\n"}, "T2": {"src/shared.py": "RATE = 20\n"}},
    )

    def special(request):  # type: ignore[no-untyped-def]
        from phasegate.agents.scripted import ScriptedReply

        if request.labels.get("stage") != "repair":
            return None
        agents.calls.append(("repair", request.labels.get("task", "")))
        text = (request.workdir / "src" / "shared.py").read_text()
        assert "<<<<<<<" in text  # the agent works on the conflicted merge
        if not resolve:
            return ScriptedReply(text="could not decide")
        return ScriptedReply(write={"src/shared.py": "RATE = 30\n"}, text="resolved")

    agents.special = special
    return agents


def test_a_merge_conflict_is_repaired_by_an_agent_in_a_fresh_worktree(tmp_path: Path) -> None:
    """Two items change the same lines: the conflict is not resolved silently; the repair
    call (the body's executor) resolves it; the resolution lands in the work tree."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = clashing_agents(resolve=True)
    outcome = run(root, agents)
    assert outcome.status == "completed", outcome.message
    assert agents.calls.count(("repair", "T2")) == 1
    assert (root / "src" / "shared.py").read_text() == "RATE = 30\n"
    kinds = [e["event"] for e in events(root)]
    assert "foreach.conflict" in kinds and "foreach.conflict_resolved" in kinds
    assert agents.seen["T4"] == ["src/T3.py", "src/shared.py"]  # T4 starts from the resolution
    assert worktrees(root) == []
    import subprocess
    import sys

    logs = subprocess.run(
        [sys.executable, "-m", "phasegate", "logs", ITEM],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    ).stdout
    assert "item T2: merge conflict in src/shared.py" in logs
    assert "item T2: merge conflict resolved" in logs and "item T4 merged" in logs


def test_an_unresolved_conflict_asks_a_person_and_waits(tmp_path: Path) -> None:
    """When the repairs fail, a gate asks: with no terminal the run stops (exit 3) naming
    the answer command; resolved by hand and answered, the next run commits and lands it."""
    from phasegate.errors import WaitingForHuman

    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = clashing_agents(resolve=False)
    with pytest.raises(WaitingForHuman, match="phasegate answer fan-one conflict-T2 retry"):
        run(root, agents)
    assert agents.calls.count(("repair", "T2")) == 2  # conflicts.attempts, by default
    assert not (root / "src" / "shared.py").exists()  # nothing landed yet
    decision = engine_state(root)["decisions"]["conflict-T2"]
    assert decision["status"] == "pending"
    (where,) = [Path(w) for w in worktrees(root) if "conflict-" in w]
    (where / "src" / "shared.py").write_text("RATE = 25\n")  # a person resolves it
    from phasegate.api import open_repo

    open_repo(root).answer(ITEM, "conflict-T2", "resolved")
    before = len(agents.calls)
    assert run(root, agents).status == "completed"
    assert (root / "src" / "shared.py").read_text() == "RATE = 25\n"
    new_calls = agents.calls[before:]
    assert ("repair", "T2") not in new_calls
    assert [c for c in new_calls if c[0] == "coder"] == [("coder", "T4")]  # nothing redone
    assert worktrees(root) == []


def test_conflicts_then_outcome_blocks_and_the_next_run_takes_the_conflict_up(
    tmp_path: Path,
) -> None:
    """``conflicts: {attempts: 0, then: outcome}``: ``merge-conflict``, unmapped, stops the
    run blocked, naming the worktree to resolve it in; the loop is kept as it is, so once
    it is resolved there the next run lands every item's work without running any again."""
    from phasegate.errors import BlockedError

    root = fan_repo(tmp_path / "repo", extra="    conflicts: {attempts: 0, then: outcome}\n")
    new_item(root)
    agents = clashing_agents(resolve=True)
    with pytest.raises(BlockedError, match=r"merging T2 stopped at a conflict in src/shared\.py"):
        run(root, agents)
    assert ("repair", "T2") not in agents.calls
    assert not (root / "src" / "shared.py").exists()  # nothing lands before it is resolved
    (where,) = [Path(w) for w in worktrees(root) if "conflict-" in w]
    (where / "src" / "shared.py").write_text("RATE = 30\n")
    before = len(agents.calls)
    assert run(root, agents).status == "completed"
    assert [c for c in agents.calls[before:] if c[0] == "coder"] == [("coder", "T4")]
    assert (root / "src" / "shared.py").read_text() == "RATE = 30\n"
    assert (root / "src" / "T3.py").exists()


def test_status_lists_running_done_waiting_and_failed_items(tmp_path: Path) -> None:
    """Items stopped for a person or by a failure are parked while the others go on; then
    ``phasegate status`` lists each item with where it stands, and the answer commands."""
    import subprocess
    import sys

    from phasegate.errors import WaitingForHuman

    root = fan_repo(tmp_path / "repo")
    path = root / ".phasegate" / "workflows" / "fan.yaml"
    path.write_text(
        path.read_text().replace(
            "      - id: coded\n        kind: end\n",
            "      - id: ok\n        kind: gate\n        decision: ok-{{ task }}\n"
            "        question: Keep {{ task }}?\n        choices: {yes: {to: coded}}\n"
            "      - id: coded\n        kind: end\n",
        )
    )
    (root / ".phasegate" / "config.yaml").write_text("version: 1\nretries: {agent: 0}\n")
    new_item(root)
    agents = Agents(delay=0.05)

    def special(request):  # type: ignore[no-untyped-def]
        from phasegate.agents.scripted import ScriptedReply

        if request.labels.get("task") == "T3":
            return ScriptedReply(exit_status=1, error="the model is overloaded")
        return None

    agents.special = special
    with pytest.raises(Exception) as stopped:
        run(root, agents)
    # The first parked item (plan order) ends the run: T1 waits for its gate.
    assert isinstance(stopped.value, WaitingForHuman)
    shown = subprocess.run(
        [sys.executable, "-m", "phasegate", "status", ITEM],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout + shown.stderr
    assert "tasks items: 2 waiting, 1 failed, 1 pending" in text
    assert (
        "T3 The config — failed: coder (scripted) failed in phase tasks[T3]/code after 1 "
        "attempt: the model is overloaded [worktree .phasegate/worktrees/fan-one--tasks--T3]"
    ) in " ".join(text.split())
    assert "T4 Wire them together — pending (after T1, T2, T3)" in text
    listed = subprocess.run(
        [sys.executable, "-m", "phasegate", "status", ITEM, "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    status = json.loads(listed.stdout)
    (tasks,) = [p for p in status["phases"] if p["node"] == "tasks"]
    assert [i["status"] for i in tasks["items"]] == ["waiting", "waiting", "failed", "pending"]
    # the two gates are asked in the order their items finished, which varies
    commands = sorted(d["command"] for d in status["pendingDecisions"])
    assert commands == ["phasegate answer fan-one ok-T1 yes", "phasegate answer fan-one ok-T2 yes"]


def test_a_lock_file_left_by_a_killed_git_command_is_cleared(tmp_path: Path) -> None:
    """A run killed in the middle of ``git commit`` leaves index.lock behind; the resumed
    run's commit of that item still goes through (the item's run lock rules out another)."""
    from phasegate.engine.fanout_git import FanoutGit

    root = fan_repo(tmp_path / "repo")
    trees = FanoutGit(root, root, "fan-one", "tasks", (".phasegate",), "2026-01-01T00:00:00+00:00")
    base = trees.snapshot()
    where = trees.prepare("T1", base, reuse=False)
    (where / "a.txt").write_text("a\n")
    gitdir = Path(git(where, "rev-parse", "--git-dir").strip())
    (gitdir if gitdir.is_absolute() else where / gitdir).joinpath("index.lock").write_text("")
    commit = trees.commit(where, "fan-one T1")
    assert (
        commit != base and git(where, "show", "--format=%s", "-s", commit).strip() == "fan-one T1"
    )


def test_commits_are_the_same_for_the_same_work(tmp_path: Path) -> None:
    """Item commits have a fixed author and the fan-out's start time: the same work gives the
    same commit, so a resumed run's history matches an uninterrupted one's."""
    from phasegate.engine.fanout_git import FanoutGit

    made = []
    for name in ("a", "b"):
        root = fan_repo(tmp_path / name)
        git(root, "commit", "-q", "--amend", "--no-edit", "--date=2026-01-01T00:00:00")
        trees = FanoutGit(root, root, "x", "tasks", (".phasegate",), "2026-01-02T00:00:00+00:00")
        where = trees.prepare("T1", trees.snapshot(), reuse=False)
        (where / "a.txt").write_text("a\n")
        made.append(git(where, "show", "-s", "--format=%an %ad %T %s", trees.commit(where, "m")))
    assert made[0] == made[1] and made[0].startswith("phasegate ")


def test_isolation_none_runs_items_at_once_in_the_one_work_tree(tmp_path: Path) -> None:
    """``isolation: none``: no worktrees, no merges; items still run at once."""
    root = fan_repo(tmp_path / "repo", extra="    isolation: none\n")
    new_item(root)
    agents = Agents(delay=0.3)
    assert run(root, agents).status == "completed"
    assert agents.most == 3
    assert {agents.workdirs[t] for t in ("T1", "T2", "T3", "T4")} == {root}
    assert worktrees(root) == [] and "refs/phasegate" not in git(root, "for-each-ref")


def test_a_run_without_a_commit_to_branch_from_is_refused_clearly(tmp_path: Path) -> None:
    """Worktrees need a commit: a repository without one gets a one-line error naming what
    to do, exit 2, and nothing is lost."""
    from phasegate.errors import BadInputError

    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = Agents(delay=0.01)
    import shutil

    shutil.rmtree(root / ".git")
    git(root, "init", "-q", "-b", "main")
    with pytest.raises(BadInputError, match="has no commit to start them from: commit first"):
        run(root, agents)
    assert (root / FOLDER / "tasks.md").exists()


def test_the_repair_role_must_be_able_to_write(tmp_path: Path) -> None:
    """``conflicts.role`` names who resolves merge conflicts: a read-only role is refused
    when the workflow loads, with the file and field."""
    root = fan_repo(tmp_path / "repo", extra="    conflicts: {role: reviewer}\n")
    with pytest.raises(WorkflowError, match=r"fan.yaml:\d+: .*conflicts.role.*needs write access"):
        new_item(root)


def test_progress_lines_name_their_item_without_a_terminal(tmp_path: Path) -> None:
    """Without a terminal, each progress line of a parallel item says which item it is."""
    import io

    from rich.console import Console

    from phasegate.api import open_repo
    from phasegate.cli.progress import ProgressPrinter
    from phasegate.engine.runner import RunOptions

    root = fan_repo(tmp_path / "repo")
    new_item(root)
    out = io.StringIO()
    printer = ProgressPrinter(Console(file=out, width=200, force_terminal=False))
    agents = Agents(delay=0.05)
    open_repo(root).run(
        ITEM, backends={"default": agents.backend()}, options=RunOptions(), sink=printer
    )
    text = out.getvalue()
    assert "running up to 3 item(s) at once in git worktrees (4 to go)" in text
    for key in ("T1", "T2", "T3", "T4"):
        assert f"[{key}] iteration 1: coder (scripted) working on tasks…" in text
        assert f"[{key}] ✔ code complete (1 iteration)" in text
    assert "merged T4" in text


def test_a_budget_cap_stops_a_parallel_item_before_its_call_and_a_raise_lets_it_go_on(
    tmp_path: Path,
) -> None:
    """Budget caps hold inside a parallel loop: the call that would pass the cap is not
    made, its item waits at the budget gate (saved, answerable); after
    ``phasegate answer ITEM budget raise: N`` the next run makes the calls held."""
    from phasegate.api import open_repo
    from phasegate.errors import WaitingForHuman

    root = fan_repo(
        tmp_path / "repo", config="version: 1\nbudget:\n  roles: {coder: {tokens: 100}}\n"
    )
    new_item(root)
    agents = Agents(delay=0.05)
    with pytest.raises(WaitingForHuman, match="budget"):
        run(root, agents)
    coded = [task for role, task in agents.calls if role == "coder"]
    # The first call goes alone (nothing estimates it yet); the next would pass the cap.
    assert coded == ["T1"]
    assert engine_state(root)["decisions"]["budget"]["status"] == "pending"
    open_repo(root).answer(ITEM, "budget", "raise: 1000")
    assert run(root, agents).status == "completed"
    coded = [task for role, task in agents.calls if role == "coder"]
    assert sorted(coded) == ["T1", "T2", "T3", "T4"]  # each call made once
    assert (root / "src" / "T4.py").exists()


def with_item_gate(root: Path) -> None:
    path = root / ".phasegate" / "workflows" / "fan.yaml"
    path.write_text(
        path.read_text().replace(
            "      - id: coded\n        kind: end\n",
            "      - id: ok\n        kind: gate\n        decision: ok-{{ task }}\n"
            "        question: Keep {{ task }}?\n        choices: {yes: {to: coded}}\n"
            "      - id: coded\n        kind: end\n",
        )
    )


def test_items_that_finish_as_they_resume_let_their_dependents_start(tmp_path: Path) -> None:
    """T1-T3 wait on their gates; once answered, the next run ends them at once (nothing
    left to call) and then runs T4, which depends on all three."""
    from phasegate.api import open_repo
    from phasegate.errors import WaitingForHuman

    root = fan_repo(tmp_path / "repo")
    with_item_gate(root)
    new_item(root)
    with pytest.raises(WaitingForHuman):
        run(root, Agents(delay=0.01))
    for key in ("T1", "T2", "T3"):
        open_repo(root).answer(ITEM, f"ok-{key}", "yes")
    agents = Agents(delay=0.01)
    with pytest.raises(WaitingForHuman, match="ok-T4"):
        run(root, agents)
    assert [task for role, task in agents.calls if role == "coder"] == ["T4"]
    open_repo(root).answer(ITEM, "ok-T4", "yes")
    assert run(root, Agents(delay=0.01)).status == "completed"
    items = engine_state(root)["nodes"]["tasks"]["items"]
    assert {k: v["status"] for k, v in items.items()} == dict.fromkeys(items, "done")


def test_a_ticked_dependency_is_skipped_and_its_dependents_still_run(tmp_path: Path) -> None:
    """A task already ticked in the plan is skipped; the tasks after it run as usual."""
    root = fan_repo(tmp_path / "repo")
    new_item(root)
    agents = Agents(
        delay=0.01,
        tasks="- [x] T1: Done before\n- [ ] T2: Next (after T1)\n- [ ] T3: Other\n",
    )
    assert run(root, agents).status == "completed"
    items = engine_state(root)["nodes"]["tasks"]["items"]
    assert {k: v["status"] for k, v in items.items()} == {
        "T1": "skipped",
        "T2": "done",
        "T3": "done",
    }
    assert sorted(task for role, task in agents.calls if role == "coder") == ["T2", "T3"]


def test_a_cap_a_worker_reaches_on_a_retry_is_asked_as_a_decision(tmp_path: Path) -> None:
    """T1's first attempt fails after spending $0.45 of a $0.50 cap; its retry, on the
    worker's thread, would pass the cap (whatever the others spent meanwhile). A worker
    cannot ask a person: the call goes back to the engine's thread, which saves the budget
    decision and asks it (it used to end the run waiting, exit 3, with no decision to
    answer); another item's call that the cap lets through does not withdraw it."""
    from phasegate.agents.base import AgentRequest
    from phasegate.agents.scripted import ScriptedReply
    from phasegate.api import open_repo
    from phasegate.errors import WaitingForHuman

    root = fan_repo(
        tmp_path / "repo",
        config="version: 1\nretries: {agent: 1}\nbudget:\n  roles: {coder: {usd: 0.5}}\n",
    )
    new_item(root)
    failed: list[str] = []

    def special(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("task") == "T1" and not failed:
            failed.append("T1")
            return ScriptedReply(exit_status=1, error="boom", cost_usd=0.45)
        return ScriptedReply(write={f"src/{request.labels['task']}.py": "x\n"}, cost_usd=0.01)

    agents = Agents(delay=0.0, special=special)
    with pytest.raises(WaitingForHuman, match="budget") as stopped:
        run(root, agents)
    assert "phasegate answer" in str(stopped.value)
    assert engine_state(root)["decisions"]["budget"]["status"] == "pending"
    open_repo(root).answer(ITEM, "budget", "raise: 5")
    assert run(root, agents).status == "completed"
    assert (root / "src" / "T1.py").exists()
