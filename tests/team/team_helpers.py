"""Helpers of the ``team`` workflow tests: a small project, scripted agents, the CLI.

The agents are the scripted backend with a script in the same format a user
writes in ``.phasegate/agents.yaml`` (role -> node[:task] -> one reply per
iteration), so the same script drives in-process runs and ``phasegate`` run
as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from phasegate.api import Repo
from phasegate.config import Config

ITEM = "login"
SESSION = Path(".agents-work") / ITEM
DESCRIPTION = "Add a rate limiter to the login endpoint"
LIMIT_CHECK = (
    "python3 -c \"import sys; sys.path.insert(0, 'src'); import limit; "
    'sys.exit(0 if limit.ok() else 1)"'
)
DOC_CHECK = "test -s docs/limit.md"

SPEC = (
    "# Spec: login rate limit\n\n## Goal\n\nRefuse too many login attempts.\n\n"
    "## Acceptance criteria\n\n"
    "- AC-1: the limiter refuses the 6th attempt within a minute\n"
    "- AC-2: the limit is documented\n"
)
SPEC_V2 = SPEC.replace("Refuse too many", "Refuse more than 5")
ACCEPTANCE = {
    "criteria": [
        {"id": "AC-1", "description": "6th attempt refused", "check": LIMIT_CHECK},
        {"id": "AC-2", "description": "limit documented", "check": DOC_CHECK},
    ]
}
ARCHITECTURE = (
    "# Architecture\n\n## Modules\n\n- src/limit.py: the limiter\n\n"
    "## Risks\n\n- A shared counter could be raced.\n"
)
REPORT = (
    "# Report\n\n## What was done\n\nA login rate limiter.\n\n## How to run\n\nNothing new.\n\n"
    "## How to test\n\nRun the acceptance checks.\n\n## Known issues\n\nNone known.\n"
)
LIMIT_OK = "def ok():\n    return True\n"
LIMIT_BROKEN = "def ok():\n    return False\n"


def task_entries() -> list[dict[str, Any]]:
    """T1 (risky, behaviour) and T2 (documentation only, depends on T1)."""
    return [
        {
            "id": "T1",
            "title": "Rate limiter",
            "goal": "Refuse the 6th login attempt within a minute",
            "dependencies": [],
            "acceptance_checks": [f"cmd: {LIMIT_CHECK}"],
            "done_when": ["the 6th attempt is refused"],
            "risk_flags": ["security"],
            "files": ["src/limit.py"],
            "status": "not-started",
        },
        {
            "id": "T2",
            "title": "Document the limit",
            "goal": "Say what the limit is",
            "dependencies": ["T1"],
            "acceptance_checks": [f"cmd: {DOC_CHECK}"],
            "done_when": ["docs/limit.md explains the limit"],
            "risk_flags": ["none"],
            "files": ["docs/limit.md"],
            "status": "not-started",
        },
    ]


def tasks_yaml(entries: list[dict[str, Any]] | None = None, **statuses: str) -> str:
    """tasks.yaml text with the given statuses (``T1="implemented"``)."""
    tasks = [dict(t) for t in (entries or task_entries())]
    for task in tasks:
        task["status"] = statuses.get(task["id"], task["status"])
    out = YAML(typ="safe", pure=True)
    out.default_flow_style = False
    from io import StringIO

    text = StringIO()
    out.dump({"tasks": tasks}, text)
    return text.getvalue()


def verdict(word: str, *issues: str, summary: str = "") -> dict[str, Any]:
    """A scripted reviewer reply with verdict ``word`` and medium-severity issues."""
    return {
        "verdict": {
            "verdict": word,
            "summary": summary or f"{word.lower()}",
            "issues": [{"severity": "medium", "description": i, "location": None} for i in issues],
        }
    }


def item_file(name: str) -> str:
    return "{item_dir}/" + name


def team_script(strategy: str = "per-batch") -> dict[str, Any]:
    """A full run's agents: every gate passes at once (tests change what they need)."""
    t1_done = "completed" if strategy == "per-batch" else "implemented"
    return {
        "spec-agent": {
            "intake": [
                {
                    "write": {
                        item_file("spec.md"): SPEC,
                        item_file("acceptance.json"): json.dumps(ACCEPTANCE),
                    },
                    "text": "wrote the spec",
                }
            ],
            "correct-spec": [{"write": {item_file("spec.md"): SPEC_V2}, "text": "said 5"}],
        },
        "architect": {
            "architecture": [{"write": {item_file("architecture.md"): ARCHITECTURE}}],
            "correct-architecture": [{"write": {item_file("architecture.md"): ARCHITECTURE}}],
        },
        "planner": {"plan": [{"write": {item_file("tasks.yaml"): tasks_yaml()}}]},
        "coder": {
            "code:T1": [
                {
                    "write": {
                        "src/limit.py": LIMIT_OK,
                        item_file("tasks.yaml"): tasks_yaml(T1="implemented"),
                    },
                    "text": "limiter written",
                }
            ],
            "code:T2": [
                {
                    "write": {
                        "docs/limit.md": "# Limit\n\n5 attempts a minute.\n",
                        item_file("tasks.yaml"): tasks_yaml(T1=t1_done, T2="implemented"),
                    },
                    "text": "documented",
                }
            ],
            "*": [{"text": "fixed what was asked"}],
        },
        "reviewer": {"*": [verdict("OK")]},
        "qa": {"*": [verdict("OK")]},
        "security": {"*": [verdict("OK")]},
        "integrator": {"*": [{"text": "build is green"}]},
        "docs": {
            "docs": [
                {
                    "write": {
                        item_file("report.md"): REPORT,
                        "README.md": "# sample\n\nLogin is rate limited.\n",
                    }
                }
            ]
        },
    }


def write_config(repo: Path, script: dict[str, Any], **extra: Any) -> None:
    """``.phasegate/config.yaml`` binding every role to the scripted backend and its script."""
    (repo / ".phasegate").mkdir(exist_ok=True)
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {
            "scripted": {"script": ".phasegate/agents.yaml", "calls_log": ".phasegate/calls.jsonl"}
        },
        "retries": {"agent": 0},
        **extra,
    }
    yaml = YAML(typ="safe", pure=True)
    with open(repo / ".phasegate" / "config.yaml", "w") as handle:
        yaml.dump(config, handle)
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        yaml.dump(script, handle)


def make_team_repo(root: Path, script: dict[str, Any] | None = None) -> Path:
    """A git repository with a config whose agents follow ``script``."""
    repo = init_repo(root)
    write_config(repo, script or team_script())
    return repo


def cli(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``phasegate ARGS`` in ``repo`` with no terminal."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        timeout=180,
    )


def status_json(repo: Path, item: str = ITEM) -> dict[str, Any]:
    """The session's status.json."""
    data: dict[str, Any] = json.loads((repo / ".agents-work" / item / "status.json").read_text())
    return data


def journal(repo: Path, item: str = ITEM) -> list[dict[str, Any]]:
    """The session's journal events."""
    text = (repo / ".agents-work" / item / ".journal.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def dispatched(repo: Path, item: str = ITEM) -> list[dict[str, Any]]:
    """Every ``agent.dispatched`` event, in order."""
    return [e for e in journal(repo, item) if e["event"] == "agent.dispatched"]


def decision(repo: Path, decision_id: str, item: str = ITEM) -> dict[str, Any]:
    """The latest user_decisions entry of ``decision_id`` in status.json."""
    found = [
        d for d in status_json(repo, item)["user_decisions"] if d["decision_id"] == decision_id
    ]
    assert found, f"no {decision_id} in status.json"
    return found[-1]


def team_repo_api(root: Path) -> Repo:
    """The programmatic facade over a repo made by :func:`make_team_repo`."""
    from phasegate.config import load_config

    return Repo(root, load_config(root))


__all__ = ["Config", "init_repo"]


def verdicts_of(repo: Path, node: str, item: str = ITEM) -> list[dict[str, Any]]:
    """The ``review.verdict`` events of ``node`` (a node path), in order."""
    return [e for e in journal(repo, item) if e["event"] == "review.verdict" and e["node"] == node]


def in_process(root: Path, script: dict[str, Any], mode: str = "full") -> tuple[Repo, Any]:
    """A repo (made at ``root``) with a new session and the scripted agents that record
    every request they get (``agents.requests``)."""
    from phasegate.agents.scripted import ScriptedBackend

    make_team_repo(root, script)
    repo = team_repo_api(root)
    repo.new(ITEM, workflow="team", mode=mode, description=DESCRIPTION)
    return repo, ScriptedBackend(script=script)


def run_through(repo: Repo, agents: Any, **answers: str) -> Any:
    """Run the session with ``answers`` (decision id -> choice) given up front."""
    from phasegate.engine.runner import RunOptions

    fixed = {k.replace("_", "-"): v for k, v in answers.items()}
    return repo.run(ITEM, backends={"default": agents}, options=RunOptions(answers=fixed))


def task_json(request: Any) -> dict[str, Any]:
    """The task object a dispatch carried."""
    part = next(p for p in request.prompt if p.title.startswith("Task ("))
    found: dict[str, Any] = json.loads(part.body)
    return found


def part(request: Any, title: str) -> str:
    """The body of the prompt part whose title starts with ``title`` ("" if none)."""
    return next((p.body for p in request.prompt if p.title.startswith(title)), "")


def calls_at(agents: Any, path: str, role: str | None = None) -> list[Any]:
    """The requests ``agents`` got for node ``path`` (by ``role`` if given)."""
    return [
        r for r in agents.requests if r.labels["path"] == path and (role is None or r.role == role)
    ]
