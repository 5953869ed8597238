"""``phasegate run`` keeps the workflow's rules, end to end: a subprocess with stdin closed
(or a real terminal where a person is asked), real git, scripted agents from a YAML script."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo
from soft_prerequisite_workflow import design_without_required_spec

from phasegate.errors import ExitCode

ITEM = Path("docs/features/x")
FAILING_TEST = "sh -c 'echo FAILED_TEST_XYZ in test_app.py; exit 1'"


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a script runs it: no terminal, stdin closed."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def setup(root: Path, script: dict[str, Any], test_command: str = "true") -> Path:
    repo = init_repo(root)
    assert phasegate(repo, "init", "--test-command", test_command).returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(script, handle)
    assert phasegate(repo, "new", "x", "--mode", "quick").returncode == 0
    return repo


def events(repo: Path, name: str | None = None) -> list[dict[str, Any]]:
    lines = (repo / ITEM / ".journal.jsonl").read_text().splitlines()
    found = [json.loads(line) for line in lines]
    return [e for e in found if name is None or e["event"] == name]


def status(repo: Path) -> dict[str, Any]:
    result = phasegate(repo, "status", "x", "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


# -- checks really gate ------------------------------------------------------------------


def test_a_test_command_that_always_fails_never_completes_the_item(tmp_path: Path) -> None:
    """Checks gate: with a test command that always fails, the run stops blocked (exit 4) with
    the failing output shown, implement is not completed, and no later phase runs; running
    again does not complete it either."""
    repo = setup(tmp_path / "repo", approving_script(), FAILING_TEST)
    ran = phasegate(repo, "run", "x")
    assert ran.returncode == ExitCode.BLOCKED, ran.stderr
    assert "implement ended checks-failed" in ran.stderr
    assert "FAILED_TEST_XYZ in test_app.py" in ran.stderr
    assert "✔ implement complete" not in ran.stderr
    data = status(repo)
    assert data["status"] != "completed"
    phases = {p["name"]: p for p in data["phases"]}
    assert phases["implement"]["status"] == "in-progress"
    assert phases["verify"]["status"] == "pending"
    meta = json.loads((repo / ITEM / ".meta.json").read_text())
    assert meta["phases"]["implement"]["completed"] is None
    assert meta["phases"]["implement"]["verified"] is False
    assert not [e for e in events(repo, "agent.dispatched") if e["phase"] == "verify"]
    again = phasegate(repo, "run", "x")
    assert again.returncode == ExitCode.BLOCKED
    assert status(repo)["status"] != "completed"


def test_a_workflow_may_map_failing_checks_to_another_node(tmp_path: Path) -> None:
    """Checks gate unless the workflow maps checks-failed elsewhere: then the item goes there."""
    repo = init_repo(tmp_path / "repo")
    workflows = repo / ".phasegate" / "workflows"
    (workflows / "prompts" / "gated").mkdir(parents=True)
    (workflows / "prompts" / "gated" / "build.md").write_text("Build {{ item }}.\n")
    (workflows / "prompts" / "gated" / "note.md").write_text("Note why {{ item }} failed.\n")
    (workflows / "gated.yaml").write_text(
        "name: gated\n"
        "default_mode: one\n"
        "modes: {one: {max_iterations: 1}}\n"
        "roles: {executor: {access: write}}\n"
        "nodes:\n"
        "  - id: build\n"
        "    executor: executor\n"
        "    checks: [test]\n"
        "    on: {checks-failed: note}\n"
        "  - id: done\n"
        "    kind: end\n"
        "  - id: note\n"
        "    executor: executor\n"
        "  - id: noted\n"
        "    kind: end\n"
        "    status: stopped\n"
        "    message: the build failed its checks\n"
    )
    assert phasegate(repo, "init", "--test-command", FAILING_TEST).returncode == 0
    script = {"executor": {"*": [{"write": {"app.py": "ok = False\n"}}]}}
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(script, handle)
    assert phasegate(repo, "validate", str(workflows / "gated.yaml")).returncode == 0
    assert phasegate(repo, "new", "x", "--workflow", "gated").returncode == 0
    ran = phasegate(repo, "run", "x")
    assert ran.returncode == 0, ran.stderr
    journal = repo / "docs" / "x" / ".journal.jsonl"
    if not journal.exists():
        journal = next(repo.rglob("x/.journal.jsonl"))
    names = [json.loads(line) for line in journal.read_text().splitlines()]
    moves = [(e["node"], e["outcome"]) for e in names if e["event"] == "node.transition"]
    assert ("build", "checks-failed") in moves
    assert [e["phase"] for e in names if e["event"] == "agent.dispatched"] == ["build", "note"]


# -- run --until P when P is complete ---------------------------------------------------------


def test_until_a_phase_already_complete_stops_at_once_with_nothing_dispatched(
    tmp_path: Path,
) -> None:
    """run --until P when P is complete: nothing runs, nothing is dispatched, the journal and
    the state are left as they were, and the review history is kept."""
    repo = setup(tmp_path / "repo", approving_script())
    assert phasegate(repo, "run", "x", "--until", "design").returncode == 0
    files = [ITEM / ".journal.jsonl", ITEM / ".meta.json", ITEM / ".engine.json"]
    files.append(ITEM / ".engine-archive.jsonl")  # if the run archived anything

    def contents() -> dict[Path, bytes | None]:
        return {f: (repo / f).read_bytes() if (repo / f).exists() else None for f in files}

    before = contents()
    for phase in ("design", "specify", "brainstorm"):
        again = phasegate(repo, "run", "x", "--until", phase)
        assert again.returncode == 0, again.stderr
        assert f"{phase} is already complete; nothing to run" in again.stdout
    assert contents() == before
    assert (repo / ITEM / ".review-history.md").is_file()


def test_an_unknown_phase_is_refused_on_a_completed_item_too(tmp_path: Path) -> None:
    """--phase and --until name a phase of the workflow whatever state the item is in."""
    repo = setup(tmp_path / "repo", approving_script())
    assert phasegate(repo, "run", "x").returncode == 0
    assert status(repo)["status"] == "completed"
    for flag in ("--phase", "--until"):
        ran = phasegate(repo, "run", "x", flag, "nope")
        assert ran.returncode == ExitCode.BAD_INPUT, ran.stdout
        assert "unknown phase 'nope' in workflow 'feature'" in ran.stderr
    again = phasegate(repo, "run", "x", "--until", "design")
    assert again.returncode == 0, again.stderr


# -- transition warnings are confirmed -----------------------------------------------------


def spec_deleted_after_specify(root: Path) -> Path:
    repo = setup(root, approving_script())
    design_without_required_spec(repo)
    assert phasegate(repo, "run", "x", "--until", "specify").returncode == 0
    (repo / ITEM / "spec.md").unlink()
    return repo


def test_a_plain_run_stops_at_a_transition_warning_without_a_terminal(tmp_path: Path) -> None:
    """A plain run meeting a transition warning (spec.md missing before design) and no
    terminal: exit 3 naming --yes, and design is not started."""
    repo = spec_deleted_after_specify(tmp_path / "repo")
    ran = phasegate(repo, "run", "x")
    assert ran.returncode == ExitCode.WAITING, ran.stderr
    assert "spec.md missing (soft prerequisite)" in ran.stderr
    assert "phasegate run x --yes" in ran.stderr
    assert not [e for e in events(repo, "agent.dispatched") if e["phase"] != "brainstorm"][2:]
    assert status(repo)["phases"][2]["status"] == "pending"


def test_yes_confirms_a_transition_warning(tmp_path: Path) -> None:
    """--yes answers the transition warning: design starts."""
    repo = spec_deleted_after_specify(tmp_path / "repo")
    ran = phasegate(repo, "run", "x", "--yes", "--until", "design")
    assert ran.returncode == 0, ran.stderr
    (decision,) = [e for e in events(repo, "decision") if e["id"] == "transition-warning"]
    assert (decision["answer"], decision["by"]) == ("proceed", "flag")
    assert status(repo)["phases"][2]["status"] == "completed"


def test_a_transition_warning_answered_by_command_is_taken_by_the_next_run(
    tmp_path: Path,
) -> None:
    """`phasegate answer ITEM transition-warning proceed`, then the command it prints: the
    run takes the answer (no second question), and the warning met again later is a new
    question."""
    repo = setup(tmp_path / "repo", approving_script())
    asked = phasegate(repo, "run", "x", "--phase", "design")
    assert asked.returncode == ExitCode.WAITING, asked.stderr
    answered = phasegate(repo, "answer", "x", "transition-warning", "proceed")
    assert answered.returncode == 0, answered.stderr
    assert "Next: phasegate run x --phase design" in answered.stdout
    assert status(repo)["nextCommand"] == "phasegate run x --phase design"
    ran = phasegate(repo, "run", "x", "--phase", "design")
    assert ran.returncode == 0, ran.stderr
    assert [e["visit"] for e in events(repo, "decision.needed")] == [1]
    assert status(repo)["phases"][2]["status"] == "completed"
    assert status(repo)["nextCommand"] == "phasegate run x"
    again = phasegate(repo, "run", "x", "--phase", "specify")
    assert again.returncode == ExitCode.WAITING, again.stderr
    assert [e["visit"] for e in events(repo, "decision.needed")] == [1, 2]


def in_a_terminal(repo: Path, args: list[str], answer: str, prompt: str) -> tuple[int, str]:
    """Run phasegate on a pseudo-terminal; type ``answer`` once ``prompt`` is shown."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "dumb", "COLUMNS": "200", "NO_COLOR": "1"},
    )
    os.close(follower)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the command closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        if not answered and prompt.encode() in seen:
            os.write(leader, answer.encode() + b"\r")
            answered = True
        if proc.poll() is not None and not ready:
            break
    code = proc.wait(timeout=30)
    os.close(leader)
    return code, seen.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("answer", "code", "design"), [("stop", 3, "pending"), ("proceed", 0, "completed")]
)
def test_a_plain_run_asks_at_a_terminal_before_a_warned_transition(
    tmp_path: Path, answer: str, code: int, design: str
) -> None:
    """At a terminal a plain run asks whether to start the warned phase, and obeys."""
    repo = spec_deleted_after_specify(tmp_path / "repo")
    got, shown = in_a_terminal(
        repo, ["run", "x", "--until", "design"], answer, "Start design anyway?"
    )
    assert "Warning: spec.md missing (soft prerequisite). Start design anyway?" in shown
    assert got == code, shown
    assert status(repo)["phases"][2]["status"] == design
    (decision,) = [e for e in events(repo, "decision") if e["id"] == "transition-warning"]
    assert (decision["answer"], decision["by"]) == (answer, "prompt")


# -- feedback reaches the executor and the reviewers --------------------------------------------


def test_a_rejection_with_only_a_summary_is_the_feedback_and_the_concern(tmp_path: Path) -> None:
    """A rejection naming no issue: its summary goes back to the executor and stays as the
    phase's reviewerNotes when the budget is spent; the next reviewer is shown it."""
    script = approving_script()
    summary_only = {"approved": False, "issues": [], "summary": "The problem statement is vague"}
    script["chain-reviewer"] = {"brainstorm": [{"verdict": summary_only}]}
    repo = setup(tmp_path / "repo", script)
    assert phasegate(repo, "run", "x", "--until", "brainstorm").returncode == 0
    meta = json.loads((repo / ITEM / ".meta.json").read_text())
    notes = meta["phases"]["brainstorm"]["reviewerNotes"]
    assert notes and "The problem statement is vague" in notes[0]
    verdicts = events(repo, "review.verdict")
    assert [v["issues"][0]["description"] for v in verdicts] == [
        "The problem statement is vague"
    ] * 2
    history = (repo / ITEM / ".review-history.md").read_text()
    assert history.count("The problem statement is vague") >= 2
