"""``phasegate doctor`` and ``phasegate init``'s backend defaults, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from backend_helpers import fake_cli, init_git_repo, openai_settings
from ruamel.yaml import YAML

from phasegate.config import load_config
from phasegate.testing import StubLLMServer


def phasegate(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, **env},
    )


def write_config(root: Path, config: dict[str, Any]) -> None:
    (root / ".phasegate").mkdir(exist_ok=True)
    with open(root / ".phasegate" / "config.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(config, handle)


def test_doctor_says_why_a_backend_cannot_run(tmp_path: Path) -> None:
    """A missing CLI is named with its path; a role bound to it makes doctor exit 6."""
    root = init_git_repo(tmp_path / "repo")
    missing = tmp_path / "nowhere" / "codex"
    write_config(
        root,
        {
            "roles": {"default": {"backend": "codex"}},
            "backends": {"codex": {"binary": str(missing)}},
        },
    )
    result = phasegate(root, "doctor")
    assert result.returncode == 6, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("codex "))
    assert "not usable" in line and str(missing) in line
    assert "roles bound to a backend that cannot run here" in result.stderr
    assert "chain-reviewer (codex)" in result.stderr


def test_doctor_reports_version_and_credentials(tmp_path: Path) -> None:
    """A usable CLI is listed with its version, path and where its credentials come from."""
    root = init_git_repo(tmp_path / "repo")
    binary = fake_cli(tmp_path / "bin", "claude")
    write_config(root, {"backends": {"claude": {"binary": str(binary)}}})
    result = phasegate(root, "doctor", "--json")
    rows = {r["backend"]: r for r in json.loads(result.stdout)["backends"]}
    assert rows["claude"]["usable"] is True
    assert rows["claude"]["detail"] == (f"claude 9.9.9 at {binary}; credentials: ANTHROPIC_API_KEY")


def test_doctor_passes_when_every_role_can_run(tmp_path: Path) -> None:
    """Roles on a reachable OpenAI-compatible server: all usable, exit 0."""
    root = init_git_repo(tmp_path / "repo")
    with StubLLMServer() as stub:
        write_config(
            root,
            {
                "roles": {"default": {"backend": "openai"}},
                "backends": {"openai": openai_settings(stub)},
            },
        )
        result = phasegate(root, "doctor", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert {r["role"] for r in report["roles"]} >= {"executor", "chain-reviewer", "final-reviewer"}
    assert all(r["usable"] and r["backend"] == "openai" for r in report["roles"])


def test_init_puts_reviewers_on_another_cli_than_the_executor(tmp_path: Path) -> None:
    """With claude and codex installed: executor on claude, reviewers on codex."""
    root = init_git_repo(tmp_path / "repo")
    result = phasegate(
        root, "init", "--test-command", "make check", PHASEGATE_AGENT_CLIS="claude,codex"
    )
    assert result.returncode == 0, result.stderr
    config = load_config(root)
    assert config.binding("executor").backend == "claude"
    assert config.binding("chain-reviewer").backend == "codex"
    assert config.commands == {"test": "make check"}


def test_init_gives_the_change_workflow_seed_002s_split(tmp_path: Path) -> None:
    """All three CLIs: proposal author on gemini, challenger and reviewer on codex,
    implementer on claude (seed 002's Gemini / Codex / Claude split)."""
    root = init_git_repo(tmp_path / "repo")
    phasegate(root, "init", PHASEGATE_AGENT_CLIS="claude,codex,gemini")
    config = load_config(root)
    roles = ("proposal-author", "challenger", "implementer", "reviewer")
    assert [config.binding(r).backend for r in roles] == ["gemini", "codex", "claude", "codex"]


def test_init_without_any_cli_uses_the_scripted_backend(tmp_path: Path) -> None:
    """No agent CLI found: the scripted backend, with a comment saying how to switch."""
    root = init_git_repo(tmp_path / "repo")
    result = phasegate(root, "init", PHASEGATE_AGENT_CLIS="none")
    assert result.returncode == 0, result.stderr
    config = load_config(root)
    assert config.binding("executor").backend == "scripted"
    text = (root / ".phasegate" / "config.yaml").read_text()
    assert "No agent CLI (claude, codex, gemini) was found on PATH" in text


def test_init_with_one_cli_runs_every_role_on_it(tmp_path: Path) -> None:
    """Only gemini installed: every role runs on gemini."""
    root = init_git_repo(tmp_path / "repo")
    phasegate(root, "init", PHASEGATE_AGENT_CLIS="gemini")
    config = load_config(root)
    assert config.binding("executor").backend == "gemini"
    assert config.binding("final-reviewer").backend == "gemini"


def _feature_on_openai_change_on_missing_codex(
    root: Path, stub: StubLLMServer, missing: Path
) -> None:
    write_config(
        root,
        {
            "roles": {
                "default": {"backend": "openai"},
                "implementer": {"backend": "codex"},
                "challenger": {"backend": "codex"},
            },
            "backends": {"openai": openai_settings(stub), "codex": {"binary": str(missing)}},
        },
    )


def test_doctor_passes_when_only_an_unused_workflows_roles_cannot_run(tmp_path: Path) -> None:
    """Roles of workflows with no work items (here `change` and `implement`, which both have
    an `implementer`) do not fail doctor; it says so."""
    root = init_git_repo(tmp_path / "repo")
    with StubLLMServer() as stub:
        _feature_on_openai_change_on_missing_codex(root, stub, tmp_path / "nowhere" / "codex")
        result = phasegate(root, "doctor")
        as_json = phasegate(root, "doctor", "--json")
    assert result.returncode == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("implementer "))
    assert "not needed: change, implement have no work items" in line
    roles = {r["role"]: r for r in json.loads(as_json.stdout)["roles"]}
    assert roles["implementer"]["needed"] is False and roles["executor"]["needed"] is True


def test_doctor_fails_once_that_workflow_has_work_items(tmp_path: Path) -> None:
    """A change in the repository puts the change workflow in use: its roles must run."""
    root = init_git_repo(tmp_path / "repo")
    (root / "changes" / "add-oauth").mkdir(parents=True)
    (root / "changes" / "add-oauth" / "STATE.yaml").write_text("change_id: add-oauth\n")
    with StubLLMServer() as stub:
        _feature_on_openai_change_on_missing_codex(root, stub, tmp_path / "nowhere" / "codex")
        result = phasegate(root, "doctor")
    assert result.returncode == 6, result.stdout
    assert "challenger (codex), implementer (codex)" in result.stderr


def test_doctor_says_gemini_needs_its_auth_type_selected_with_a_base_url(tmp_path: Path) -> None:
    """GEMINI_API_KEY with a base URL but no auth type selected: headless Gemini exits 41."""
    root = init_git_repo(tmp_path / "repo")
    home = tmp_path / "home"
    binary = fake_cli(tmp_path / "bin", "gemini")
    write_config(
        root,
        {
            "roles": {"default": {"backend": "gemini"}},
            "backends": {
                "gemini": {
                    "binary": str(binary),
                    "base_url": "http://127.0.0.1:9",
                    "config_dir": str(home),
                }
            },
        },
    )
    result = phasegate(root, "doctor", GEMINI_API_KEY="gemini-key-0123456789")
    assert result.returncode == 6
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("gemini "))
    assert "not usable" in line and "selectedType" in line
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"security": {"auth": {"selectedType": "gemini-api-key"}}}')
    result = phasegate(root, "doctor", GEMINI_API_KEY="gemini-key-0123456789")
    assert result.returncode == 0, result.stdout + result.stderr
