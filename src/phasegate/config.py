"""``.phasegate/config.yaml``: commands, which backend serves each role, limits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from phasegate.errors import ConfigError

CONFIG_DIR = ".phasegate"
CONFIG_FILE = "config.yaml"


class RoleBinding(BaseModel):
    """Which backend (and model) serves a role; other keys go to the backend."""

    model_config = ConfigDict(extra="allow", frozen=True)

    backend: str
    model: str | None = None
    timeout: float | None = Field(default=None, gt=0)

    def backend_settings(self) -> dict[str, Any]:
        extra = dict(self.model_extra or {})
        if self.model:
            extra["model"] = self.model
        return extra


class Timeouts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: float = Field(default=900.0, gt=0)
    check: float = Field(default=600.0, gt=0)


class Retries(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: int = Field(default=1, ge=0, le=10)


class WorkflowSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    items_dir: str | None = None


class Config(BaseModel):
    """The whole configuration file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 1
    commands: dict[str, str] = {}
    roles: dict[str, RoleBinding] = {"default": RoleBinding(backend="scripted")}
    backends: dict[str, dict[str, Any]] = {}
    timeouts: Timeouts = Timeouts()
    retries: Retries = Retries()
    workflows: dict[str, WorkflowSettings] = {}

    @field_validator("commands", "backends", "workflows", mode="before")
    @classmethod
    def _empty_section(cls, value: object) -> object:
        # A section left with only comments in YAML reads as null.
        return {} if value is None else value

    def binding(self, role: str) -> RoleBinding:
        """The binding of ``role``, falling back to ``roles.default``."""
        if role in self.roles:
            return self.roles[role]
        if "default" in self.roles:
            return self.roles["default"]
        raise ConfigError(
            f"no backend for role {role!r}: add roles.{role} or roles.default "
            "to .phasegate/config.yaml"
        )


def config_path(repo: Path) -> Path:
    return repo / CONFIG_DIR / CONFIG_FILE


def load_config(repo: Path) -> Config:
    """Read the repo's config; a missing file gives the defaults."""
    path = config_path(repo)
    if not path.exists():
        return Config()
    from ruamel.yaml import YAML

    try:
        data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except Exception as exc:
        raise ConfigError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return Config()
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping")
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
        raise ConfigError(f"{path}: {field}: {message}") from None


def find_repo(start: Path) -> Path:
    """The repository phasegate works in: the nearest ``.phasegate`` or git top level."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if (directory / CONFIG_DIR / CONFIG_FILE).is_file():
            return directory
    top = git_toplevel(start)
    if top is None:
        raise ConfigError(
            f"{start} is not inside a git repository: run 'git init' and 'phasegate init' first"
        )
    return top


def git_toplevel(path: Path) -> Path | None:
    """The git work tree containing ``path``, or ``None``."""
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else None


def detect_test_command(repo: Path) -> str | None:
    """A sensible default test command for the project in ``repo``, if one is evident."""
    if (repo / "pyproject.toml").exists() or (repo / "tests").is_dir():
        return "python -m pytest -q"
    if (repo / "package.json").exists():
        return "npm test"
    if (repo / "Cargo.toml").exists():
        return "cargo test"
    if (repo / "go.mod").exists():
        return "go test ./..."
    if (repo / "Makefile").exists():
        return "make test"
    return None


def render_default_config(test_command: str | None) -> str:
    """The commented config ``phasegate init`` writes."""
    test = (
        f"  test: {json.dumps(test_command)}\n"
        if test_command
        else "  {}\n  # test: python -m pytest -q\n"
    )
    return (
        "# phasegate configuration (see README: Configuration)\n"
        "version: 1\n"
        "\n"
        "# Shell commands that phases run as checks (the feature workflow's implement\n"
        "# and verify phases run `test`; a failing check goes back to the executor).\n"
        "commands:\n"
        f"{test}"
        "\n"
        "# Which backend serves each role. `default` covers roles not listed.\n"
        "# Backends: scripted (answers from a script, for tests and demos); see\n"
        "# `phasegate doctor` for the ones usable on this machine.\n"
        "roles:\n"
        "  default: {backend: scripted}\n"
        "\n"
        "# Settings per backend.\n"
        "backends:\n"
        "  scripted:\n"
        "    script: .phasegate/agents.yaml\n"
        "\n"
        "timeouts:\n"
        "  agent: 900   # seconds one agent call may take\n"
        "  check: 600   # seconds one check command may take\n"
        "\n"
        "retries:\n"
        "  agent: 1     # extra attempts after an agent call fails\n"
    )
