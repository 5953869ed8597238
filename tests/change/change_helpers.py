"""Helpers of the change workflow tests: real git repos and scripted change agents."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.change import Changes, ChangeTools
from phasegate.config import Config

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import git as git
from engine_helpers import init_repo as init_repo

PROPOSAL = """\
---
change_id: {change}
specs:
  - name: oauth-login
    depends_on: [session]
  - name: session
    depends_on: []
---
# Proposal: {change}

Add OAuth login next to passwords.
"""

SPEC = """\
# {name}

## Requirements

### {prefix}-R1: First requirement of {name}
Written for {change}.
"""

TASKS = """\
---
change_id: {change}
---
# Tasks

## 1. Data Layer
- [ ] 1.1 Create the token model
  - File: app/models.py

## 2. Logic Layer
- [ ] 2.1 Exchange codes for tokens

## 3. Integration Layer
- [ ] 3.1 Add the /oauth/callback route

## 4. Testing
- [ ] 4.1 Test the callback
"""

APPROVED = {"verdict": "APPROVED", "summary": "Ready.", "issues": []}
NEEDS_REVISION = {
    "verdict": "NEEDS_REVISION",
    "summary": "Tasks miss the callback errors.",
    "issues": [
        {"severity": "high", "description": "No error handling task", "location": "tasks.md"}
    ],
}
MINOR_REVISION = {
    "verdict": "NEEDS_REVISION",
    "summary": "Small wording issues.",
    "issues": [{"severity": "low", "description": "Typo in the proposal", "location": None}],
}
REJECTED = {
    "verdict": "REJECTED",
    "summary": "OAuth is the wrong approach here.",
    "issues": [{"severity": "high", "description": "Use SSO instead", "location": "proposal.md"}],
}

FINDING = {
    "severity": "high",
    "file": "app/oauth.py",
    "line": 3,
    "description": "The callback ignores the state parameter",
}


def review(verdict: str, *findings: Mapping[str, Any]) -> dict[str, Any]:
    """``create_review`` arguments (without change_id) for a verdict."""
    return {
        "verdict": verdict,
        "summary": f"Reviewed: {verdict}.",
        "findings": [dict(f) for f in findings],
        "tests_run": [{"command": "python -m pytest -q", "passed": verdict == "APPROVED"}],
    }


Reviewer = Callable[[AgentRequest], str]


def step_of(request: AgentRequest) -> str:
    """The seed 002 step of a request (``proposal``, ``spec:NAME``, ``challenge``, ``fix``...)."""
    labels = request.labels
    node, stage, task = labels["node"], labels["stage"], labels.get("task", "")
    iteration = int(labels.get("iteration", "1"))
    if node == "spec":
        return f"spec:{task}"
    if node == "implement-group":
        return f"implement:{task}"
    if node == "tasks":
        if stage == "review":
            return "challenge"
        return "tasks" if iteration == 1 else "reproposal"
    if node == "review":
        return "review" if stage == "review" else "fix"
    return node


@dataclass
class ChangeAgents:
    """Scripted agents of all four roles, answering per step and iteration.

    ``challenges`` and ``reviews`` are used in order (the last one repeats).
    A challenge that is a string is answered as plain text; a review entry of
    ``None`` means the reviewer answers in text without calling ``create_review``.
    """

    repo: Path
    challenges: Sequence[Mapping[str, Any] | str] = (APPROVED,)
    reviews: Sequence[Mapping[str, Any] | None] = (review("APPROVED"),)
    tasks: str = TASKS
    reviewer: Reviewer | None = None
    #: Writes a spec from (spec file name, living spec text or None); default: SPEC.
    spec_writer: Callable[[str, str | None], str] | None = None
    #: The specs proposal.md lists (default: session, and oauth-login depending on it).
    specs: Sequence[str] | None = None
    steps: list[tuple[str, str]] = field(default_factory=list)
    #: Also append each call to this JSONL file (survives a killed process).
    log: Path | None = None

    def backend(self) -> ScriptedBackend:
        return ScriptedBackend(handler=self)

    def __call__(self, request: AgentRequest) -> ScriptedReply | None:
        role, step = request.role, step_of(request)
        self.steps.append((role, step))
        if self.log is not None:
            with open(self.log, "a") as handle:
                handle.write(json.dumps([role, step]) + "\n")
        change = request.labels["item"]
        folder = request.labels["item_dir"]
        if role == "proposal-author":
            return self._author(step, change, folder)
        if role == "challenger":
            count = sum(1 for r, _ in self.steps if r == "challenger")
            answer = self.challenges[min(count, len(self.challenges)) - 1]
            if isinstance(answer, str):
                return ScriptedReply(text=answer)
            return ScriptedReply(structured=answer)
        if role == "implementer":
            name = step.replace(":", "_")
            return ScriptedReply(
                write={f"app/{name}.py": f"# {step} of {change}\n"}, text=f"did {step}"
            )
        if role == "reviewer":
            if self.reviewer is not None:
                return ScriptedReply(text=self.reviewer(request))
            count = sum(1 for r, _ in self.steps if r == "reviewer")
            entry = self.reviews[min(count, len(self.reviews)) - 1]
            if entry is None:
                return ScriptedReply(text="APPROVED - looks good to me")
            tools = ChangeTools(self.repo, change_id=change, allowed=["create_review"])
            tools.call("create_review", {"change_id": change, **entry})
            return ScriptedReply(text=f"submitted {entry['verdict']}")
        return None

    def _author(self, step: str, change: str, folder: str) -> ScriptedReply:
        if step == "proposal":
            text = PROPOSAL.format(change=change)
            if self.specs is not None:
                listed = "".join(f"  - name: {name}\n" for name in self.specs)
                text = text.replace(
                    text[text.index("specs:") : text.index("---", 4)], "specs:\n" + listed
                )
            return ScriptedReply(write={f"{folder}/proposal.md": text})
        if step.startswith("spec:"):
            name = step.removeprefix("spec:")
            if self.spec_writer is not None:
                living = self.repo / "specs" / name
                current = living.read_text() if living.exists() else None
                return ScriptedReply(
                    write={f"{folder}/specs/{name}": self.spec_writer(name, current)}
                )
            stem = name.removesuffix(".md")
            text = SPEC.format(name=stem, prefix=stem.upper(), change=change)
            return ScriptedReply(write={f"{folder}/specs/{name}": text})
        if step == "tasks":
            return ScriptedReply(write={f"{folder}/tasks.md": self.tasks.format(change=change)})
        if step == "reproposal":
            return ScriptedReply(
                write={
                    f"{folder}/tasks.md": self.tasks.format(change=change)
                    + "- [ ] 4.2 Test callback errors\n"
                }
            )
        return ScriptedReply(text=f"nothing to do for {step}")


def changes(repo: Path, **config: Any) -> Changes:
    """The change workflow of ``repo`` with a config built from ``config``."""
    return Changes(repo, Config.model_validate(config) if config else Config())


def plan_approved(repo: Path, change: str = "add-oauth", **kwargs: Any) -> ChangeAgents:
    """Create ``change`` and plan it to challenged with approving agents."""
    agents = ChangeAgents(repo, **kwargs)
    outcome = changes(repo).plan(change, "Add OAuth login", backends={"default": agents.backend()})
    assert outcome.action == "challenged", outcome.message
    return agents


def complete(repo: Path, change: str, **kwargs: Any) -> ChangeAgents:
    """Plan and implement ``change`` until it is complete (approving agents)."""
    agents = plan_approved(repo, change, **kwargs)
    outcome = changes(repo).impl(change, backends={"default": agents.backend()})
    assert outcome.status == "complete", outcome.message
    return agents


def configure_real_reviewer(repo: Path, reviewer: Mapping[str, Any]) -> None:
    """Scripted implementer (writes app/oauth.py); the reviewer role bound to ``reviewer``."""
    config = {
        "roles": {"default": {"backend": "scripted"}, "reviewer": dict(reviewer)},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
    }
    script = {"implementer": {"*": [{"write": {"app/oauth.py": "def callback():\n    pass\n"}}]}}
    (repo / ".phasegate").mkdir(exist_ok=True)
    yaml = YAML(typ="safe", pure=True)
    for name, data in (("config.yaml", config), ("agents.yaml", script)):
        with open(repo / ".phasegate" / name, "w") as handle:
            yaml.dump(data, handle)


def assert_fixed_once_then_complete(repo: Path) -> None:
    """WF-R4 after NEEDS_FIX then APPROVED: complete in round 2, the first review kept."""
    state = changes(repo).state("add-oauth")
    assert state.phase.value == "complete" and state.impl is not None
    assert state.impl.iteration == 2
    kept = list((repo / "changes/add-oauth/reviews").iterdir())
    assert len(kept) == 1 and "NEEDS_FIX" in kept[0].read_text()
