"""The item's folder deleted while its run waits at a gate's terminal prompt: the answer
stops the run with one line naming the folder and exit code 5 (never a traceback), and
nothing is made again in its place."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from review_loop_helpers import FOLDER, ITEM, make_repo, script, words

from phasegate.errors import ExitCode

sys.path.insert(0, str(Path(__file__).parent.parent))
from pty_terminal import Terminal

PROMPT = "Answer (revise / implement / view / drop)"
PLAIN = {"TERM": "dumb", "NO_COLOR": "1"}


def test_answering_a_gate_whose_item_folder_was_deleted_names_the_folder(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", script([words("REJECTED", "Wrong approach")]))
    terminal = Terminal(repo, "run", ITEM, env=PLAIN)
    terminal.wait_for(PROMPT)
    shutil.rmtree(repo / FOLDER)
    terminal.type("drop")
    shown = terminal.wait_for("go on)")
    assert terminal.finish() == ExitCode.STATE
    assert f"phasegate: error: folder {repo / FOLDER} was deleted while this run went on" in shown
    assert "internal error" not in shown and "Traceback" not in shown
    assert not (repo / FOLDER).exists()
