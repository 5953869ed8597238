"""Helpers of the implement workflow tests: real git repositories, agent files, scripted teams."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.implement.plan import task_hash

FIXTURES = Path(__file__).parent / "fixtures"
SPEC = "docs/specs/006-webhooks"
PLAN = f"{SPEC}/PLAN.md"
AGENTS = (
    "the-developer",
    "the-architect",
    "the-security-engineer",
    "the-site-reliability-engineer",
    "the-data-engineer",
    "the-technical-writer",
)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
    )
    return out.stdout


def make_repo(
    root: Path,
    plan: str,
    *,
    agents: tuple[str, ...] = AGENTS,
    documents: Mapping[str, str] | None = None,
    config: Mapping[str, Any] | None = None,
    spec: str = SPEC,
) -> Path:
    """A git repository with ``plan`` as ``spec/PLAN.md``, agent files and a config."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# sample\n")
    (root / spec).mkdir(parents=True)
    (root / spec / "PLAN.md").write_text(plan, encoding="utf-8")
    for name, text in (documents or {}).items():
        (root / spec / name).write_text(text, encoding="utf-8")
    folder = root / ".claude" / "agents"
    folder.mkdir(parents=True)
    for name in agents:
        shutil.copy(FIXTURES / "agents" / f"{name}.md", folder / f"{name}.md")
    (root / ".phasegate").mkdir()
    (root / ".phasegate" / "config.yaml").write_text(json.dumps(dict(config or {})) + "\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def key(title: str, occurrence: int = 1) -> str:
    """The hash of the task titled ``title``."""
    return task_hash(title, occurrence)


Reply = Mapping[str, Any] | Callable[[AgentRequest], Mapping[str, Any]]


class Team:
    """Scripted agents: per agent, per task title (or ``*``), one reply per review cycle.

    The last reply repeats. Free text is read as a real CLI's answer is (no schema).
    """

    def __init__(self, script: Mapping[str, Mapping[str, list[Reply]]]) -> None:
        self.script = script
        self.backend = ScriptedBackend(handler=self.reply, structured_output=False)
        self.titles: dict[str, str] = {}
        for by_task in script.values():
            for title in by_task:
                if title != "*":
                    self.titles[key(title)] = title

    def reply(self, request: AgentRequest) -> ScriptedReply | None:
        by_task = (
            self.script.get(request.role)
            or self.script.get(request.labels.get("plays", ""))
            or self.script.get("*")
        )
        if by_task is None:
            return None
        title = self.titles.get(request.labels.get("task", ""), "*")
        replies = by_task.get(title) or by_task.get("*")
        if not replies:
            return None
        cycle = max(1, int(request.labels.get("iteration", "1")))
        found = replies[min(cycle, len(replies)) - 1]
        data = found(request) if callable(found) else found
        return ScriptedReply.from_mapping(data, f"{request.role}/{title}")

    def calls(self, role: str | None = None, stage: str | None = None) -> list[AgentRequest]:
        return [
            r
            for r in self.backend.requests
            if (role is None or r.role == role) and (stage is None or r.labels["stage"] == stage)
        ]

    def reviewers(self) -> list[str]:
        return [r.role for r in self.calls(stage="review")]


def new_item(root: Path, config: Mapping[str, Any] | None = None, name: str = "006") -> Repo:
    """A Repo with the implement item ``name`` for PLAN (not run yet)."""
    repo = Repo(root, Config.model_validate(dict(config or {})))
    repo.new(name, workflow="implement", data={"plan": PLAN}, description="Webhooks")
    return repo


def run(repo: Repo, team: Team, name: str = "006", **options: Any) -> Any:
    from phasegate.engine.runner import RunOptions

    return repo.run(name, backends={"default": team.backend}, options=RunOptions(**options))


def cycles_file(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / ".the-startup" / "review-cycles.json").read_text())
    return data


def journal(root: Path, name: str = "006") -> list[dict[str, Any]]:
    path = root / ".phasegate" / "implement" / name / ".journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def cli(root: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120) -> Any:
    """``phasegate ARGS`` in ``root``, without a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
