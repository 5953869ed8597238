"""The SessionStart hook leaves out items that ended other than completed (stopped at an
end such as review-loop's ``dropped``, or blocked at an end), as it leaves out completed
ones: ``phasegate status`` shows them ended with no next command, and ``phasegate run``
has nothing to run for them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
from review_loop_cli_helpers import ITEM, approving_agents, review_loop_repo, run_cli


def _hook(repo: Path) -> dict[str, object]:
    """The hook's answer, given its input on stdin as Claude Code gives it."""
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"})
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "hook", "session-start"],
        cwd=repo,
        input=payload,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _context(repo: Path) -> str:
    found = _hook(repo)
    output = found.get("hookSpecificOutput")
    return str(output["additionalContext"]) if isinstance(output, dict) else ""


def _dropped_item(tmp_path: Path, end_status: str) -> Path:
    """review-loop's item ``demo`` whose plan the critic rejected and the person dropped,
    the ``dropped`` end having ``end_status``; and a second item ``other`` not yet run."""
    repo = review_loop_repo(tmp_path / "repo", approving_agents(critic="REJECTED"))
    workflow = repo / ".phasegate" / "workflows" / "review-loop.yaml"
    text = workflow.read_text()
    assert "    status: stopped\n" in text
    workflow.write_text(text.replace("    status: stopped\n", f"    status: {end_status}\n"))
    waiting = run_cli(repo, "run", ITEM)
    assert waiting.returncode == 3, waiting.stderr
    assert run_cli(repo, "answer", ITEM, "plan-rejected", "drop").returncode == 0
    run_cli(repo, "run", ITEM)  # reaches the dropped end
    again = run_cli(repo, "run", ITEM)
    assert "nothing to run" in again.stdout + again.stderr, again
    return repo


def test_a_stopped_item_is_not_given_as_active(tmp_path: Path) -> None:
    repo = _dropped_item(tmp_path, "stopped")
    status = run_cli(repo, "status", ITEM, "--json")
    assert json.loads(status.stdout)["status"] == "stopped"
    # The only item ended: the hook adds nothing.
    assert _context(repo) == ""
    made = run_cli(repo, "new", "other", "--workflow", "review-loop")
    assert made.returncode == 0, made.stderr
    context = _context(repo)
    assert context.startswith("phasegate: 1 active work item in "), context
    assert "## other (workflow review-loop" in context
    assert ITEM not in context.replace(str(repo), ""), context
    assert f"phasegate run {ITEM}" not in context


def test_an_item_blocked_at_an_end_is_not_given_as_active(tmp_path: Path) -> None:
    repo = _dropped_item(tmp_path, "blocked")
    status = run_cli(repo, "status", ITEM, "--json")
    assert json.loads(status.stdout)["status"] == "blocked"
    assert _context(repo) == ""
