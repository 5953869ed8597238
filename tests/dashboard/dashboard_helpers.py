"""Helpers of the dashboard tests: repositories with runs, the CLI, a served dashboard."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script as approving_script
from engine_helpers import init_repo as init_repo

HERE = Path(__file__).parent
#: The item the tests create.
ITEM = "rate-limit"
#: A secret the tests put in the environment and in what agents write.
SECRET = "sk-test-" + "d4shb0ard" * 4


def phasegate(
    repo: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the CLI as a script would: no terminal, stdin closed."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def write_script(repo: Path, script: dict[str, Any]) -> None:
    yaml = YAML(typ="safe", pure=True)
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        yaml.dump(script, handle)


def rejecting_then_approving_script() -> dict[str, Any]:
    """Every phase approved, except the first look at specify (one blocker, one warning)."""
    script = approving_script()
    script["chain-reviewer"] = {
        "specify": [
            {
                "verdict": {
                    "approved": False,
                    "summary": "Criteria missing",
                    "issues": [
                        {
                            "severity": "blocker",
                            "description": "No acceptance criteria",
                            "location": "spec.md",
                        },
                        {
                            "severity": "warning",
                            "description": "Scope not stated",
                            "location": None,
                        },
                    ],
                }
            },
            {"verdict": {"approved": True, "summary": "Clear now", "issues": []}},
        ],
        "*": [{"verdict": {"approved": True, "summary": "ok", "issues": []}}],
    }
    return script


def new_repo(path: Path, script: dict[str, Any] | None = None) -> Path:
    """An initialised repository with scripted agents and the item ``ITEM`` created."""
    root = init_repo(path)
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    write_script(root, script or rejecting_then_approving_script())
    created = phasegate(root, "new", ITEM, "--mode", "standard", "--description", "Add a limiter")
    assert created.returncode == 0, created.stderr
    return root


#: A work item of the ``gated`` workflow, which asks a person before it ends.
GATED = "gated-one"
GATED_WORKFLOW = """\
name: gated
description: A draft, then a person decides whether it goes on.
items_dir: work/gated
default_mode: standard
modes:
  standard: {max_iterations: 2}
roles:
  executor: {access: write}
  reviewer: {access: read-only}
nodes:
  - id: draft
    executor: executor
    outputs: [draft.md]
    reviewer: reviewer
  - id: go
    kind: gate
    question: "Go on with {{ item }}?"
    show: [draft.md]
    choices:
      yes: {to: done, description: ship it}
      no: {to: stopped, description: stop here}
  - id: done
    kind: end
  - id: stopped
    kind: end
    status: stopped
"""


def add_gated_workflow(root: Path) -> None:
    """The repository's own ``gated`` workflow, with its prompt templates."""
    folder = root / ".phasegate" / "workflows"
    prompts = folder / "prompts" / "gated"
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / "draft.md").write_text("Write {{ artifact_path }} for {{ item }}.\n")
    (prompts / "reviewer.md").write_text("Review the {{ phase }} of {{ item }}.\n")
    (folder / "gated.yaml").write_text(GATED_WORKFLOW)
    script_path = root / ".phasegate" / "agents.yaml"
    script = YAML(typ="safe", pure=True).load(script_path.read_text()) or {}
    script.setdefault("executor", {})["draft"] = [
        {"write": {"{item_dir}/draft.md": "# Draft\n\nA first cut.\n"}}
    ]
    write_script(root, script)


def new_gated_item(root: Path, item: str = GATED) -> None:
    """``item``, a new item of the ``gated`` workflow (added to the repository first)."""
    add_gated_workflow(root)
    created = phasegate(root, "new", item, "--workflow", "gated", "--description", "Try a gate")
    assert created.returncode == 0, created.stderr


def pending_decision(root: Path, item: str = GATED) -> None:
    """``item`` of the gated workflow, run until its gate waits for a person (exit 3)."""
    new_gated_item(root, item)
    ran = phasegate(root, "run", item)
    assert ran.returncode == 3, ran.stderr
    assert f"phasegate answer {item} go" in ran.stderr


def wait_until(
    condition: Callable[[], bool], timeout: float = 30, what: str = "the condition"
) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def journal_text(root: Path, item: str = ITEM, items_dir: str = "docs/features") -> str:
    path = root / items_dir / item / ".journal.jsonl"
    return path.read_text() if path.exists() else ""


@contextmanager
def served(root: Path, *args: str) -> Iterator[str]:
    """``phasegate serve --port 0`` in its own process; yields the address it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "serve", "--port", "0", *args],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"(http://\S+)", line)
        if found is None:
            proc.kill()
            problem = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"serve printed no address: {line!r} {problem!r}")
        yield found.group(1)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def gated_run(root: Path, control: Path, item: str = GATED) -> Iterator[subprocess.Popen[str]]:
    """A run of ``item`` (gated workflow) in its own process, steered through ``control``
    (see gated_run.py): its reviewer waits there, its gate waits for an answer."""
    control.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "gated_run.py"), str(root), item, str(control)],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
