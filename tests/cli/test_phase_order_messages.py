"""``.review-history.md`` lists its sections in the order the phases ran (fast phases start
within one second), also after a crash and a resume; the transition warning calls a phase
"in progress" only when it started."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

from phasegate.errors import ExitCode
from phasegate.workflow.registry import WorkflowRegistry
from phasegate.workflow.transitions import validate_transition

ITEM = Path("docs/features/x")
KILLED = -9


def phasegate(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def scripted(root: Path) -> Path:
    repo = init_repo(root)
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(repo, "new", "x", "-d", "x").returncode == 0
    return repo


def sections(repo: Path) -> list[str]:
    text = (repo / ITEM / ".review-history.md").read_text()
    return re.findall(r"^## Phase: (.+)$", text, re.MULTILINE)


def test_review_history_sections_follow_the_run(tmp_path: Path) -> None:
    repo = scripted(tmp_path / "repo")
    ran = phasegate(repo, "run", "x", "--until", "design")
    assert ran.returncode == 0, ran.stderr
    assert sections(repo) == ["brainstorm", "specify", "design"]


@pytest.mark.parametrize("point", ["dispatch.after_call", "state.after_commit"])
def test_review_history_order_survives_kill_and_resume(tmp_path: Path, point: str) -> None:
    """Killed (SIGKILL) again and again and run again until done: the same order."""
    repo = scripted(tmp_path / "repo")
    crashes = 0
    while True:
        ran = phasegate(
            repo,
            "run",
            "x",
            "--until",
            "design",
            env={"PHASEGATE_CRASH_AT": f"{point}@{2 + crashes % 3}"},
        )
        if ran.returncode == 0:
            break
        assert ran.returncode == KILLED, ran.stderr
        crashes += 1
        assert crashes < 40, "no progress between crashes"
        if (repo / ITEM / ".review-history.md").exists():
            found = sections(repo)
            assert found == ["brainstorm", "specify", "design"][: len(found)]
    assert crashes >= 1
    assert sections(repo) == ["brainstorm", "specify", "design"]


def test_a_phase_never_started_is_not_called_in_progress(tmp_path: Path) -> None:
    """After ``--phase design`` the next phase (create-plan) is entered but never started:
    going back to brainstorm warns without saying create-plan is in progress."""
    repo = scripted(tmp_path / "repo")
    jumped = phasegate(repo, "run", "x", "--phase", "design", "--yes")
    assert jumped.returncode == 0, jumped.stderr
    back = phasegate(repo, "run", "x", "--phase", "brainstorm")
    assert back.returncode == ExitCode.WAITING, back.stderr
    assert "in progress" not in back.stderr
    assert "left incomplete" not in back.stderr
    assert "create-plan is the next phase, not brainstorm" in back.stderr


def test_a_phase_a_killed_run_started_is_called_in_progress(tmp_path: Path) -> None:
    """After ``--phase design``, a run killed during create-plan's first call left it
    started: going back to brainstorm warns that create-plan is in progress."""
    repo = scripted(tmp_path / "repo")
    jumped = phasegate(repo, "run", "x", "--phase", "design", "--yes")
    assert jumped.returncode == 0, jumped.stderr
    killed = phasegate(repo, "run", "x", env={"PHASEGATE_CRASH_AT": "dispatch.before_call@1"})
    assert killed.returncode == KILLED, killed.stderr
    back = phasegate(repo, "run", "x", "--phase", "brainstorm")
    assert back.returncode == ExitCode.WAITING, back.stderr
    assert "create-plan is in progress and will be left incomplete" in back.stderr


def test_validate_transition_says_in_progress_only_for_a_started_phase() -> None:
    workflow = WorkflowRegistry(None).get("feature").workflow
    files = {"spec.md": True, "design.md": True}
    started = validate_transition(
        workflow, "create-plan", "brainstorm", files, completed=["design"], started=["create-plan"]
    )
    assert started.message == "create-plan is in progress and will be left incomplete"
    waiting = validate_transition(
        workflow, "create-plan", "brainstorm", files, completed=["design"], started=["design"]
    )
    assert waiting.type == "warning"
    assert (
        waiting.message
        == "create-plan is the next phase, not brainstorm (create-plan has not started)"
    )
    unknown = validate_transition(
        workflow, "create-plan", "brainstorm", files, completed=["design"]
    )
    assert unknown.message is not None and "in progress" not in unknown.message
