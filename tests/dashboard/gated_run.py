"""A real run of one item of the ``gated`` workflow, in its own process, that tests steer.

Usage: python gated_run.py REPO ITEM CONTROL_DIR

The run goes through the engine as ``phasegate run ITEM --wait`` does, with
scripted agents: the executor writes draft.md; the reviewer's first look
waits until CONTROL_DIR/release-verdict exists and then rejects the draft
(one blocker); its second look approves it. The workflow's gate ``go`` then
waits for a person (``--wait``): an answer given on the dashboard or with
``phasegate answer`` lets the run go on to its end.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from phasegate import ScriptedBackend, open_repo
from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.engine.runner import RunOptions

REJECTION = {
    "approved": False,
    "summary": "The problem is not stated",
    "issues": [
        {"severity": "blocker", "description": "No problem statement", "location": "draft.md"}
    ],
}


def main() -> int:
    root, item, control = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])

    def handler(request: AgentRequest) -> ScriptedReply:
        iteration = int(request.labels["iteration"])
        if request.role == "executor":
            text = f"# Draft\n\nDraft {iteration}: rate limiting for the API.\n"
            return ScriptedReply(write={f"{request.labels['item_dir']}/draft.md": text})
        if iteration == 1:
            while not (control / "release-verdict").exists():
                time.sleep(0.05)
            return ScriptedReply(structured=REJECTION)
        return ScriptedReply(structured={"approved": True, "summary": "Clear now", "issues": []})

    outcome = open_repo(root).run(
        item,
        backends={"default": ScriptedBackend(handler=handler)},
        options=RunOptions(wait=True),
    )
    print(outcome.message, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
