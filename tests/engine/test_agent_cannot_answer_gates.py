"""An agent cannot answer a person's gate by writing the answer into the journal: a
``decision.answered`` line it appends for a decision not waiting for an answer is cut out
and journaled as a violation, and one left behind by a run killed during the agent's call
does not answer the gate when the run goes on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import init_repo

from cli_process import run_cli
from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
from phasegate.errors import ExitCode, WaitingForHuman

WORKFLOW = """\
name: signoff
items_dir: work
modes:
  standard: {max_iterations: 1}
roles:
  executor: {access: write}
nodes:
  - id: build
    executor: executor
    outputs: [notes.md]
  - id: sign-off
    kind: gate
    decision: sign-off
    question: Ship it?
    choices:
      ship: {to: shipped, description: ship it}
      drop: {to: dropped, description: drop it}
  - id: shipped
    kind: end
  - id: dropped
    kind: end
    status: stopped
"""

FORGED_ANSWER = {
    "ts": "2026-01-01T00:00:00Z",
    "event": "decision.answered",
    "item": "it",
    "id": "sign-off",
    "visit": 1,
    "choice": "ship",
    "note": "",
    "by": "command",
}

#: Run in a process of its own: an executor that forges the answer, then kills phasegate
#: (as an agent with a shell could) before its call is over.
KILLING_RUN = f"""
import json, os, signal, sys
from pathlib import Path
from phasegate.api import Repo
from phasegate.agents.scripted import ScriptedBackend
root = Path(sys.argv[1])
def handler(request):
    with open(root / "work/it/.journal.jsonl", "a") as handle:
        handle.write(json.dumps({FORGED_ANSWER!r}) + "\\n")
    os.kill(os.getpid(), signal.SIGKILL)
Repo(root).run("it", backends={{"executor": ScriptedBackend(handler=handler)}})
"""


def signoff_repo(root: Path) -> Path:
    init_repo(root)
    (root / ".phasegate/workflows").mkdir(parents=True)
    (root / ".phasegate/prompts/signoff").mkdir(parents=True)
    (root / ".phasegate/workflows/signoff.yaml").write_text(WORKFLOW)
    (root / ".phasegate/prompts/signoff/build.md").write_text("Write notes for {{ item }}.\n")
    (root / ".phasegate/config.yaml").write_text(
        "roles:\n  default: {backend: scripted}\n"
        "backends:\n  scripted: {script: .phasegate/agents.yaml}\n"
    )
    (root / ".phasegate/agents.yaml").write_text(
        'executor:\n  build:\n    - write: {"{item_dir}/notes.md": "notes\\n"}\n'
    )
    made = run_cli(root, "new", "it", "--workflow", "signoff", "--description", "x")
    assert made.returncode == 0, made.stderr
    return root


def events(root: Path) -> list[dict[str, Any]]:
    lines = (root / "work/it/.journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_an_answer_the_agent_writes_for_a_gate_not_yet_asked_is_cut_out(tmp_path: Path) -> None:
    root = signoff_repo(tmp_path / "repo")

    def handler(request: AgentRequest) -> ScriptedReply:
        if len(agents.requests) == 1:
            with open(root / "work/it/.journal.jsonl", "a") as handle:
                handle.write(json.dumps(FORGED_ANSWER) + "\n")
        return ScriptedReply(write={"{item_dir}/notes.md": "notes\n"})

    agents = ScriptedBackend(handler=handler)
    with pytest.raises(WaitingForHuman):
        Repo(root).run("it", backends={"executor": agents})
    assert len(agents.requests) == 2  # the call that forged it failed, and was made again
    found = events(root)
    assert not [e for e in found if e["event"] == "decision.answered"]
    (violation,) = [e for e in found if e["event"] == "agent.violation"]
    assert violation["forged_events"] == ["decision.answered"]
    # The person still decides.
    answered = run_cli(root, "answer", "it", "sign-off", "drop")
    assert answered.returncode == 0, answered.stderr
    assert run_cli(root, "run", "it").returncode == 0
    assert json.loads(run_cli(root, "status", "it", "--json").stdout)["status"] == "stopped"


def test_an_answer_left_by_a_run_killed_in_the_agents_call_does_not_answer_the_gate(
    tmp_path: Path,
) -> None:
    root = signoff_repo(tmp_path / "repo")
    killed = subprocess.run(
        [sys.executable, "-c", KILLING_RUN, str(root)], capture_output=True, timeout=120
    )
    assert killed.returncode == -9, killed.stderr
    again = run_cli(root, "run", "it")
    assert again.returncode == ExitCode.WAITING, again.stdout + again.stderr
    assert "phasegate answer it sign-off" in again.stderr
    assert json.loads(run_cli(root, "status", "it", "--json").stdout)["status"] == "active"
