"""Helpers of the parallel foreach tests: a workflow whose tasks fan out, and agents."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine_helpers import git, init_repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo, open_repo
from phasegate.engine.runner import RunOptions

ITEM = "fan-one"
FOLDER = Path("work/fan") / ITEM

FAN_WORKFLOW = """\
name: fan
description: A plan, then its tasks in parallel, each coded and reviewed.
items_dir: work/fan
default_mode: standard
modes:
  standard: {{max_iterations: 2}}
roles:
  planner: {{access: write}}
  coder: {{access: write}}
  reviewer: {{access: read-only}}
nodes:
  - id: plan
    executor: planner
    outputs: [tasks.md]
  - id: tasks
    kind: foreach
    items: {{parser: markdown-tasks, file: tasks.md}}
    order: deps
    parallel: {parallel}
{extra}    body:
      - id: code
        executor: coder
        reviews_code: true
        reviewer: reviewer
      - id: coded
        kind: end
  - id: done
    kind: end
"""

#: Three independent tasks, then one that needs all three.
TASKS = """\
# Tasks

- [ ] T1: The bucket
- [ ] T2: The clock
- [ ] T3: The config
- [ ] T4: Wire them together (after T1, T2, T3)
"""


def fan_repo(root: Path, *, parallel: int = 3, extra: str = "", config: str = "") -> Path:
    """A git repository with the ``fan`` workflow and its prompts."""
    init_repo(root)
    folder = root / ".phasegate" / "workflows"
    prompts = folder / "prompts" / "fan"
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / "plan.md").write_text("Write {{ artifact_path }} for {{ item }}.\n")
    (prompts / "code.md").write_text("Do task {{ task }}: {{ task_title }}.\n")
    (prompts / "reviewer.md").write_text("Review {{ task }} of {{ item }}.\n")
    (folder / "fan.yaml").write_text(FAN_WORKFLOW.format(parallel=parallel, extra=extra))
    (root / ".phasegate" / "config.yaml").write_text(config or "version: 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "phasegate workflow")
    return root


@dataclass
class Agents:
    """Scripted agents that note when each call runs and what its work tree held."""

    tasks: str = TASKS
    delay: float = 0.3
    #: Files each coder writes, by task (default: ``src/<task>.py``).
    files: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: Called with each coder request first; may return a reply of its own.
    special: Callable[[AgentRequest], ScriptedReply | None] | None = None
    running: int = 0
    most: int = 0
    seen: dict[str, list[str]] = field(default_factory=dict)
    workdirs: dict[str, Path] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handler(self, request: AgentRequest) -> ScriptedReply:
        task = request.labels.get("task", "")
        with self.lock:
            self.calls.append((request.role, task))
        if request.role == "planner":
            return ScriptedReply(write={"{item_dir}/tasks.md": self.tasks})
        if request.role == "reviewer":
            return ScriptedReply(structured={"approved": True, "summary": "ok", "issues": []})
        if self.special is not None:
            reply = self.special(request)
            if reply is not None:
                return reply
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.workdirs[task] = request.workdir
            self.seen[task] = sorted(
                p.relative_to(request.workdir).as_posix()
                for p in (request.workdir / "src").glob("*.py")
            )
        try:
            time.sleep(self.delay)
        finally:
            with self.lock:
                self.running -= 1
        files = self.files.get(task) or {f"src/{task}.py": f"# {task}\n"}
        return ScriptedReply(write=dict(files), text=f"did {task}")

    def backend(self) -> ScriptedBackend:
        return ScriptedBackend(handler=self.handler)


def new_item(root: Path, name: str = ITEM) -> Repo:
    repo = open_repo(root)
    repo.new(name, workflow="fan", description="Fan out")
    return repo


def run(root: Path, agents: Agents, name: str = ITEM, **options: Any) -> Any:
    return open_repo(root).run(
        name, backends={"default": agents.backend()}, options=RunOptions(**options)
    )


def worktrees(root: Path) -> list[str]:
    listed = git(root, "worktree", "list", "--porcelain")
    return [line[9:] for line in listed.splitlines() if line.startswith("worktree ")][1:]


def task_branches(root: Path) -> list[str]:
    return [b for b in git(root, "branch", "--format=%(refname:short)").split() if "tasks" in b]
