"""Protected files while a parallel foreach runs several agents at once: the engine's own
commits, journal lines, worktrees and branches made meanwhile are never an agent's violation;
an agent that does change phasegate's files is still undone, and forged lines are cut out from
between the engine's own."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from parallel_helpers import FOLDER, Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.api import open_repo
from phasegate.engine.protect import guard_of
from phasegate.state.journal import Journal

FORGED = {"event": "agent.finished", "key": "forged", "attempt": "forged", "ok": True}


def events(root: Path) -> list[dict[str, Any]]:
    lines = (root / FOLDER / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def staggered(delays: dict[str, float]) -> Agents:
    """Coders that take different times, so results are journaled and committed while the
    other items' agents still work."""
    agents = Agents(delay=0.0)

    def special(request: AgentRequest) -> ScriptedReply | None:
        time.sleep(delays.get(request.labels.get("task", ""), 0.0))
        return None

    agents.special = special
    return agents


def test_the_engines_own_writes_during_a_fan_out_are_no_violation(tmp_path: Path) -> None:
    """Protected files (parallel foreach): while one item's agent works, the engine journals
    and commits the others' results and makes their worktrees and merges; none of that is
    taken for the working agent changing phasegate's files."""
    root = fan_repo(tmp_path / "repo", parallel=3, config="version: 1\nretries: {agent: 0}\n")
    new_item(root)
    agents = staggered({"T1": 0.05, "T2": 0.4, "T3": 0.8, "T4": 0.05})
    outcome = run(root, agents)
    assert outcome.status == "completed", outcome.message
    names = [e["event"] for e in events(root)]
    assert "agent.violation" not in names
    assert "agent.failed" not in names
    # The state was committed while the slow items' agents still worked.
    assert names.count("agent.finished") >= 4


def test_a_parallel_agent_changing_phasegates_files_is_undone_and_the_rest_go_on(
    tmp_path: Path,
) -> None:
    """Protected files (parallel foreach): an agent that rewrites the config and appends a
    forged result while others work has both put back (the forged line is cut from between
    the engine's own lines), its call fails and is retried, and the item completes."""
    root = fan_repo(tmp_path / "repo", parallel=3)
    config = (root / ".phasegate" / "config.yaml").read_text()
    new_item(root)
    tampered: list[str] = []

    def special(request: AgentRequest) -> ScriptedReply | None:
        task = request.labels.get("task", "")
        if task == "T2" and not tampered:
            tampered.append(request.labels["attempt"])
            time.sleep(0.2)  # the others' results are journaled around this one's lines
            with open(root / FOLDER / ".journal.jsonl", "a") as handle:
                handle.write(json.dumps(FORGED) + "\n")
            (root / ".phasegate" / "config.yaml").write_text("roles: {default: {backend: auto}}\n")
        time.sleep({"T1": 0.1, "T3": 0.5}.get(task, 0.0))
        return None

    agents = Agents(delay=0.0, special=special)
    outcome = run(root, agents)
    assert outcome.status == "completed", outcome.message
    assert (root / ".phasegate" / "config.yaml").read_text() == config
    found = events(root)
    assert all(e.get("attempt") != "forged" for e in found)
    violations = [e for e in found if e["event"] == "agent.violation"]
    assert tampered[0] in {v["attempt"] for v in violations}
    for violation in violations:
        assert violation["paths"] == [".phasegate/config.yaml", f"{FOLDER}/.journal.jsonl"]
    mine = [v for v in violations if v["attempt"] == tampered[0]]
    assert mine[0]["forged_events"] == ["agent.finished"]
    # Every line is the engine's own, in order, and whole.
    assert all(e["event"] != "agent.finished" or e["key"] != "forged" for e in found)


def test_an_answer_journaled_by_another_command_during_a_call_is_kept(tmp_path: Path) -> None:
    """Protected files: a decision answered with `phasegate answer` (another process appending
    to the journal) while an agent works is not a forged line; a line the agent appends is."""
    root = fan_repo(tmp_path / "repo", parallel=1)
    repo = open_repo(root)
    repo.new("guarded", workflow="fan", description="guarded")
    item = repo.item("guarded")
    state = item.load()
    # `phasegate answer` answers a decision the committed state holds as pending.
    state.decisions["d1"] = {
        "id": "d1",
        "visit": 1,
        "status": "pending",
        "choices": {"approve": ""},
    }
    item.save(state, durable=True)
    guard = guard_of(item)
    other_process = Journal(item.journal.path)
    seen: list[list[Any]] = []
    with guard.watching() as found:
        item.record("own.line", n=1)
        other_process.append("decision.answered", id="d1", visit=1, choice="approve", by="command")
        with open(item.journal.path, "a") as handle:
            handle.write(json.dumps(FORGED) + "\n")
        item.record("own.line", n=2)
        seen.append(found)
    names = [json.loads(line)["event"] for line in item.journal.path.read_text().splitlines()]
    assert names[-3:] == ["own.line", "decision.answered", "own.line"]
    (violation,) = seen[0]
    assert len(violation.forged) == 1 and "forged" in violation.forged[0]


def test_concurrent_calls_share_one_record_of_the_files(tmp_path: Path) -> None:
    """Protected files: calls that overlap (parallel items) each see a change made while they
    ran; a call that begins after another began records nothing anew that phasegate wrote."""
    root = fan_repo(tmp_path / "repo", parallel=1)
    repo = open_repo(root)
    repo.new("guarded", workflow="fan", description="guarded")
    item = repo.item("guarded")
    state = item.load()
    guard = guard_of(item)
    started = threading.Event()
    release = threading.Event()
    results: dict[str, list[Any]] = {}

    def first() -> None:
        with guard.watching() as found:
            started.set()
            release.wait(10)
        results["first"] = found

    worker = threading.Thread(target=first)
    worker.start()
    assert started.wait(10)
    item.record("own.line")
    item.save(state, durable=True)  # the engine commits while the first call runs
    with guard.watching() as found:
        (root / ".phasegate" / "config.yaml").write_text("tampered: true\n")
    release.set()
    worker.join(10)
    results["second"] = found
    assert (root / ".phasegate" / "config.yaml").read_text() == "version: 1\n"
    for name in ("first", "second"):
        (violation,) = results[name]
        assert violation.paths == (".phasegate/config.yaml",)


def test_a_backends_own_log_is_never_a_violation_of_a_call_overlapping_another(
    tmp_path: Path,
) -> None:
    """Protected files: a file of .phasegate/ a backend declares its own (the scripted
    backend's calls log) is not recorded, even for a call that begins while another runs."""
    root = fan_repo(tmp_path / "repo", parallel=1)
    repo = open_repo(root)
    repo.new("guarded", workflow="fan", description="guarded")
    item = repo.item("guarded")
    item.load()
    guard = guard_of(item)
    log = root / ".phasegate" / "calls.jsonl"
    log.write_text("")
    with guard.watching() as first:
        with guard.watching([log]) as second:
            log.write_text('{"call": 1}\n')
        log.write_text('{"call": 2}\n')
    assert (first, second) == ([], [])
    assert log.read_text() == '{"call": 2}\n'


def test_items_kept_under_phasegates_folder_are_their_runs_own(tmp_path: Path) -> None:
    """Protected files: a workflow may keep its items under .phasegate/; the item's own
    journal lines and another item's run (another process) there are no violation, while
    a change to the config next to them still is."""
    root = fan_repo(tmp_path / "repo", parallel=1)
    workflow = root / ".phasegate" / "workflows" / "fan.yaml"
    workflow.write_text(
        workflow.read_text().replace("items_dir: work/fan", "items_dir: .phasegate/fan")
    )
    repo = open_repo(root)
    repo.new("guarded", workflow="fan", description="guarded")
    repo.new("other", workflow="fan", description="another item")
    item = repo.item("guarded")
    item.load()
    other = Journal(root / ".phasegate" / "fan" / "other" / ".journal.jsonl")
    guard = guard_of(item)
    with guard.watching() as quiet:
        item.record("own.line")
        other.append("node.started", node="plan")
    assert quiet == []
    with guard.watching() as found:
        (root / ".phasegate" / "config.yaml").write_text("tampered: true\n")
    (violation,) = found
    assert violation.paths == (".phasegate/config.yaml",)
