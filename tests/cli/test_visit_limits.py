"""Visit limits, end to end through the CLI: a cycle of a user's workflow always stops, and a
node blocked by its visit limit is retried by the next run (a subprocess with stdin closed,
real git, scripted agents)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from phasegate.errors import ExitCode

AGENTS = """\
writer: {"*": [{write: {"{item_dir}/spec.md": "# spec\\n"}}]}
judge: {"*": [{verdict: {approved: true, summary: ok, issues: []}}]}
"""


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def loop_workflow(spec_extra: str = "", check: str = "false", tests_on: str = "") -> str:
    """An agent node ``spec`` and a check ``tests`` whose ``fail`` goes back to ``spec`` (and
    an end node ``giveup`` when one of them names it)."""
    giveup = "giveup" in spec_extra + tests_on
    text = f"""\
name: loop
items_dir: loopitems
modes: {{standard: {{max_iterations: 2}}}}
roles: {{writer: {{access: write}}, judge: {{}}}}
nodes:
  - id: spec
    executor: writer
    outputs: [spec.md]
    reviewer: judge
{spec_extra}  - id: tests
    kind: check
    run: [{{name: t, run: "{check}"}}]
    on: {{pass: done, fail: spec{tests_on}}}
  - id: done
    kind: end
"""
    if giveup:
        text += "  - id: giveup\n    kind: end\n    status: stopped\n    message: gave up\n"
    return text


def setup(root: Path, workflow: str) -> Path:
    repo = init_repo(root)
    assert phasegate(repo, "init").returncode == 0
    flows = repo / ".phasegate" / "workflows"
    (flows / "prompts" / "loop").mkdir(parents=True, exist_ok=True)
    for prompt in ("spec", "judge"):
        (flows / "prompts" / "loop" / f"{prompt}.md").write_text("Do {{ node }} for {{ item }}\n")
    write_workflow(repo, workflow)
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    return repo


def write_workflow(repo: Path, workflow: str) -> None:
    (repo / ".phasegate" / "workflows" / "loop.yaml").write_text(workflow)


def events(repo: Path, name: str) -> list[dict[str, Any]]:
    lines = (repo / "loopitems" / "it" / ".journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == name]


def executor_calls(repo: Path) -> int:
    return sum(1 for e in events(repo, "agent.dispatched") if "/execute/" in str(e.get("key")))


def test_a_failing_check_back_to_an_agent_node_stops_blocked_at_the_default_limit(
    tmp_path: Path,
) -> None:
    """No ``max_visits`` anywhere: the cycle still ends. ``spec`` is on a cycle, so it may be
    visited 10 times; the 11th visit ends it ``exhausted``, which stops the run blocked
    (exit 4) with a message naming the limit, after exactly 10 executor calls."""
    repo = setup(tmp_path / "repo", loop_workflow())
    checked = phasegate(repo, "validate", ".phasegate/workflows/loop.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert phasegate(repo, "new", "it", "-w", "loop").returncode == 0
    ran = phasegate(repo, "run", "it")
    assert ran.returncode == ExitCode.BLOCKED, ran.stderr
    assert "spec ended exhausted" in ran.stderr
    assert "10 visits" in ran.stderr and "max_visits" in ran.stderr
    assert executor_calls(repo) == 10
    (exhausted,) = events(repo, "node.exhausted")
    assert (exhausted["node"], exhausted["max"]) == ("spec", 10)


def test_an_exhausted_outcome_of_a_cycle_node_may_be_mapped_without_max_visits(
    tmp_path: Path,
) -> None:
    """The default limit's ``exhausted`` is an outcome like any other: ``on`` may send it
    elsewhere (here an end node that stops the item), and ``validate`` accepts that."""
    repo = setup(tmp_path / "repo", loop_workflow("    on: {exhausted: giveup}\n"))
    checked = phasegate(repo, "validate", ".phasegate/workflows/loop.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert phasegate(repo, "new", "it", "-w", "loop").returncode == 0
    ran = phasegate(repo, "run", "it")
    assert ran.returncode == 0, ran.stderr
    shown = json.loads(phasegate(repo, "status", "it", "--json").stdout)
    assert shown["status"] == "stopped"
    assert executor_calls(repo) == 10


def test_a_node_blocked_by_max_visits_is_retried_by_the_next_run(tmp_path: Path) -> None:
    """``max_visits: 2``: the run stops blocked after two visits. Running again without a fix
    retries the node with a new allowance (two more executor calls, blocked again: still
    bounded); once the cause is fixed, the next run retries it and the item completes."""
    repo = setup(tmp_path / "repo", loop_workflow("    max_visits: 2\n"))
    assert phasegate(repo, "new", "it", "-w", "loop").returncode == 0
    first = phasegate(repo, "run", "it")
    assert first.returncode == ExitCode.BLOCKED, first.stderr
    assert "spec ended exhausted" in first.stderr
    assert "max_visits 2" in first.stderr
    assert executor_calls(repo) == 2

    again = phasegate(repo, "run", "it")
    assert again.returncode == ExitCode.BLOCKED, again.stderr
    assert executor_calls(repo) == 4
    assert [e["node"] for e in events(repo, "node.retried")] == ["spec"]

    write_workflow(repo, loop_workflow("    max_visits: 2\n", check="true"))
    fixed = phasegate(repo, "run", "it")
    assert fixed.returncode == 0, fixed.stderr
    assert executor_calls(repo) == 5
    assert [e["node"] for e in events(repo, "node.retried")] == ["spec", "spec"]
    shown = phasegate(repo, "status", "it", "--json")
    assert json.loads(shown.stdout)["status"] == "completed"


def test_a_check_node_with_max_visits_may_map_exhausted(tmp_path: Path) -> None:
    """A check node's ``exhausted`` (it has ``max_visits``) is an outcome ``validate`` knows."""
    repo = setup(tmp_path / "repo", loop_workflow(tests_on=", exhausted: giveup"))
    flow = repo / ".phasegate" / "workflows" / "loop.yaml"
    flow.write_text(
        flow.read_text().replace("    kind: check\n", "    kind: check\n    max_visits: 3\n")
    )
    checked = phasegate(repo, "validate", str(flow))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_retry_killed_and_resumed_counts_visits_as_an_uninterrupted_one(
    tmp_path: Path,
) -> None:
    """The run that retries a node blocked by ``max_visits: 2`` is killed (SIGKILL) at a
    state commit and in an agent call, and resumed each time: it ends blocked after the same
    visits as a run never killed (executor calls of visits 4 and 5, then visit 6 exhausted)."""
    repo = setup(tmp_path / "repo", loop_workflow("    max_visits: 2\n"))
    assert phasegate(repo, "new", "it", "-w", "loop").returncode == 0
    assert phasegate(repo, "run", "it").returncode == ExitCode.BLOCKED
    for crash in ("state.after_commit@2", "dispatch.after_call@1", None):
        # A commit every step: the crash points land at the same steps however fast the
        # agents answer (with group commit, which commit is the 2nd depends on timing).
        env = {
            **os.environ,
            "PHASEGATE_COALESCE_SECONDS": "0",
            **({"PHASEGATE_CRASH_AT": crash} if crash else {}),
        }
        ran = subprocess.run(
            [sys.executable, "-m", "phasegate", "run", "it"],
            cwd=repo,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=env,
            timeout=300,
        )
        assert ran.returncode == (-signal.SIGKILL if crash else ExitCode.BLOCKED), ran.stderr
    keys = {str(e["key"]) for e in events(repo, "agent.dispatched") if "/execute/" in e["key"]}
    assert sorted({int(k.split("#")[1].split("/")[0]) for k in keys}) == [1, 2, 4, 5]
    state = json.loads((repo / "loopitems" / "it" / ".engine.json").read_text())
    assert state["nodes"]["spec"]["visit"] == 6
    assert state["nodes"]["spec"]["outcome"] == "exhausted"


def test_a_script_answers_a_later_visit_of_a_node_with_its_own_replies(tmp_path: Path) -> None:
    """A check sends the item back to ``spec`` until ``spec.md`` says OK. Each visit of a
    node starts again at iteration 1, so a script keyed by node alone gives every visit the
    same reply and the loop could never be scripted; ``spec@2`` answers the second visit."""
    repo = setup(tmp_path / "repo", loop_workflow(check="grep -q OK loopitems/it/spec.md"))
    (repo / ".phasegate" / "agents.yaml").write_text(
        "writer:\n"
        '  spec: [{write: {"{item_dir}/spec.md": "not yet\\n"}}]\n'
        '  spec@2: [{write: {"{item_dir}/spec.md": "OK\\n"}}]\n'
        'judge: {"*": [{verdict: {approved: true, summary: ok, issues: []}}]}\n'
    )
    assert phasegate(repo, "new", "it", "-w", "loop", "-d", "x").returncode == 0
    done = phasegate(repo, "run", "it")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (repo / "loopitems" / "it" / "spec.md").read_text() == "OK\n"
    keys = [str(e["key"]) for e in events(repo, "agent.dispatched")]
    assert [key.split("/", 1)[0] for key in keys if "/execute/" in key] == ["spec#1", "spec#2"]
