"""An agent that replaces its item's journal with a symbolic link to a file outside the
repository (say ``~/.bashrc``) while another item of a parallel loop goes on: phasegate
never appends its lines through the link. The outside file is left as it was, the run
stops (the next line is refused, naming the journal; the call that swapped it is a
violation and the journal is put back), and nothing already recorded is lost."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "cli"))
from test_status_parallel_loop_faults import _repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
from phasegate.errors import PhasegateError


def test_no_line_goes_through_a_journal_swapped_for_a_link(tmp_path: Path) -> None:
    root = _repo(tmp_path, {})
    outside = tmp_path / "bashrc"
    outside.write_text("# the user's shell start-up\n")
    repo = Repo(root)
    repo.new("f1", workflow="fan", description="x")
    journal = root / "work/fan/f1/.journal.jsonl"
    kept = tmp_path / "journal-moved-aside"

    def handler(request: AgentRequest) -> ScriptedReply:
        if request.workdir.name.endswith("--T1"):  # T1's worktree
            journal.rename(kept)
            journal.symlink_to(outside)
            time.sleep(1.5)  # T2's call ends meanwhile: its lines are journaled
        else:
            time.sleep(0.3)
        return ScriptedReply(write={"src/x.py": "x\n"})

    planner = ScriptedBackend(
        handler=lambda request: ScriptedReply(
            write={"{item_dir}/tasks.md": "# Tasks\n\n- [ ] T1: one\n- [ ] T2: two\n"}
        )
    )
    coder = ScriptedBackend(handler=handler)
    # T2's next line is refused (the journal is a link: exit 5), and T1's call, which
    # swapped it, is a violation whose journal is put back: the run stops either way.
    with pytest.raises(PhasegateError, match=r"symbolic link|phasegate's own files"):
        repo.run("f1", backends={"planner": planner, "coder": coder})
    assert outside.read_text() == "# the user's shell start-up\n"
    assert not journal.is_symlink()  # put back
    recorded = journal.read_text()
    assert '"item.created"' in recorded and '"foreach.items"' in recorded
