"""A parallel foreach killed (SIGKILL) while items ran: the resumed run gives its slots to
the items that were running when it was killed before any item it had not started, even
one with a longer chain of items waiting on it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from parallel_helpers import Agents, fan_repo, new_item, run

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply

HERE = Path(__file__).parent

#: T1 starts a chain of three (T4 waits on it, T5 on T4); T2 and T3 are lone tasks.
TASKS = """\
# Tasks

- [ ] T1: Chain start
- [ ] T2: Lone one
- [ ] T3: Lone two
- [ ] T4: Chain middle (after T1)
- [ ] T5: Chain end (after T4)
"""

#: The first run: T1's agent answers at once, T2's and T3's take long; the run is killed
#: when T1's answer is journaled (the planner's is the first), T2 and T3 still running.
KILLED_RUN = """\
import sys
from pathlib import Path

sys.path.insert(0, sys.argv[2])
from parallel_helpers import Agents, run
from phasegate.agents.scripted import ScriptedReply


def quick_t1(request):
    if request.labels.get("task") == "T1":
        return ScriptedReply(write={"src/T1.py": "# T1\\n"}, text="did T1")
    return None


run(Path(sys.argv[1]), Agents(tasks=sys.argv[3], delay=30, special=quick_t1))
"""


def coded(agents: Agents) -> list[str]:
    return [task for role, task in agents.calls if role == "coder"]


def test_items_running_when_the_run_was_killed_resume_before_new_ones(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo", parallel=3)
    new_item(root)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, str(root), str(HERE), TASKS],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "PHASEGATE_CRASH_AT": "agent.returned@2"},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    # Resumed two at a time: T1 (its answer recorded) and T2 take the slots; once T1 is
    # reviewed, T3, which was running when the run was killed, goes before T4, which T5
    # waits on.
    def slow_t2(request: AgentRequest) -> ScriptedReply | None:
        if request.labels.get("task") == "T2":
            time.sleep(1.0)
            return ScriptedReply(write={"src/T2.py": "# T2\n"}, text="did T2")
        return None

    agents = Agents(tasks=TASKS, delay=0.05, special=slow_t2)
    outcome = run(root, agents, jobs=2)
    assert outcome.status == "completed", outcome.message
    order = coded(agents)
    assert sorted(order) == ["T2", "T3", "T4", "T5"], order
    assert order.index("T3") < order.index("T4"), order
