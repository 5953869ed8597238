"""tasks.md stays the implementer's to tick off once planning is over, not to cut: a call
that drops or rewords a task the challenger approved has its tasks.md put back (and is
journaled as a violation), so the archived change still lists every challenged task."""

from __future__ import annotations

import json
from pathlib import Path

from change_helpers import ChangeAgents, changes, plan_approved

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply

FOLDER = Path("changes/add-oauth")
CUT = """\
---
change_id: add-oauth
---
# Tasks

## 1. Data Layer
- [x] 1.1 Create the token model
"""


class TaskCuttingImplementer(ChangeAgents):
    """An implementer whose first call ticks its task and deletes every other one."""

    def __call__(self, request: AgentRequest) -> ScriptedReply | None:
        if request.role == "implementer" and not any(r == "implementer" for r, _ in self.steps):
            self.steps.append(("implementer", "cut the tasks"))
            folder = request.labels["item_dir"]
            return ScriptedReply(
                write={"app/x.py": "X = 1\n", f"{folder}/tasks.md": CUT}, text="did it"
            )
        return super().__call__(request)


class TaskTickingImplementer(ChangeAgents):
    """An implementer that ticks off the tasks of the group it implements, and adds one."""

    def __call__(self, request: AgentRequest) -> ScriptedReply | None:
        if request.role == "implementer":
            self.steps.append(("implementer", "tick"))
            folder = request.labels["item_dir"]
            tasks = self.repo / folder / "tasks.md"
            text = tasks.read_text().replace("- [ ]", "- [x]", 1)
            if "4.2" not in text:
                text += "- [ ] 4.2 Test the error page\n"
            return ScriptedReply(
                write={"app/x.py": f"X = {len(self.steps)}\n", f"{folder}/tasks.md": text},
                text="did it",
            )
        return super().__call__(request)


def _violations(repo: Path) -> list[dict[str, object]]:
    lines = (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == "agent.violation"]


def test_tasks_an_implementer_drops_are_put_back(repo: Path) -> None:
    plan_approved(repo)
    challenged = (repo / FOLDER / "tasks.md").read_text()
    outcome = changes(repo).impl(
        "add-oauth", backends={"default": TaskCuttingImplementer(repo).backend()}
    )
    assert outcome.status == "complete", outcome.message
    assert (repo / FOLDER / "tasks.md").read_text() == challenged
    (violation,) = _violations(repo)
    words = " ".join(violation.get("kept", []))  # type: ignore[arg-type]
    assert "changes/add-oauth/tasks.md" in words and "2.1 Exchange codes" in words, violation


def test_ticking_and_adding_tasks_is_the_implementers(repo: Path) -> None:
    plan_approved(repo)
    outcome = changes(repo).impl(
        "add-oauth", backends={"default": TaskTickingImplementer(repo).backend()}
    )
    assert outcome.status == "complete", outcome.message
    text = (repo / FOLDER / "tasks.md").read_text()
    assert "- [x] 1.1 Create the token model" in text and "4.2 Test the error page" in text
    assert not _violations(repo)
