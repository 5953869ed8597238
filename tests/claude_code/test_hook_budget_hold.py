"""The SessionStart hook says what ``phasegate status NAME`` says of a node whose next
call a budget cap holds (no run goes on: it waits on the budget decision), not that the
node is ``in progress``; and after ``answer ... stop`` that the cap stopped it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, approving_script, init_repo, phasegate, write_script

from phasegate.integrations.claude_code.hook import session_context


def _phase_lines(repo: Path) -> tuple[str, str]:
    shown = phasegate(repo, "status", ITEM, env={"COLUMNS": "300"})
    assert shown.returncode == 0, shown.stderr
    (said,) = [line.strip() for line in shown.stdout.splitlines() if "Phase:" in line]
    context = session_context({"cwd": str(repo)}, environ={})
    (hook,) = [line for line in context.splitlines() if line.startswith("- Phase:")]
    return said, hook


def test_the_hook_says_a_budget_cap_holds_the_next_call(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    write_script(repo, approving_script())
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\nbudget:\n  item: {tokens: 100}\n")
    created = phasegate(repo, "new", ITEM, "--mode", "standard", "--description", "A limiter")
    assert created.returncode == 0, created.stderr
    held = phasegate(repo, "run", ITEM)
    assert held.returncode == 3, held.stderr

    said, hook = _phase_lines(repo)
    assert "the budget cap item.tokens holds its next call" in said, said
    assert hook == f"- {said}"
    assert "in progress" not in hook

    answered = phasegate(repo, "answer", ITEM, "budget", "stop")
    assert answered.returncode == 0, answered.stderr
    said, hook = _phase_lines(repo)
    assert "stopped by the budget cap item.tokens (answered stop" in said, said
    assert hook == f"- {said}"
