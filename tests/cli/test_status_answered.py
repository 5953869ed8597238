"""After `phasegate answer`, before a run acts on the answer, `status` (and the item list)
says the decision is answered and the next run acts on it, not that it waits on one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

WORKFLOW = """\
name: think
modes: {standard: {max_iterations: 1}}
roles: {w: {access: write}}
nodes:
  - {id: t, label: thinking, executor: w, prompt: t.md, on: {pass: q}}
  - id: q
    kind: gate
    label: thinking
    question: go on?
    choices: {go: fin, stop: "@blocked"}
  - {id: fin, kind: end}
"""


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_status_after_an_answer_says_the_next_run_acts_on_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    assert phasegate(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / "think"
    prompts.mkdir(parents=True)
    (prompts / "t.md").write_text("think about {{ item }}\n")
    (repo / ".phasegate" / "workflows" / "think.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text('w: {"*": [{text: ok}]}\n')
    assert phasegate(repo, "new", "l1", "--workflow", "think").returncode == 0
    assert phasegate(repo, "run", "l1").returncode == 3
    waiting = phasegate(repo, "status", "l1").stdout
    assert "Phase: thinking, waiting on a decision" in waiting, waiting

    assert phasegate(repo, "answer", "l1", "q", "go").returncode == 0
    shown = phasegate(repo, "status", "l1").stdout
    assert "waiting on a decision" not in shown, shown
    assert "Phase: thinking, decision q answered (go); the next run acts on it" in shown, shown
    assert "Next: phasegate run l1" in shown
    listed = phasegate(repo, "status").stdout
    assert "(decision)" not in listed and "thinking (answered)" in listed, listed

    started = subprocess.run(
        [sys.executable, "-m", "phasegate", "hook", "session-start"],
        cwd=repo,
        input=json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "waiting on a decision" not in context, context
    assert "- Phase: thinking, decision q answered (go); the next run acts on it" in context

    ran = phasegate(repo, "run", "l1")
    assert ran.returncode == 0, ran.stderr
    assert "completed" in phasegate(repo, "status", "l1").stdout
