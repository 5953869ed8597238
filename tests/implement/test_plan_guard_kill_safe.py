"""PLAN.md as an executor found it is on disk with the guard's record while its call runs:
a developer that ticks another task's box and then kills phasegate (SIGKILL) has the plan
put back by the next run (the tick is not taken for a person's), and a run stopped for a
violation (``protection: {on_violation: stop}``) puts the plan back before it stops."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from implement_helpers import PLAN, Team, journal, key, make_repo, new_item, run

from phasegate.api import Repo
from phasegate.engine.protect import ProtectedFilesChanged

PLAN_TEXT = """# Plan

## Phase 1: Core
**Execution: Sequential**

- [ ] **Create module a** [`agent: the-developer`]
- [ ] **Create module b** [`agent: the-developer`]
- [ ] **Create module c** [`agent: the-developer`]
"""
TICKED_B = PLAN_TEXT.replace("- [ ] **Create module b**", "- [x] **Create module b**")
A, B, C = (key(f"Create module {n}") for n in "abc")
CONFIG: dict[str, Any] = {"commands": {"test": "true"}, "retries": {"agent": 1}}

#: Run in a process of its own: task a is done (ticked by phasegate); task b's developer
#: ticks task c in PLAN.md, then kills phasegate before its call is over.
KILLING_RUN = """
import os, signal, sys
from pathlib import Path
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
root, plan, task = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
def handler(request):
    if request.labels.get("stage") == "execute" and request.labels.get("task") == task:
        (root / "src").mkdir(exist_ok=True)
        (root / "src/b.py").write_text("b = 1\\n")
        path = root / plan
        path.write_text(path.read_text().replace(
            "- [ ] **Create module c**", "- [x] **Create module c**"))
        os.kill(os.getpid(), signal.SIGKILL)
    if request.labels.get("stage") == "execute":
        (root / "src").mkdir(exist_ok=True)
        (root / "src/a.py").write_text("a = 1\\n")
    return ScriptedReply(text="APPROVED")
agents = ScriptedBackend(handler=handler, structured_output=False)
Repo(root).run("006", backends={"default": agents})
"""


def team() -> Team:
    return Team(
        {
            "the-developer": {
                "Create module a": [{"write": {"src/a.py": "a = 1\n"}}],
                "Create module b": [{"write": {"src/b.py": "b = 1\n"}}],
                "Create module c": [{"write": {"src/c.py": "c = 1\n"}}],
            },
            "*": {"*": [{"text": "APPROVED"}]},
        }
    )


def test_a_tick_an_agent_made_before_killing_phasegate_is_put_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=CONFIG)
    new_item(root, CONFIG)
    killed = subprocess.run(
        [sys.executable, "-c", KILLING_RUN, str(root), PLAN, B],
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr
    # As the agent left it: task a ticked by phasegate, task c by the agent.
    ticked_a = PLAN_TEXT.replace("- [ ] **Create module a**", "- [x] **Create module a**")
    left = ticked_a.replace("- [ ] **Create module c**", "- [x] **Create module c**")
    assert (root / PLAN).read_text() == left

    agents = team()
    assert run(Repo(root), agents).status == "completed"
    assert PLAN in capsys.readouterr().err  # said: put back after the kill
    # Task a's tick (phasegate's, before the call) stood; task c was not taken as ticked
    # by a person: its agent did it.
    assert [r.labels["task"] for r in agents.calls(stage="execute")] == [B, C]
    assert (root / "src" / "c.py").read_text() == "c = 1\n"
    assert (root / PLAN).read_text() == PLAN_TEXT.replace("- [ ]", "- [x]")
    (restored,) = [e for e in journal(root) if e["event"] == "guard.restored"]
    assert PLAN in restored["paths"]


def test_a_run_stopped_for_a_violation_puts_the_plan_back(tmp_path: Path) -> None:
    config = {**CONFIG, "protection": {"on_violation": "stop"}}
    root = make_repo(tmp_path / "repo", PLAN_TEXT, config=config)
    agents = team()
    agents.script["the-developer"]["Create module a"] = [
        {
            "write": {
                "src/a.py": "a = 1\n",
                PLAN: TICKED_B,
                ".phasegate/implement/006/.engine.json": "{}\n",
            }
        }
    ]
    with pytest.raises(ProtectedFilesChanged, match="on_violation: stop"):
        run(new_item(root, config), agents)
    assert (root / PLAN).read_text() == PLAN_TEXT
    restored = [e for e in journal(root) if e["event"] == "implement.plan_restored"]
    assert [e["task"] for e in restored] == [A]
