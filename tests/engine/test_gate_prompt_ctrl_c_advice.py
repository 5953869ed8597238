"""Ctrl-C at a gate's terminal prompt: the run stops with exit 130, and its last line
names both ways on, as ``status`` does: the ``phasegate answer`` command that answers the
decision, or the same command again to be asked at the terminal."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from review_loop_helpers import DECISION, ITEM, make_repo, script, words

sys.path.insert(0, str(Path(__file__).parent.parent))
from pty_terminal import Terminal

PROMPT = "Answer (revise / implement / view / drop)"
PLAIN = {"TERM": "dumb", "NO_COLOR": "1"}


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_ctrl_c_at_a_gate_prompt_names_the_answer_command_and_running_again(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    terminal = Terminal(repo, "run", ITEM, env=PLAIN)
    terminal.wait_for(PROMPT)
    terminal.proc.send_signal(signal.SIGINT)
    shown = terminal.wait_for("to be asked")
    assert terminal.finish() == 130
    status = json.loads(cli(repo, "status", ITEM, "--json").stdout)
    answer = status["nextCommand"]
    assert answer.startswith(f"phasegate answer {ITEM} {DECISION} "), answer
    assert "nothing it started is left running; " in shown, shown
    assert f"decision {DECISION} of {ITEM} waits: answer it with: {answer}" in shown, shown
    assert "or run the same command again to be asked" in shown, shown
    assert "run the same command again to resume" not in shown, shown
