"""A transition warning (``run --phase P`` past unfinished phases) waits only while that
start can still happen: a run that goes on otherwise withdraws it, a ``stop`` declines
one start only; a completed item refuses ``--phase``; a phase whose checks failed is
shown blocked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from soft_prerequisite_workflow import design_without_required_spec

from phasegate.errors import ExitCode

AGENTS = """\
executor:
  brainstorm: [{write: {"{item_dir}/brainstorm.md": "b"}, text: ok}]
  specify: [{write: {"{item_dir}/spec.md": "s"}, text: ok}]
  design: [{write: {"{item_dir}/design.md": "d"}, text: ok}]
  create-plan: [{write: {"{item_dir}/plan.md": "p"}, text: ok}]
  create-tasks: [{write: {"{item_dir}/tasks.md": "t"}, text: ok}]
  implement: [{write: {"code.py": "x=1"}, text: wrote code}]
  verify: [{write: {"{item_dir}/verification.md": "v"}, text: ok}]
"*":
  "*": [{verdict: {approved: true, summary: fine, issues: []}}]
"""


def phasegate(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def project(root: Path, *, test_command: str | None = None) -> Path:
    root.mkdir(parents=True)
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True
        )
    assert phasegate(root, "init").returncode == 0
    (root / ".phasegate" / "agents.yaml").write_text(AGENTS)
    if test_command is not None:
        config = root / ".phasegate" / "config.yaml"
        text = config.read_text().replace(
            "commands:\n  # test: python -m pytest -q", f"commands:\n  test: {test_command!r}"
        )
        config.write_text(text)
    return root


def new(repo: Path, name: str, mode: str = "hotfix") -> None:
    made = phasegate(repo, "new", name, "--workflow", "feature", "--mode", mode, "-d", "d")
    assert made.returncode == 0, made.stderr


def status(repo: Path, name: str) -> dict[str, object]:
    shown = phasegate(repo, "status", name, "--json")
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert isinstance(found, dict)
    return found


def journal(repo: Path, name: str) -> list[dict[str, object]]:
    lines = (repo / "docs" / "features" / name / ".journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_a_run_in_order_withdraws_the_warning(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    new(repo, "s")
    asked = phasegate(repo, "run", "s", "--phase", "design")
    assert asked.returncode == ExitCode.WAITING, asked.stderr
    assert status(repo, "s")["nextCommand"] == "phasegate answer s transition-warning proceed"

    ran = phasegate(repo, "run", "s", "--until", "design")
    assert ran.returncode == 0, ran.stderr
    after = status(repo, "s")
    assert after["pendingDecisions"] == []
    assert after["nextCommand"] == "phasegate run s"
    withdrawn = [e for e in journal(repo, "s") if e.get("event") == "decision.withdrawn"]
    assert [e["id"] for e in withdrawn] == ["transition-warning"]
    assert "no decision waits" in phasegate(repo, "decisions", "s").stdout
    late = phasegate(repo, "answer", "s", "transition-warning", "proceed")
    assert late.returncode == ExitCode.BAD_INPUT
    # Said as it is: the decision was withdrawn, not never asked.
    assert "transition-warning of s came too late" in late.stderr
    assert "a run withdrew it (the run went on from" in late.stderr

    # A later warning is a new question (its own visit), asked and answered as usual.
    again = phasegate(repo, "run", "s", "--phase", "implement")
    assert again.returncode == ExitCode.WAITING, again.stderr
    needed = [e for e in journal(repo, "s") if e.get("event") == "decision.needed"]
    assert [e["visit"] for e in needed] == [1, 2]
    assert phasegate(repo, "answer", "s", "transition-warning", "proceed").returncode == 0
    assert status(repo, "s")["nextCommand"] == "phasegate run s --phase implement"


def test_an_answer_waiting_for_another_phase_is_withdrawn(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    new(repo, "p")
    assert phasegate(repo, "run", "p", "--phase", "design").returncode == ExitCode.WAITING
    assert phasegate(repo, "answer", "p", "transition-warning", "proceed").returncode == 0
    ran = phasegate(repo, "run", "p", "--phase", "brainstorm")
    assert ran.returncode == 0, ran.stderr
    after = status(repo, "p")
    assert after["nextCommand"] == "phasegate run p"
    assert "--phase design" not in (phasegate(repo, "status", "p").stdout)


def test_stop_declines_one_start(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    new(repo, "st2")
    assert phasegate(repo, "run", "st2", "--phase", "design").returncode == ExitCode.WAITING
    answered = phasegate(repo, "answer", "st2", "transition-warning", "stop")
    assert answered.returncode == 0, answered.stderr
    assert "Next: phasegate run st2\n" in answered.stdout
    assert status(repo, "st2")["nextCommand"] == "phasegate run st2"

    # Asked again, with a pending decision to answer.
    again = phasegate(repo, "run", "st2", "--phase", "design")
    assert again.returncode == ExitCode.WAITING
    assert "confirm by running again with --yes" in again.stderr
    assert "declined" not in again.stderr
    assert "transition-warning" in phasegate(repo, "decisions", "st2").stdout

    # Declined at the run itself: said, not a wait.
    declined = phasegate(
        repo, "run", "st2", "--phase", "design", "--answer", "transition-warning=stop"
    )
    assert declined.returncode == 0, declined.stderr
    assert "not starting design: declined. Next: phasegate run st2" in declined.stdout
    assert status(repo, "st2")["pendingDecisions"] == []

    confirmed = phasegate(repo, "run", "st2", "--phase", "design", "--yes")
    assert confirmed.returncode == 0, confirmed.stderr
    phases = {p["name"]: p["status"] for p in status(repo, "st2")["phases"]}  # type: ignore[attr-defined]
    assert phases["design"] == "completed"


def test_phase_of_a_completed_item_is_refused(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    new(repo, "done")
    assert phasegate(repo, "run", "done").returncode == 0
    before = (repo / "docs" / "features" / "done" / ".engine.json").read_text()
    ran = phasegate(repo, "run", "done", "--phase", "verify", "--yes")
    assert ran.returncode == ExitCode.BAD_INPUT
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "--phase verify: done is already complete" in lines[0]
    assert (repo / "docs" / "features" / "done" / ".engine.json").read_text() == before


def test_status_says_a_phase_is_blocked_by_its_checks(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo", test_command="exit 1")
    new(repo, "c", mode="quick")
    assert phasegate(repo, "run", "c").returncode == ExitCode.BLOCKED
    shown = phasegate(repo, "status", "c").stdout
    assert "Phase: implement, blocked (checks failed)" in shown
    assert "next: implement" not in shown
    assert "Blocked: c: implement ended checks-failed" in shown


def test_a_warning_met_in_order_keeps_its_answer(tmp_path: Path) -> None:
    """A warning a plain run met at the next phase (a soft prerequisite missing) is not
    withdrawn by the run that goes on from there: the answer given meanwhile is taken."""
    repo = project(tmp_path / "repo")
    design_without_required_spec(repo)  # else the spec.md deleted below blocks design
    new(repo, "w")
    assert phasegate(repo, "run", "w", "--until", "specify").returncode == 0
    (repo / "docs" / "features" / "w" / "spec.md").unlink()
    asked = phasegate(repo, "run", "w", "--until", "design")
    assert asked.returncode == ExitCode.WAITING, asked.stderr
    answered = phasegate(repo, "answer", "w", "transition-warning", "proceed")
    assert answered.returncode == 0, answered.stderr
    ran = phasegate(repo, "run", "w", "--until", "design")
    assert ran.returncode == 0, ran.stderr
    phases = {p["name"]: p["status"] for p in status(repo, "w")["phases"]}  # type: ignore[attr-defined]
    assert phases["design"] == "completed"
    assert not [e for e in journal(repo, "w") if e.get("event") == "decision.withdrawn"]
