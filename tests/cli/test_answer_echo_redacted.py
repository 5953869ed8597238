"""`phasegate answer` says what it recorded with secrets masked, as the state holds it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
from review_loop_cli_helpers import ITEM, approving_agents, review_loop_repo, run_cli

# Built by concatenation so the test file itself holds no token-shaped literal.
TOKEN = "sk-" + "ant-api03-" + "abcdefghijklmnopqrstuvwxyz0123456789"
SECRET = "MYSECRETVALUE123"
ENV = {"MY_API_KEY": SECRET}


def test_the_answer_echo_masks_secrets_in_the_note(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo", approving_agents(critic="REJECTED"))
    waiting = run_cli(repo, "run", ITEM, env=ENV)
    assert waiting.returncode == 3, waiting.stderr
    note = f"revise: rotate token {TOKEN} and {SECRET} [bold]now[/bold]"
    answered = run_cli(repo, "answer", ITEM, "plan-rejected", note, env=ENV)
    assert answered.returncode == 0, answered.stderr
    said = answered.stdout + answered.stderr
    assert TOKEN not in said and SECRET not in said
    assert (
        f"{ITEM}: plan-rejected answered revise (rotate token [REDACTED] and [REDACTED] "
        "[bold]now[/bold])." in said
    )
    recorded = (repo / "work" / ITEM / ".engine.json").read_text()
    assert TOKEN not in recorded and SECRET not in recorded
