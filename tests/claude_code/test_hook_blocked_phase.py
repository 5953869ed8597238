"""The SessionStart hook says of a phase blocked by its failed checks what ``phasegate
status`` says: the phase is blocked (checks failed), not that it is the next phase."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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


def phasegate(repo: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def project(root: Path, test_command: str) -> Path:
    root.mkdir(parents=True)
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True
        )
    assert phasegate(root, "init").returncode == 0
    (root / ".phasegate" / "agents.yaml").write_text(AGENTS)
    config = root / ".phasegate" / "config.yaml"
    text = config.read_text()
    example = "commands:\n  # test: python -m pytest -q"
    assert example in text
    config.write_text(text.replace(example, f"commands:\n  test: {test_command!r}"))
    return root


def context(repo: Path) -> list[str]:
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"})
    hooked = phasegate(repo, "hook", "session-start", stdin=payload)
    assert hooked.returncode == 0, hooked.stderr
    text = json.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text.splitlines()


def status_lines(repo: Path, name: str) -> list[str]:
    shown = phasegate(repo, "status", name)
    assert shown.returncode == 0, shown.stderr
    return [line.strip() for line in shown.stdout.splitlines()]


def test_a_phase_blocked_by_failed_checks_is_said_blocked_as_status_says(
    tmp_path: Path,
) -> None:
    repo = project(tmp_path / "repo", "exit 1")
    made = phasegate(repo, "new", "c", "--workflow", "feature", "--mode", "quick", "-d", "d")
    assert made.returncode == 0, made.stderr
    assert phasegate(repo, "run", "c").returncode == ExitCode.BLOCKED

    status = status_lines(repo, "c")
    phase = next(line for line in status if line.startswith("Phase:"))
    blocked = next(line for line in status if line.startswith("Blocked:"))
    advice = next(line for line in status if line.startswith("Next:"))
    assert phase == "Phase: implement, blocked (checks failed)"

    lines = context(repo)
    assert f"- {phase}" in lines
    assert not [line for line in lines if "next phase" in line]
    assert f"- {blocked}" in lines
    assert f"- Next command: {advice.removeprefix('Next: ')}" in lines
    assert "- Next command: fix the block, then: phasegate run c" in lines


def test_a_phase_blocked_by_a_missing_hard_prerequisite_is_said_blocked_as_status_says(
    tmp_path: Path,
) -> None:
    repo = project(tmp_path / "repo", "true")
    made = phasegate(repo, "new", "h", "--workflow", "feature", "--mode", "quick", "-d", "d")
    assert made.returncode == 0, made.stderr
    assert phasegate(repo, "run", "h", "--until", "create-tasks").returncode == 0
    (repo / "docs" / "features" / "h" / "spec.md").unlink()

    status = status_lines(repo, "h")
    phase = next(line for line in status if line.startswith("Phase:"))
    advice = next(line for line in status if line.startswith("Next:"))
    assert phase == "Phase: create-tasks, blocked"

    lines = context(repo)
    assert f"- {phase}" in lines
    assert f"- Next command: {advice.removeprefix('Next: ')}" in lines
    assert any(line.startswith("- Blocked: cannot start implement: spec.md") for line in lines)
