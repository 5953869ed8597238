"""A run of the ``fan`` workflow in its own process, for tests that kill or interrupt it.

Usage: python parallel_run.py REPO MODE

MODE ``crash``: deterministic scripted agents with short sleeps (T2's reviewer
rejects once; T1 and T3 write the same file, so merging T3 needs the repair,
which resolves it the same way every time). MODE ``sleepers``: every coder
starts a real child process (``sleep 60``) and writes its pid to REPO/../pids,
so a test can interrupt the run while agents' processes are running.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from phasegate import ScriptedBackend, open_repo
from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.engine.runner import RunOptions
from phasegate.errors import PhasegateError
from phasegate.interrupts import stop_signals_raise
from phasegate.process import run_process

ITEM = "fan-one"
TASKS = """\
# Tasks

- [ ] T1: The bucket
- [ ] T2: The clock
- [ ] T3: The config
- [ ] T4: The middleware (after T1)
- [ ] T5: The settings (after T2, T3)
- [ ] T6: Wire them together (after T4, T5)
"""
REJECT = {
    "approved": False,
    "summary": "Missing a test",
    "issues": [{"severity": "blocker", "description": "No test", "location": None}],
}
APPROVE = {"approved": True, "summary": "ok", "issues": []}


def crash_handler(request: AgentRequest) -> ScriptedReply:
    time.sleep(random.uniform(0.005, 0.04))
    task = request.labels.get("task", "")
    iteration = int(request.labels.get("iteration", "1"))
    if request.role == "planner":
        return ScriptedReply(write={"{item_dir}/tasks.md": TASKS})
    if request.role == "reviewer":
        rejected = task == "T2" and iteration == 1
        return ScriptedReply(structured=REJECT if rejected else APPROVE)
    if request.labels.get("stage") == "repair":
        return ScriptedReply(write={"src/shared.py": "LIMIT = 13\n"}, text="merged")
    files = {f"src/{task}.py": f"# {task}, iteration {iteration}\n"}
    if task in ("T1", "T3"):
        files["src/shared.py"] = f"LIMIT = {task[1:]}\n"
    return ScriptedReply(write=files, text=f"did {task}")


def sleeper_handler(pids: Path) -> ScriptedBackend:
    def handler(request: AgentRequest) -> ScriptedReply:
        if request.role == "planner":
            return ScriptedReply(write={"{item_dir}/tasks.md": TASKS})
        if request.role == "reviewer":
            return ScriptedReply(structured=APPROVE)
        script = f"echo $$ >> {pids}; exec sleep 60"
        result = run_process(["bash", "-c", script], cwd=request.workdir, timeout=120)
        return ScriptedReply(exit_status=result.exit_code, error="killed")

    return ScriptedBackend(handler=handler)


def main() -> int:
    root, mode = Path(sys.argv[1]), sys.argv[2]
    if mode == "sleepers":
        backend = sleeper_handler(root.parent / "pids")
    else:
        backend = ScriptedBackend(handler=crash_handler)
    try:
        with stop_signals_raise():  # as the command line does
            outcome = open_repo(root).run(
                ITEM, backends={"default": backend}, options=RunOptions(jobs=3)
            )
    except PhasegateError as exc:
        print(exc, file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    print(outcome.status, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
