"""The state file committed at every step holds only what may still change: finished nodes
and the label history go to the archive beside it, so a commit costs the same after 5
phases as after 200, and nothing of the item's state is lost on the way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import fresh_state, init_repo, loop_workflow, make_repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.engine.state import EngineState, read_state_file
from phasegate.engine.state_archive import ARCHIVE_FILE, append_archive
from phasegate.errors import StateCorruptError
from phasegate.redact import MASK, Redactor

SECRET = "sk-" + "proj-" + "Z9y8X7w6V5u4T3s2R1q0P9o8"


def _finish(state: EngineState, path: str, words: list[str]) -> None:
    node = state.node(path)
    node["started"] = "2026-01-01T00:00:00Z"
    for n, word in enumerate(words, start=1):
        node.iteration = n
        node.records("iterations").append({"iteration": n, "word": word, "issues": ["x"]})
    node["outcome"] = "pass"
    node["completed"] = "2026-01-01T00:01:00Z"


def _commit(state: EngineState, state_file: Path, redactor: Redactor) -> bytes:
    """What the engine's commit does with the state file and its archive."""
    plan = state.settle(redactor)
    size = state.archive_bytes
    if plan.payload:
        size = append_archive(state_file, size, plan.payload)
    state.settled(plan, size)
    payload = state.encode(redactor)
    state_file.write_bytes(payload)
    return payload


def _read(state_file: Path) -> dict[str, Any]:
    return read_state_file(state_file).to_dict()


def test_finished_nodes_and_history_leave_the_state_file_and_read_back_whole(
    tmp_path: Path,
) -> None:
    """After every kind of change (a node finished, a label change, a finished node visited
    again, a node forgotten, the history replaced) the state file and its archive read back
    as exactly the state in memory, and the state file holds only the live nodes."""
    redactor = Redactor([SECRET], use_environ=False)
    state_file = tmp_path / ".engine.json"
    state = fresh_state()

    def commit_and_compare() -> dict[str, Any]:
        on_disk = json.loads(_commit(state, state_file, redactor))
        assert _read(state_file) == json.loads(json.dumps(redactor.data(state.to_dict())))
        return on_disk

    commit_and_compare()
    _finish(state, "design", ["REJECTED", "APPROVED"])
    state.d.setdefault("history", []).append({"at": "t1", "from": "design", "to": "plan"})
    state.node("plan")["started"] = "t1"
    state["at"] = "plan"
    on_disk = commit_and_compare()
    assert sorted(on_disk["nodes"]) == ["design", "plan"]  # finished this step: still here
    assert on_disk["history"] == [{"at": "t1", "from": "design", "to": "plan"}]
    state.node("plan")["stage"] = "review:1"
    on_disk = commit_and_compare()
    assert sorted(on_disk["nodes"]) == ["plan"]  # not changed for a commit: archived
    assert "history" not in on_disk
    archive = (tmp_path / ARCHIVE_FILE).read_text()
    assert '"node": "design"' in archive and '"history":' in archive

    # A finished node visited again is live again, and archived anew once finished.
    state.node("design")["stage"] = "execute"
    state.node("design").d.pop("completed")
    on_disk = commit_and_compare()
    assert sorted(on_disk["nodes"]) == ["design", "plan"]
    _finish(state, "design", ["APPROVED"])
    state.node("design")["summary"] = f"token {SECRET}"
    commit_and_compare()
    state.node("plan")["stage"] = "review:2"
    on_disk = commit_and_compare()
    assert sorted(on_disk["nodes"]) == ["plan"]

    # Forgotten nodes stay forgotten: a line in the archive says so.
    _finish(state, "loop[T1]/work", ["APPROVED"])
    commit_and_compare()
    commit_and_compare()
    assert "loop[T1]/work" in _read(state_file)["nodes"]
    state.drop("loop[T1]")
    commit_and_compare()
    assert "loop[T1]/work" not in _read(state_file)["nodes"]

    # A replaced history (an adopted item) is archived again from its start.
    state["history"] = [{"at": "t9", "from": "a", "to": "b"}]
    commit_and_compare()
    commit_and_compare()
    assert _read(state_file)["history"] == [{"at": "t9", "from": "a", "to": "b"}]

    assert SECRET not in (tmp_path / ARCHIVE_FILE).read_text()
    assert MASK in (tmp_path / ARCHIVE_FILE).read_text()


def test_a_state_file_written_before_the_archive_reads_and_moves_its_finished_nodes_out(
    tmp_path: Path,
) -> None:
    """A state file with every node and the whole history in it (as phasegate wrote before
    the archive) reads as it is; its next commit moves what is finished to the archive."""
    redactor = Redactor(use_environ=False)
    old = fresh_state()
    _finish(old, "design", ["APPROVED"])
    old.node("plan")["started"] = "t"
    old["history"] = [{"at": "t", "from": "design", "to": "plan"}]
    state_file = tmp_path / ".engine.json"
    state_file.write_bytes(old.encode(redactor))  # no archive, all nodes in the file
    loaded = read_state_file(state_file)
    assert loaded.to_dict() == old.to_dict()
    loaded.node("plan")["stage"] = "review:1"
    on_disk = json.loads(_commit(loaded, state_file, redactor))
    assert sorted(on_disk["nodes"]) == ["plan"]
    assert _read(state_file)["nodes"]["design"] == old.to_dict()["nodes"]["design"]
    assert _read(state_file)["history"] == old["history"]


def test_archive_lines_after_the_state_files_count_are_ignored_and_cut_off(
    tmp_path: Path,
) -> None:
    """A process killed between appending to the archive and replacing the state file left
    lines the state file does not count: readers ignore them, the next commit cuts them
    off before appending, and nothing is counted twice."""
    redactor = Redactor(use_environ=False)
    state_file = tmp_path / ".engine.json"
    state = fresh_state()
    _finish(state, "design", ["APPROVED"])
    state.d.setdefault("history", []).append({"at": "t1", "from": "design", "to": "plan"})
    _commit(state, state_file, redactor)
    state.node("plan")["started"] = "t"
    _commit(state, state_file, redactor)
    expected = _read(state_file)
    with (tmp_path / ARCHIVE_FILE).open("a") as handle:
        handle.write('{"history": {"at": "t2", "from": "plan", "to": "tasks"}}\n')
        handle.write('{"node": "design", "dropped": true}\n{"node": "x", "st')  # torn too
    assert _read(state_file) == expected
    loaded = read_state_file(state_file)
    loaded.node("plan")["stage"] = "done"
    loaded.node("plan")["completed"] = "t3"
    _commit(loaded, state_file, redactor)
    _commit(loaded, state_file, redactor)  # plan archived: appended after the cut
    again = _read(state_file)
    assert again["history"] == expected["history"]
    assert again["nodes"]["design"] == expected["nodes"]["design"]
    assert again["nodes"]["plan"]["completed"] == "t3"
    assert "t2" not in (tmp_path / ARCHIVE_FILE).read_text()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda p: p.unlink(), "is missing"),
        (lambda p: p.write_bytes(p.read_bytes()[:-10]), "holds"),
        (lambda p: p.write_text(p.read_text().replace('"node"', '"nodx"', 1)), "line 1"),
        (lambda p: p.write_bytes(b"\xff" + p.read_bytes()[1:]), "line 1"),
    ],
)
def test_a_damaged_archive_is_a_corrupt_state_naming_the_archive(
    tmp_path: Path, damage: Any, message: str
) -> None:
    redactor = Redactor(use_environ=False)
    state_file = tmp_path / ".engine.json"
    state = fresh_state()
    _finish(state, "design", ["APPROVED"])
    _commit(state, state_file, redactor)
    state.node("plan")["started"] = "t"
    _commit(state, state_file, redactor)
    damage(tmp_path / ARCHIVE_FILE)
    with pytest.raises(StateCorruptError, match=message) as caught:
        read_state_file(state_file)
    assert ARCHIVE_FILE in str(caught.value)


def _run_loop(root: Path, phases: int, seen: list[tuple[int, int]] | None = None) -> Path:
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "loop").mkdir(parents=True)
    (folder / "prompts" / "loop" / "executor.md").write_text("Write {{ artifact_path }}.\n")
    (folder / "prompts" / "loop" / "reviewer.md").write_text("Review {{ phase }}.\n")
    (folder / "loop.yaml").write_text(loop_workflow(phases))
    repo = make_repo(root)
    repo.new("demo", workflow="loop", description="Add a greeting")
    item = repo.item("demo")

    def agent(request: AgentRequest) -> ScriptedReply:
        phase = request.labels["phase"]
        iteration = int(request.labels["iteration"])
        if seen is not None and request.role == "executor" and iteration == 1:
            state_file = item.item_dir / ".engine.json"
            finished = int(phase[1:]) - 1
            full = read_state_file(state_file).to_dict()
            words = [
                [r["word"] for r in full["nodes"][f"p{n}"]["iterations"]]
                for n in range(1, finished + 1)
            ]
            assert words == [["REJECTED", "APPROVED"]] * finished
            assert len(full.get("history") or []) == finished
            seen.append((finished, state_file.stat().st_size))
        if request.role == "executor":
            return ScriptedReply(write={f"{{item_dir}}/{phase}.md": f"# {phase} {iteration}\n"})
        approved = iteration >= 2
        issues = [] if approved else [{"severity": "blocker", "description": "more"}]
        summary = f"key {SECRET}"
        return ScriptedReply(
            structured={"approved": approved, "issues": issues, "summary": summary}
        )

    backend = ScriptedBackend(handler=agent)
    assert repo.run("demo", backends={"default": backend}).status == "completed"
    return item.item_dir


def test_the_state_file_stays_the_same_size_however_many_phases_are_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Committing every step, the state file read at each phase's first call holds the same
    few nodes whether 1 or 24 phases are done; the archive has the finished phases' review
    records and label changes, redacted."""
    monkeypatch.setenv("PHASEGATE_COALESCE_SECONDS", "0")
    seen: list[tuple[int, int]] = []
    item_dir = _run_loop(init_repo(tmp_path / "repo"), 25, seen)
    assert [done for done, _ in seen] == list(range(25))
    sizes = [size for done, size in seen if done >= 2]
    assert max(sizes) - min(sizes) < 200, seen
    archive = (item_dir / ARCHIVE_FILE).read_text()
    assert archive.count('"node": ') == 24 and archive.count('"history": ') == 24
    assert SECRET not in archive
    final = read_state_file(item_dir / ".engine.json").to_dict()
    assert {f"p{n}" for n in range(1, 26)} <= set(final["nodes"])
    assert all(len(final["nodes"][f"p{n}"]["iterations"]) == 2 for n in range(1, 26))


def test_status_of_an_item_reads_its_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``phasegate status NAME --json`` shows finished phases from the archive; with the
    archive cut short it fails with exit code 5 and a message naming the archive."""
    monkeypatch.setenv("PHASEGATE_COALESCE_SECONDS", "0")
    root = init_repo(tmp_path / "repo")
    item_dir = _run_loop(root, 3)

    def status() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "phasegate", "status", "demo", "--json"],
            cwd=root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )

    shown = status()
    assert shown.returncode == 0, shown.stderr
    phases = json.loads(shown.stdout)["phases"]
    assert [(p["name"], p["status"], p["iterations"]) for p in phases] == [
        (f"p{n}", "completed", 2) for n in (1, 2, 3)
    ]
    archive = item_dir / ARCHIVE_FILE
    archive.write_bytes(archive.read_bytes()[:20])
    broken = status()
    assert broken.returncode == 5
    assert str(archive) in broken.stderr and "holds 20 bytes" in broken.stderr
