"""A run of the ``fan`` workflow in its own process whose first merge-conflict repair is
killed with SIGKILL while the repairing agent works (parallel_run.py's ``crash`` agents).

Usage: python parallel_repair_run.py REPO
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from parallel_run import ITEM, crash_handler

from phasegate import ScriptedBackend, open_repo
from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.engine.runner import RunOptions
from phasegate.errors import PhasegateError


def main() -> int:
    root = Path(sys.argv[1])
    marker = root.parent / "repair-killed"

    def handler(request: AgentRequest) -> ScriptedReply:
        if request.labels.get("stage") == "repair" and not marker.exists():
            marker.write_text("killed during the repair\n")
            os.kill(os.getpid(), signal.SIGKILL)
        return crash_handler(request)

    try:
        outcome = open_repo(root).run(
            ITEM, backends={"default": ScriptedBackend(handler=handler)}, options=RunOptions(jobs=3)
        )
    except PhasegateError as exc:
        print(exc, file=sys.stderr)
        return exc.exit_code
    print(outcome.status, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
