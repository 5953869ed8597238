"""``phasegate run NAME`` imports only what the run uses: the backends its roles are bound
to (not every installed one, nor the SDKs of the others), no other workflow's plug-ins for
a feature item, never the dashboard's web server, and none of rich's heavy parts
(syntax highlighting, markdown) that its progress lines do not print."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

from phasegate.testing import Reply, Rule, Script, StubLLMServer

#: What no run of a feature item needs, whatever its backends.
NEVER = (
    "mcp",
    "starlette",
    "uvicorn",
    "pygments",
    "rich.syntax",
    "rich.markdown",
    "phasegate.dashboard",
    "phasegate.change",
    "phasegate.team",
    "phasegate.implement",
)
#: The module of each backend kind, and the SDK only that kind needs.
BACKEND_MODULES = {
    "scripted": ("phasegate.agents.scripted",),
    "claude": ("phasegate.agents.claude",),
    "codex": ("phasegate.agents.codex",),
    "gemini": ("phasegate.agents.gemini",),
    "openai": ("phasegate.agents.openai_chat", "openai"),
    "auto": ("phasegate.agents.auto",),
}

CODE = """
import json, sys
from phasegate.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

#: Answers ``--version`` like the agent CLIs do; any agent call fails (exit 1).
FAKE_CLI = """#!/bin/sh
case "$1" in --version|-v|version) echo "2.1.330"; exit 0;; esac
echo "this agent refuses every task" >&2
exit 1
"""


def _env(root: Path) -> dict[str, str]:
    fakes = root.parent / "bin"
    fakes.mkdir(exist_ok=True)
    for name in ("claude", "codex", "gemini"):
        (fakes / name).write_text(FAKE_CLI)
        (fakes / name).chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{fakes}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_CACHE_HOME"] = str(root.parent / "cache")  # a cache of this test's own
    env["OPENAI_API_KEY"] = "sk-stub-not-a-real-key"
    return env


def _phasegate(root: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    """``phasegate *args`` in a new process: exit code and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-c", CODE, *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["stderr"] = done.stderr
    return found


def _feature_item(root: Path, env: dict[str, str], executor: str, settings: str = "") -> None:
    """A repository whose item ``x`` (feature workflow) has its executor on ``executor``
    and its reviewers on the scripted backend; its workflows are validated and cached."""
    init_repo(root)
    assert _phasegate(root, env, "init", "--test-command", "true")["code"] == 0
    with open(root / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    config = root / ".phasegate" / "config.yaml"
    text = config.read_text().replace(
        "  default: {backend: scripted}\n",
        f"  default: {{backend: scripted}}\n  executor: {{backend: {executor}}}\n",
    )
    config.write_text(text.replace("backends:\n", f"backends:\n{settings}", 1))
    assert _phasegate(root, env, "new", "x", "--description", "a feature")["code"] == 0
    assert _phasegate(root, env, "status", "x")["code"] == 0  # validates, caches workflows


def _unused(modules: list[str], executor: str) -> list[str]:
    """The modules in ``modules`` that a run with its executor on ``executor`` and its
    reviewers on the scripted backend does not use."""
    used = {"scripted", executor}
    unused = NEVER + tuple(
        m for kind in BACKEND_MODULES if kind not in used for m in BACKEND_MODULES[kind]
    )
    return [m for m in modules if m in unused or m.startswith(tuple(f"{u}." for u in unused))]


def test_run_of_a_feature_item_imports_no_sdk_it_does_not_use(tmp_path: Path) -> None:
    """A feature item run to the end on the scripted backend imports no other backend
    (claude, codex, gemini, openai, auto), neither the openai nor the MCP SDK, none of the
    change, team or implement workflows' modules, no dashboard and no rich syntax or
    markdown rendering."""
    root = tmp_path / "repo"
    env = _env(root)
    _feature_item(root, env, "scripted")
    found = _phasegate(root, env, "run", "x")
    assert found["code"] == 0, found["stderr"]
    assert "phasegate.agents.scripted" in found["modules"]
    assert _unused(found["modules"], "scripted") == []


@pytest.mark.parametrize("executor", ["claude", "codex", "gemini"])
def test_run_on_an_agent_cli_imports_that_backend_alone(tmp_path: Path, executor: str) -> None:
    """An executor on an agent CLI: the run imports that CLI's backend and the scripted
    reviewers' one, not the other CLIs', the openai SDK or the MCP SDK (the agent, which
    refuses every task here, is really started: the run stops with the agent's error)."""
    root = tmp_path / "repo"
    env = _env(root)
    _feature_item(root, env, executor)
    found = _phasegate(root, env, "run", "x", "--until", "brainstorm")
    assert found["code"] != 0 and "this agent refuses every task" in found["stderr"]
    journal = (root / "docs" / "features" / "x" / ".journal.jsonl").read_text()
    assert f'"backend": "{executor}"' in journal  # dispatched to the CLI
    assert BACKEND_MODULES[executor][0] in found["modules"]
    assert _unused(found["modules"], executor) == []


def test_run_on_the_openai_backend_imports_its_sdk_and_no_other(tmp_path: Path) -> None:
    """An executor on an OpenAI-compatible server imports the openai SDK (it uses it), and
    still no agent CLI backend, no MCP SDK and no other workflow's modules."""
    files = {"summary": "wrote it", "files": [], "delete": []}
    files["files"] = [{"path": "docs/features/x/brainstorm.md", "content": "# Brainstorm\n"}]
    script = Script(openai=[Rule(Reply(text=json.dumps(files)))])
    root = tmp_path / "repo"
    env = _env(root)
    with StubLLMServer(script) as stub:
        settings = f"  openai:\n    base_url: {stub.openai_url}\n    model: stub-chat-model\n"
        _feature_item(root, env, "openai", settings)
        found = _phasegate(root, env, "run", "x", "--until", "brainstorm")
        assert stub.model_requests("openai")
    assert found["code"] == 0, found["stderr"]
    assert "openai" in found["modules"]
    assert _unused(found["modules"], "openai") == []


def test_status_of_one_item_imports_no_verdict_reader_and_no_backend(tmp_path: Path) -> None:
    """``phasegate status NAME`` shows verdicts already recorded: it builds none of the
    verdict readers' patterns, imports no backend (not even the scripted one its roles use)
    and no worktree code, and still shows the item."""
    root = tmp_path / "repo"
    env = _env(root)
    _feature_item(root, env, "scripted")
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", "status", "x"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found = _phasegate(root, env, "status", "x")
    assert found["code"] == 0 and "x (feature" in done.stdout
    loaded = set(found["modules"])
    assert not loaded & {"phasegate.verdicts.readers", "phasegate.verdicts.text"}
    assert not loaded & {"phasegate.agents.scripted", "phasegate.engine.worktree"}
    assert not [
        m
        for m in loaded
        if m.startswith(("phasegate.agents.", "openai", "mcp")) and m != "phasegate.agents.base"
    ]
