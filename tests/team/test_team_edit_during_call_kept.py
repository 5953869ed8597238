"""A person's edit of tasks.yaml or acceptance.json made while another agent's call runs
cannot be told from the agent's: it is put back with the call's change, and what the file
held is first copied under the session's ``put-back/`` folder, named in the message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from team_helpers import (
    ACCEPTANCE,
    LIMIT_OK,
    SESSION,
    in_process,
    journal,
    run_through,
    task_entries,
    tasks_yaml,
    team_script,
)

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.errors import AgentError
from phasegate.team.tasks import task_status

PERSONS_DONE_WHEN = "the limit is also explained in the FAQ"
PERSONS_CRITERION = "AC-3 added by hand: the limit is logged"


class EditingDuringTheCall(ScriptedBackend):
    """The scripted agents; while the Coder's call of T1 runs, a person edits tasks.yaml
    (and acceptance.json), then the Coder marks T1 implemented in the file as it is."""

    def reply_for(self, request: AgentRequest) -> ScriptedReply | None:
        labels = request.labels
        if request.role != "coder" or labels.get("task") != "T1":
            return super().reply_for(request)
        session = Path(request.workdir) / SESSION
        # The person's edits, made while the call runs.
        entries = task_entries()
        entries[1]["done_when"] = [*entries[1]["done_when"], PERSONS_DONE_WHEN]
        (session / "tasks.yaml").write_text(tasks_yaml(entries))
        criteria = json.loads((session / "acceptance.json").read_text())
        criteria["criteria"].append(
            {"id": "AC-3", "description": PERSONS_CRITERION, "check": "true"}
        )
        (session / "acceptance.json").write_text(json.dumps(criteria))
        # The Coder's own edit, in the file as the person left it.
        yaml = YAML(typ="safe", pure=True)
        data: Any = yaml.load((session / "tasks.yaml").read_text())
        for task in data["tasks"]:
            if task["id"] == "T1":
                task["status"] = "implemented"
        return ScriptedReply(
            text="limiter written",
            write={
                "src/limit.py": LIMIT_OK,
                "{item_dir}/tasks.yaml": tasks_yaml(data["tasks"]),
            },
        )


def test_an_edit_made_during_another_agents_call_is_kept_beside(tmp_path: Path) -> None:
    script = team_script()
    repo, _ = in_process(tmp_path / "repo", script)
    agents = EditingDuringTheCall(script=script)
    with pytest.raises(AgentError) as failed:
        run_through(repo, agents, UD_APPROVE_DESIGN="approved", UD_REVIEW_STRATEGY="per-batch")
    session = tmp_path / "repo" / SESSION
    # Put back as the file was before the call ...
    assert PERSONS_DONE_WHEN not in (session / "tasks.yaml").read_text()
    assert task_status(session / "tasks.yaml", "T1") == "not-started"
    assert json.loads((session / "acceptance.json").read_text()) == ACCEPTANCE
    # ... and what the files held is kept, named in the message.
    kept_tasks = session / "put-back" / "tasks-1.yaml"
    kept_acceptance = session / "put-back" / "acceptance-1.json"
    assert PERSONS_DONE_WHEN in kept_tasks.read_text()
    assert PERSONS_CRITERION in kept_acceptance.read_text()
    (violation,) = [e for e in journal(tmp_path / "repo") if e["event"] == "agent.violation"]
    assert violation["kept"] == [
        "the acceptance criteria (.agents-work/login/acceptance.json; what it held is "
        "copied to .agents-work/login/put-back/acceptance-1.json), kept from the coder",
        "the tasks' acceptance checks (.agents-work/login/tasks.yaml: T2's done_when; what "
        "it held is copied to .agents-work/login/put-back/tasks-1.yaml), kept from the coder",
    ]
    assert ".agents-work/login/put-back/tasks-1.yaml" in str(failed.value)
    # A second put-back does not overwrite the first copy.
    with pytest.raises(AgentError):
        run_through(repo, agents)
    assert PERSONS_DONE_WHEN in kept_tasks.read_text()
    assert PERSONS_DONE_WHEN in (session / "put-back" / "tasks-2.yaml").read_text()
