"""Backend settings and probes as ``run`` and ``doctor`` meet them: a bad setting of any
role's backend stops a run before its first call, naming the role; a version probe that
printed something else shows it; ``doctor -C`` of a missing folder is one line."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from test_cli import phasegate, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
sys.path.insert(0, str(Path(__file__).parent.parent / "backends"))
from backend_helpers import help_listing
from engine_helpers import approving_script, init_repo
from ruamel.yaml import YAML

from phasegate.agents.claude import ClaudeBackend


def write_config(root: Path, config: dict[str, Any]) -> None:
    with open(root / ".phasegate" / "config.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(config, handle)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    write_script(root, approving_script())
    assert phasegate(root, "new", "item", "-d", "Add rate limiting").returncode == 0
    return root


def test_a_bad_setting_of_a_later_roles_backend_stops_the_run_before_any_call(
    repo: Path,
) -> None:
    write_config(
        repo,
        {
            "commands": {"test": "true"},
            "roles": {"default": {"backend": "scripted"}, "final-reviewer": {"backend": "gemini"}},
            "backends": {
                "scripted": {"script": ".phasegate/agents.yaml"},
                "gemini": {"binray": "x", "binary": "/nowhere/gemini"},
            },
        },
    )
    result = phasegate(repo, "run", "item")
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [x for x in result.stderr.strip().splitlines() if x.startswith("phasegate:")]
    assert len(lines) == 1, result.stderr
    assert "binray: unknown setting" in lines[0]
    assert "final-reviewer" in lines[0] and "backends.gemini" in lines[0]
    journal = repo / "docs" / "features" / "item" / ".journal.jsonl"
    assert not journal.exists() or "agent.dispatched" not in journal.read_text()


def test_a_bad_setting_of_a_roles_own_binding_names_it_there(repo: Path) -> None:
    write_config(
        repo,
        {
            "commands": {"test": "true"},
            "roles": {
                "default": {"backend": "scripted"},
                "chain-reviewer": {"backend": "claude", "pass_env": ["MY-TOKEN"]},
            },
            "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
        },
    )
    result = phasegate(repo, "run", "item")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "'MY-TOKEN' is not the name of an environment variable" in result.stderr
    assert "chain-reviewer" in result.stderr


def _garbage_claude(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    help_file = directory / "help.txt"
    help_file.write_text(help_listing(ClaudeBackend), encoding="utf-8")
    path = directory / "claude"
    path.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo garbage-version; exit 0;; '
        f'--help) cat "{help_file}"; exit 0;; esac\n'
        "cat > /dev/null\n",
        encoding="utf-8",
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_version_that_is_not_one_is_shown_by_run_and_doctor(repo: Path, tmp_path: Path) -> None:
    binary = _garbage_claude(tmp_path / "bin")
    write_config(
        repo,
        {
            "commands": {"test": "true"},
            "roles": {"default": {"backend": "claude"}},
            "backends": {"claude": {"binary": str(binary)}},
        },
    )
    expected = "printed 'garbage-version', which is not a version"
    run = phasegate(repo, "run", "item")
    assert run.returncode == 6, run.stdout + run.stderr
    assert expected in run.stderr
    doctor = phasegate(repo, "doctor", "--json")
    assert doctor.returncode == 6, doctor.stderr
    rows = {r["backend"]: r for r in json.loads(doctor.stdout)["backends"]}
    assert expected in rows["claude"]["detail"]


def test_doctor_with_a_repo_folder_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "does-not-exist"
    result = phasegate(tmp_path, "doctor", "-C", str(missing))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.strip() == f"phasegate: error: --repo {missing} is not a directory"
    status = phasegate(tmp_path, "status", "-C", str(missing))
    assert status.stderr.strip() == result.stderr.strip()
