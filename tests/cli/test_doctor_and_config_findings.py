"""``doctor`` and backend settings as a user meets them: a password in a ``base_url`` is
never printed, a ``config_dir`` that cannot be a folder is a config error naming the
setting (not an internal error), and a role bound to a backend that is not installed is
named where it was set."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from test_cli import phasegate, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
sys.path.insert(0, str(Path(__file__).parent.parent / "backends"))
from backend_helpers import fake_cli
from engine_helpers import approving_script, init_repo

from phasegate.testing import StubLLMServer

PASSWORD = "pwSecretXY77"


def write_config(root: Path, config: dict[str, Any]) -> None:
    (root / ".phasegate").mkdir(exist_ok=True)
    with open(root / ".phasegate" / "config.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(config, handle)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    write_script(root, approving_script())
    assert phasegate(root, "new", "item", "-d", "Add rate limiting").returncode == 0
    return root


def one_line_error(result: Any) -> str:
    """The one error line of a run refused with exit 2 (after its progress lines)."""
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [x for x in result.stderr.strip().splitlines() if not x.startswith("\u25b6")]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("phasegate: error: "), result.stderr
    return lines[0]


def nothing_dispatched(repo: Path) -> None:
    item_dir = repo / "docs" / "features" / "item"
    journal = item_dir / ".journal.jsonl"
    if journal.exists():
        assert "agent.dispatched" not in journal.read_text()
    # The item is still there and readable: nothing recorded was lost.
    status = phasegate(repo, "status", "item")
    assert status.returncode == 0, status.stderr


# -- 1. doctor hides the password of a base_url ----------------------------------------


def test_doctor_redacts_the_password_in_an_openai_base_url(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    with StubLLMServer() as stub:
        url = stub.openai_url.replace("://", f"://bob:{PASSWORD}@", 1)
        write_config(
            root,
            {
                "roles": {"default": {"backend": "openai"}},
                "backends": {"openai": {"base_url": url, "model": "stub"}},
            },
        )
        text = phasegate(root, "doctor")
        as_json = phasegate(root, "doctor", "--json")
    for result in (text, as_json):
        assert PASSWORD not in result.stdout + result.stderr
    assert "://bob:[REDACTED]@127.0.0.1" in text.stdout
    rows = {r["backend"]: r for r in json.loads(as_json.stdout)["backends"]}
    assert "://bob:[REDACTED]@127.0.0.1" in rows["openai"]["detail"]


def test_doctor_redacts_the_password_in_a_codex_base_url(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    binary = fake_cli(tmp_path / "bin", "codex")
    url = f"http://bob:{PASSWORD}@127.0.0.1:9/v1"
    write_config(root, {"backends": {"codex": {"binary": str(binary), "base_url": url}}})
    env = {"OPENAI_API_KEY": "sk-stub-key-for-tests-only-0000"}
    text = phasegate(root, "doctor", env=env)
    as_json = phasegate(root, "doctor", "--json", env=env)
    for result in (text, as_json):
        assert PASSWORD not in result.stdout + result.stderr
    line = next(x for x in text.stdout.splitlines() if x.strip().startswith("codex "))
    assert "http://bob:[REDACTED]@127.0.0.1:9/v1" in line, line
    rows = {r["backend"]: r for r in json.loads(as_json.stdout)["backends"]}
    assert "http://bob:[REDACTED]@127.0.0.1:9/v1" in rows["codex"]["detail"]


# -- 2. a config_dir that cannot be a folder -------------------------------------------


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_a_config_dir_that_cannot_be_a_folder_is_a_config_error(
    repo: Path, tmp_path: Path, where: str
) -> None:
    binary = fake_cli(tmp_path / "bin", "claude")
    taken = tmp_path / "taken"
    taken.write_text("not a folder\n")
    config_dir = taken if where == "a file" else taken / "claude-home"
    write_config(
        repo,
        {
            "commands": {"test": "true"},
            "roles": {"default": {"backend": "claude"}},
            "backends": {"claude": {"binary": str(binary), "config_dir": str(config_dir)}},
        },
    )
    line = one_line_error(phasegate(repo, "run", "item"))
    assert "internal error" not in line
    assert "backends.claude.config_dir" in line and str(config_dir) in line
    nothing_dispatched(repo)
    assert taken.read_text() == "not a folder\n"
    # doctor says the same of the backend, and does not crash either
    doctor = phasegate(repo, "doctor", "--json")
    assert doctor.returncode == 6, doctor.stderr
    rows = {r["backend"]: r for r in json.loads(doctor.stdout)["backends"]}
    assert rows["claude"]["usable"] is False
    assert "backends.claude.config_dir" in rows["claude"]["detail"]


def test_a_config_dir_under_proc_is_a_config_error(repo: Path, tmp_path: Path) -> None:
    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    binary = fake_cli(tmp_path / "bin", "claude")
    write_config(
        repo,
        {
            "commands": {"test": "true"},
            "roles": {"default": {"backend": "claude"}},
            "backends": {"claude": {"binary": str(binary), "config_dir": "/proc/phasegate-x"}},
        },
    )
    line = one_line_error(phasegate(repo, "run", "item"))
    assert "backends.claude.config_dir" in line and "/proc/phasegate-x" in line
    nothing_dispatched(repo)


# -- 3. a role bound to a backend that is not installed --------------------------------


@pytest.mark.parametrize("role", ["default", "executor"])
def test_an_unknown_backend_is_named_where_it_was_set(repo: Path, role: str) -> None:
    roles = {"default": {"backend": "scripted"}, role: {"backend": "nosuch"}}
    write_config(repo, {"commands": {"test": "true"}, "roles": roles})
    line = one_line_error(phasegate(repo, "run", "item"))
    assert f".phasegate/config.yaml: roles.{role}.backend: unknown backend 'nosuch'" in line
    assert "scripted" in line  # the installed ones are listed
    nothing_dispatched(repo)


def test_doctor_names_where_an_unknown_backend_was_set(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    write_config(root, {"roles": {"default": {"backend": "nosuch"}}})
    result = phasegate(root, "doctor", "--json")
    assert result.returncode == 2, result.stderr  # not installed: a config error, as in `run`
    rows = {r["role"]: r for r in json.loads(result.stdout)["roles"]}
    assert "roles.default.backend: unknown backend 'nosuch'" in rows["executor"]["detail"]
    assert rows["executor"]["backend"] == "nosuch"


def test_a_config_dir_set_on_the_role_is_named_there(repo: Path, tmp_path: Path) -> None:
    """Set as roles.default.config_dir, the error named backends.claude.config_dir."""
    binary = fake_cli(tmp_path / "bin", "claude")
    taken = tmp_path / "taken"
    taken.write_text("not a folder\n")
    write_config(
        repo,
        {
            "commands": {"test": "true"},
            "roles": {"default": {"backend": "claude", "config_dir": str(taken)}},
            "backends": {"claude": {"binary": str(binary)}},
        },
    )
    line = one_line_error(phasegate(repo, "run", "item"))
    assert "(roles.default.config_dir)" in line and "backends.claude" not in line
    nothing_dispatched(repo)


# -- 4. config values that were accepted and did nothing ----------------------------------


def test_a_config_version_this_phasegate_does_not_read_is_refused(repo: Path) -> None:
    write_config(repo, {"version": 99, "commands": {"test": "true"}})
    result = phasegate(repo, "status")
    assert result.returncode == 2, result.stderr
    assert "config.yaml: version: this phasegate reads version 1" in result.stderr


def test_settings_for_a_backend_not_installed_are_refused_by_run_and_doctor(repo: Path) -> None:
    """``backends.cluade`` (a typo) configured nothing: the run used claude's defaults."""
    write_config(
        repo,
        {
            "commands": {"test": "true"},
            "roles": {"default": {"backend": "scripted"}},
            "backends": {
                "scripted": {"script": ".phasegate/agents.yaml"},
                "cluade": {"model": "opus"},
            },
        },
    )
    line = one_line_error(phasegate(repo, "run", "item"))
    assert "backends.cluade: no backend named 'cluade' is installed" in line
    nothing_dispatched(repo)
    doctor = phasegate(repo, "doctor", "--json")
    assert doctor.returncode == 2, doctor.stderr
    rows = {r["backend"]: r for r in json.loads(doctor.stdout)["backends"]}
    assert rows["cluade"]["usable"] is False
    assert "backends.cluade" in doctor.stderr


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"pass_env": ["MY-TOKEN"]}, "pass_env: 'MY-TOKEN' is not the name of an environment"),
        ({"binary": ""}, "binary: empty: give the CLI's path or name"),
    ],
)
def test_backend_settings_that_cannot_be_meant_are_refused(
    repo: Path, tmp_path: Path, setting: dict[str, Any], message: str
) -> None:
    binary = fake_cli(tmp_path / "bin", "claude")
    write_config(
        repo,
        {
            "commands": {"test": "true"},
            "roles": {"default": {"backend": "claude"}},
            "backends": {"claude": {"binary": str(binary), **setting}},
        },
    )
    result = phasegate(repo, "run", "item")
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "backends.claude" in result.stderr
    nothing_dispatched(repo)
