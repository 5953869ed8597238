"""`status` shows no review iteration for a step whose reviewer was skipped (--no-review):
its iterations column reads `-`, not 1 (no reviewer looked at the work); the SessionStart
hook counts no review iteration for it either."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

WORKFLOW = """\
name: think
modes: {standard: {max_iterations: 2}}
roles: {w: {access: write}, rv: {access: read-only}}
nodes:
  - id: t
    label: thinking
    executor: w
    prompt: t.md
    reviewers:
      - {role: rv, reader: words, on: {APPROVED: pass, NEEDS_REVISION: revise, UNCLEAR: revise}}
    on: {pass: q}
  - {id: q, kind: gate, label: thinking, question: go on?, choices: {go: fin, stop: "@blocked"}}
  - {id: fin, kind: end}
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
    )


def ran_without_review(tmp_path: Path) -> Path:
    """An item whose reviewed step ran with --no-review; it waits at a gate after it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert phasegate(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "think"
    prompts.mkdir(parents=True)
    (prompts / "t.md").write_text("think about {{ item }}\n")
    (prompts / "rv.md").write_text("review {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "think.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    assert phasegate(repo, "new", "l1", "--workflow", "think").returncode == 0
    assert phasegate(repo, "run", "l1", "--no-review").returncode == 3  # at the gate
    return repo


def test_status_shows_no_iteration_count_for_a_skipped_review(tmp_path: Path) -> None:
    repo = ran_without_review(tmp_path)
    shown = phasegate(repo, "status", "l1").stdout
    row = next(line for line in shown.splitlines() if "thinking t" in line)
    assert row.split()[1:5] == ["thinking", "t", "-", "skipped"], shown


def test_the_session_hook_counts_no_review_iteration_for_a_skipped_review(
    tmp_path: Path,
) -> None:
    repo = ran_without_review(tmp_path)
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"})
    result = phasegate(repo, "hook", "session-start", stdin=payload)
    assert result.returncode == 0, result.stderr
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- Review iterations so far: 0" in context, context
