"""A real run of one work item, in its own process, that the dashboard tests steer.

Usage: python gated_run.py REPO ITEM CONTROL_DIR

The run goes through the engine as ``phasegate run ITEM --until brainstorm``
does, with scripted agents: the executor writes brainstorm.md; the chain
reviewer's first look waits until CONTROL_DIR/release-verdict exists and then
rejects it (one blocker); its second look asks a person through a pending
decision (``spec-approval``) and waits for the answer, which it reports in
its verdict. The decision is asked through ``phasegate.dashboard.data``'s
provisional store; the engine's own gates take its place.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from phasegate import ScriptedBackend, open_repo
from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply
from phasegate.dashboard import data
from phasegate.engine.runner import RunOptions

REJECTION = {
    "approved": False,
    "summary": "The problem is not stated",
    "issues": [
        {"severity": "blocker", "description": "No problem statement", "location": "brainstorm.md"}
    ],
}


def main() -> int:
    root, item, control = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])

    def wait_for(path: Path) -> None:
        while not path.exists():
            time.sleep(0.05)

    def decision_answered() -> dict[str, object] | None:
        for decision in data.decisions(root, item):
            if decision["id"] == "spec-approval" and decision["status"] == "answered":
                return decision
        return None

    def handler(request: AgentRequest) -> ScriptedReply:
        iteration = int(request.labels["iteration"])
        if request.role == "executor":
            text = f"# Brainstorm\n\nDraft {iteration}: rate limiting for the API.\n"
            return ScriptedReply(write={f"{request.labels['item_dir']}/brainstorm.md": text})
        if iteration == 1:
            wait_for(control / "release-verdict")
            return ScriptedReply(structured=REJECTION)
        data.provisional_ask(
            root,
            item,
            "spec-approval",
            "Approve the brainstorm before the spec starts?",
            ["approve", "revise"],
            ["brainstorm.md"],
        )
        while (answered := decision_answered()) is None:
            time.sleep(0.05)
        given = answered["answer"]
        assert isinstance(given, dict)
        summary = f"{given['choice']} by {given['by']}"
        return ScriptedReply(structured={"approved": True, "summary": summary, "issues": []})

    outcome = open_repo(root).run(
        item,
        backends={"default": ScriptedBackend(handler=handler)},
        options=RunOptions(until="brainstorm"),
    )
    print(outcome.message, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
