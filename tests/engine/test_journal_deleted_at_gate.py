"""The item's journal deleted alone while its run waits at a gate's terminal prompt: the
run puts it back with every line it held (the file is still open), says so in one warning
line, and goes on; the next run finds it whole (never reported as edited)."""

from __future__ import annotations

import sys
from pathlib import Path

from review_loop_helpers import FOLDER, ITEM, make_repo, script, words

from cli_process import run_cli

sys.path.insert(0, str(Path(__file__).parent.parent))
from pty_terminal import Terminal

PROMPT = "Answer (revise / implement / view / drop)"
PLAIN = {"TERM": "dumb", "NO_COLOR": "1"}


def test_a_journal_deleted_during_a_run_is_put_back_whole(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    terminal = Terminal(repo, "run", ITEM, env=PLAIN)
    terminal.wait_for(PROMPT)
    journal = repo / FOLDER / ".journal.jsonl"
    before = journal.read_bytes()
    journal.unlink()
    terminal.type("drop")
    shown = terminal.wait_for("was deleted while this run went on", timeout=60)
    shown += terminal.wait_for("\n", timeout=60)
    terminal.finish()
    assert "Traceback" not in shown and "internal error" not in shown
    assert "phasegate: warning: journal" in shown and "every line it held" in shown
    assert journal.read_bytes().startswith(before), "every line it held is kept"
    again = run_cli(repo, "run", ITEM)
    assert "edited" not in again.stderr and "journal" not in again.stderr, again.stderr
