"""`run --phase` and `--until` take only phases: an end node, labelled or not, is refused
(exit 2) before anything runs, and the refusal lists only the phases there are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.errors import ExitCode
from review_loop_cli_helpers import ITEM, approving_agents, review_loop_repo, run_cli

PHASES = "(phases: planning, deciding, implementing)"


def engine_state(repo: Path) -> dict[str, object]:
    return json.loads((repo / "work" / ITEM / ".engine.json").read_text())


@pytest.mark.parametrize("flag", ["--phase", "--until"])
@pytest.mark.parametrize("end", ["done", "dropped"])
def test_an_end_node_is_not_a_phase_to_run(tmp_path: Path, flag: str, end: str) -> None:
    repo = review_loop_repo(tmp_path / "repo", approving_agents())
    before = engine_state(repo)
    ran = run_cli(repo, "run", ITEM, flag, end, "--yes")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stdout + ran.stderr
    lines = [line for line in ran.stderr.splitlines() if line.strip()]
    assert lines == [
        f"phasegate: error: {end!r} is an end of workflow 'review-loop', not a phase to run "
        f"{PHASES}"
    ]
    assert "complete" not in ran.stdout
    assert engine_state(repo) == before
    status = json.loads(run_cli(repo, "status", ITEM, "--json").stdout)
    assert status["status"] not in ("completed", "stopped")


def test_an_unknown_phase_lists_no_end_node(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo", approving_agents())
    ran = run_cli(repo, "run", ITEM, "--phase", "nope")
    assert ran.returncode == ExitCode.BAD_INPUT
    assert f"unknown phase 'nope' in workflow 'review-loop' {PHASES}" in ran.stderr
    assert "done" not in ran.stderr and "dropped" not in ran.stderr


def test_an_end_node_named_by_its_id_is_refused_too(tmp_path: Path) -> None:
    """A label shared by an end node and a phase names the phase; an end's id does not."""
    repo = review_loop_repo(tmp_path / "repo", approving_agents())
    workflow = repo / ".phasegate" / "workflows" / "review-loop.yaml"
    text = workflow.read_text()
    text = text.replace("    label: dropped\n", "    label: deciding\n")
    text = text.replace(
        "  dropped:\n    description: A person dropped the plan.\n"
        '    next: "nothing: the item was dropped"\n',
        "",
    )
    workflow.write_text(text)
    refused = run_cli(repo, "run", ITEM, "--phase", "dropped", "--yes")
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stdout + refused.stderr
    assert "'dropped' is an end of workflow 'review-loop', not a phase to run" in refused.stderr
    done = run_cli(repo, "run", ITEM, "--until", "planning")
    assert done.returncode == 0, done.stderr
