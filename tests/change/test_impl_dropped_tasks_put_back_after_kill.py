"""A challenged task an implementer drops from tasks.md is put back even when the
implementer kills phasegate during its call (SIGKILL): tasks.md as it was before the call
is on disk with the guard's record, and the next run puts it back before it does
anything else, so the archived change still lists every challenged task."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from change_helpers import ChangeAgents, changes, plan_approved

FOLDER = Path("changes/add-oauth")
CUT = """\
---
change_id: add-oauth
---
# Tasks

## 1. Data Layer
- [x] 1.1 Create the token model
"""

#: Run in a process of its own: the implementer cuts tasks.md, then kills phasegate.
KILLING_RUN = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from change_helpers import ChangeAgents, changes
from phasegate.agents.scripted import ScriptedBackend
repo, cut = Path(sys.argv[1]), sys.argv[3]
agents = ChangeAgents(repo)
def handler(request):
    if request.role == "implementer":
        (repo / request.labels["item_dir"] / "tasks.md").write_text(cut)
        os.kill(os.getpid(), signal.SIGKILL)
    return agents(request)
changes(repo).impl("add-oauth", backends={"default": ScriptedBackend(handler=handler)})
"""


def test_tasks_an_implementer_dropped_before_killing_phasegate_are_put_back(
    repo: Path,
) -> None:
    plan_approved(repo)
    tasks = repo / FOLDER / "tasks.md"
    challenged = tasks.read_text()
    killed = subprocess.run(
        [sys.executable, "-c", KILLING_RUN, str(repo), str(Path(__file__).parent), CUT],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert tasks.read_text() == CUT  # left as the agent made it

    outcome = changes(repo).impl("add-oauth", backends={"default": ChangeAgents(repo).backend()})
    assert outcome.status == "complete", outcome.message
    for line in challenged.splitlines():
        if line.startswith("- ["):
            assert line[6:] in tasks.read_text(), line
    lines = (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    (restored,) = [e for e in map(json.loads, lines) if e["event"] == "guard.restored"]
    assert f"{FOLDER.as_posix()}/tasks.md" in restored["paths"]
