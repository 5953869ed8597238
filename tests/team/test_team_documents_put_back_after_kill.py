"""What a team agent may not change of the session's documents (acceptance.json, the
tasks' checks in tasks.yaml, another task's status) is put back even when the agent kills
phasegate during its call (SIGKILL): the documents as they were before the call are on
disk with the guard's record, and the next run puts them back before it does anything
else. What phasegate itself wrote before the call (a task it marked completed) stays."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from team_helpers import (
    ACCEPTANCE,
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    journal,
    make_team_repo,
    status_json,
    task_entries,
    tasks_yaml,
)

WEAKENED = {"criteria": [dict(ACCEPTANCE["criteria"][0], check="true")]}

#: Run in a process of its own: T2's Coder weakens acceptance.json, rewrites T2's checks
#: and sets T1 (which phasegate marked completed) back, then kills phasegate mid-call.
KILLING_RUN = """
import json, os, signal, sys
from pathlib import Path
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
from phasegate.config import load_config
from phasegate.engine.runner import RunOptions
root, weakened, tasks = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
from ruamel.yaml import YAML
normal = ScriptedBackend(script=YAML(typ="safe").load(root / ".phasegate/agents.yaml"))
def handler(request):
    if request.labels.get("path") != "tasks[T2]/code":
        return normal.reply_for(request)
    session = root / ".agents-work/login"
    (session / "acceptance.json").write_text(weakened)
    (session / "tasks.yaml").write_text(tasks)
    os.kill(os.getpid(), signal.SIGKILL)
Repo(root, load_config(root)).run(
    "login",
    backends={"coder": ScriptedBackend(handler=handler)},
    options=RunOptions(answers={"UD-REVIEW-STRATEGY": "per-batch"}),
)
"""


def test_documents_an_agent_changed_before_killing_phasegate_are_put_back(
    tmp_path: Path,
) -> None:
    repo = make_team_repo(tmp_path / "repo")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=repo, check=True)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    assert cli(repo, "run", ITEM).returncode == 3  # waits at UD-APPROVE-DESIGN
    waits = cli(repo, "run", ITEM, "--answer", "UD-APPROVE-DESIGN=approved")
    assert waits.returncode == 3, waits.stdout + waits.stderr
    acceptance = repo / SESSION / "acceptance.json"
    tasks = repo / SESSION / "tasks.yaml"
    entries = task_entries()
    entries[1]["acceptance_checks"] = ["cmd: true"]
    forged = tasks_yaml(entries, T1="implemented", T2="implemented")

    killed = subprocess.run(
        [sys.executable, "-c", KILLING_RUN, str(repo), json.dumps(WEAKENED), forged],
        capture_output=True,
        timeout=180,
    )
    assert killed.returncode == -9, killed.stderr
    assert json.loads(acceptance.read_text()) == WEAKENED  # left as the agent made them
    assert tasks.read_text() == forged

    again = cli(repo, "run", ITEM)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "killed" in again.stderr and "put back" in again.stderr
    assert f"{SESSION.as_posix()}/acceptance.json" in again.stderr
    assert f"{SESSION.as_posix()}/tasks.yaml" in again.stderr
    assert json.loads(acceptance.read_text()) == ACCEPTANCE
    assert "cmd: true" not in tasks.read_text()
    (restored,) = [e for e in journal(repo) if e["event"] == "guard.restored"]
    assert f"{SESSION.as_posix()}/acceptance.json" in restored["paths"]
    # T1 was completed by phasegate before T2's call: that stays (T2's call made again).
    assert status_json(repo)["current_state"] == "DONE"
    finished = tasks.read_text()
    assert finished == tasks_yaml(T1="completed", T2="completed")
