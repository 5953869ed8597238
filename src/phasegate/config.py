"""``.phasegate/config.yaml``: commands, which backend serves each role, limits."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from phasegate.errors import ConfigError, os_reason
from phasegate.pydantic_plugins import skip_search
from phasegate.repo_paths import find_repo as find_repo
from phasegate.repo_paths import git_toplevel as git_toplevel
from phasegate.yaml_errors import yaml_problem

CONFIG_DIR = ".phasegate"
CONFIG_FILE = "config.yaml"

skip_search()  # before the first model: pydantic searches for no plug-in it cannot find


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


class Protection(BaseModel):
    """What happens when an agent changes phasegate's own files during its call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: ``fail``: the call counts as failed (and is retried); ``stop``: the run stops.
    on_violation: Literal["fail", "stop"] = "fail"


class BudgetCap(BaseModel):
    """A spending cap: USD and/or tokens (input plus output), either may be left out."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    tokens: int | None = Field(default=None, gt=0)

    @field_validator("usd", "tokens", mode="before")
    @classmethod
    def _a_number(cls, value: object) -> object:
        # YAML's `yes` or a quoted "5" would otherwise pass as 1 or 5.
        if isinstance(value, bool | str):
            raise ValueError("must be a number (no quotes, no unit)")
        return value


class BudgetSettings(BaseModel):
    """``budget:``: caps on one work item's agent spend, for the whole item and per role."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item: BudgetCap = BudgetCap()
    roles: dict[str, BudgetCap] = {}

    @field_validator("item", "roles", mode="before")
    @classmethod
    def _empty(cls, value: object, info: ValidationInfo) -> object:
        # `item: null`, `roles: {ROLE: null}`: no cap, set so (a workflow's budget removes them).
        if info.field_name == "item":
            return {"usd": None, "tokens": None} if value is None else value
        if isinstance(value, dict):
            return {k: {"usd": None, "tokens": None} if v is None else v for k, v in value.items()}
        return {} if value is None else value


#: Folders of ``.phasegate`` that phasegate itself keeps (no work item goes in them).
_PHASEGATE_OWN = frozenset({"locks", "cache", "worktrees", "workflows"})


class WorkflowSettings(BaseModel):
    """``workflows.NAME``: where its items live, and settings its plug-ins read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    items_dir: str | None = None
    #: Overrides the top-level ``budget`` cap by cap for this workflow's items.
    budget: BudgetSettings | None = None
    #: Read (and validated) by the workflow's own plug-ins (e.g. ``implement``'s escalation).
    settings: dict[str, Any] = {}

    @field_validator("items_dir")
    @classmethod
    def _items_dir_inside(cls, value: str | None) -> str | None:
        # A symlink out of the repository is refused where the folder is used (it needs the
        # repository's path); this catches what the text alone shows.
        if value is not None and (value.startswith("/") or ".." in value.split("/")):
            raise ValueError(f"{value!r} leads outside the repository: give a folder inside it")
        parts = [part for part in (value or "").split("/") if part not in ("", ".")]
        # Items there would sit among phasegate's locks and caches (git-ignored, guarded: an
        # item named `locks` would be that folder) or inside git's own database, where
        # nothing is committed. A folder of its own under .phasegate (implement's
        # .phasegate/implement) is fine.
        if parts[:1] == [".git"]:
            raise ValueError(f"{value!r}: .git is git's own folder; give a folder of the project")
        if parts[:1] == [CONFIG_DIR] and (len(parts) == 1 or parts[1] in _PHASEGATE_OWN):
            folder = "/".join(parts[:2])
            raise ValueError(
                f"{value!r}: {folder} is phasegate's own folder; give a folder of the project "
                f"(or one of its own under {CONFIG_DIR}, as {CONFIG_DIR}/NAME)"
            )
        return value


class Concurrency(BaseModel):
    """``concurrency:``: how many agents run at once in a parallel foreach.

    ``jobs`` overrides the ``parallel`` of every parallel foreach (as ``run
    --jobs`` does); ``agents`` caps the agent processes running at once in
    one run; ``backends`` caps them per backend (e.g. ``{claude: 2}``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    jobs: int | None = Field(default=None, ge=1, le=64)
    agents: int | None = Field(default=None, ge=1, le=64)
    backends: dict[str, int] = {}

    @field_validator("backends", mode="before")
    @classmethod
    def _empty(cls, value: object) -> object:
        return {} if value is None else value

    @field_validator("backends")
    @classmethod
    def _positive(cls, value: dict[str, int]) -> dict[str, int]:
        for name, cap in value.items():
            if cap < 1:
                raise ValueError(f"backends.{name} must be at least 1 (got {cap})")
        return value


NotifyEvent = Literal["waiting", "failed", "stopped", "completed"]


class NotifySettings(BaseModel):
    """``notify:``: a shell command run when a run stops for a person, fails, ends its
    item stopped (dropped), or completes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str = Field(min_length=1)
    on: tuple[NotifyEvent, ...] = ("waiting", "failed", "stopped", "completed")
    timeout: float = Field(default=30.0, gt=0)

    @field_validator("on", mode="before")
    @classmethod
    def _one_event(cls, value: object) -> object:
        # `on: waiting` names one event, as `on: [waiting]` does.
        if isinstance(value, list | tuple) and not value:
            raise ValueError(
                "names no event, so the command would never run (events: waiting, failed, "
                "stopped, completed; leave notify out to send none)"
            )
        return (value,) if isinstance(value, str) else value


class Config(BaseModel):
    """The whole configuration file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 1
    commands: dict[str, str] = {}
    roles: dict[str, RoleBinding] = {"default": RoleBinding(backend="scripted")}
    backends: dict[str, dict[str, Any]] = {}
    timeouts: Timeouts = Timeouts()
    retries: Retries = Retries()
    protection: Protection = Protection()
    workflows: dict[str, WorkflowSettings] = {}
    notify: NotifySettings | None = None
    concurrency: Concurrency = Concurrency()
    budget: BudgetSettings = BudgetSettings()
    #: The file this config was read from (set by :func:`load_config`), for messages.
    _path: Path | None = PrivateAttr(default=None)
    #: The config file :func:`load_config` looked for and did not find (the defaults).
    _missing: Path | None = PrivateAttr(default=None)

    @field_validator(
        "commands", "backends", "workflows", "concurrency", "budget", "protection", mode="before"
    )
    @classmethod
    def _empty_section(cls, value: object) -> object:
        # A section left with only comments in YAML reads as null.
        return {} if value is None else value

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != 1:
            raise ValueError(f"this phasegate reads version 1 of the config file, not {value}")
        return value

    @field_validator("backends", mode="before")
    @classmethod
    def _empty_backend(cls, value: object) -> object:
        # `claude:` followed only by commented-out settings reads as null.
        if isinstance(value, dict):
            return {name: {} if settings is None else settings for name, settings in value.items()}
        return value

    def binding(self, role: str) -> RoleBinding:
        """The binding of ``role``, falling back to ``roles.default``.

        A binding to a backend that is not installed is refused here, naming the key
        that set it (``roles.ROLE.backend``) and the file, as other config errors do.
        """
        key = role if role in self.roles else "default"
        found = self.roles.get(key)
        if found is None:
            raise ConfigError(
                f"no backend for role {role!r}: add roles.{role} or roles.default "
                "to .phasegate/config.yaml"
            )
        self._check_installed(key, found.backend)
        return found

    def unknown_backends(self) -> list[str]:
        """The config keys (``backends.NAME``, ``concurrency.backends.NAME``) naming a
        backend that is not installed: their settings would apply to nothing."""
        from phasegate import plugins
        from phasegate.agents.registry import ENTRY_POINT_GROUP

        installed = set(plugins.names(ENTRY_POINT_GROUP))
        keys = [f"backends.{name}" for name in self.backends if name not in installed]
        keys += [
            f"concurrency.backends.{name}"
            for name in self.concurrency.backends
            if name not in installed
        ]
        return keys

    def check_backend_names(self) -> None:
        """ConfigError naming the first setting for a backend that is not installed (a
        typo such as ``cluade`` would leave the real backend's settings unset)."""
        from phasegate import plugins
        from phasegate.agents.registry import ENTRY_POINT_GROUP

        unknown = self.unknown_backends()
        if not unknown:
            return
        where = self._path if self._path is not None else Path(CONFIG_DIR) / CONFIG_FILE
        name = unknown[0].rsplit(".", 1)[1]
        installed = ", ".join(sorted(plugins.names(ENTRY_POINT_GROUP))) or "none"
        raise ConfigError(
            f"{where}: {unknown[0]}: no backend named {name!r} is installed "
            f"(installed: {installed}); fix the name or remove the entry"
        )

    def check_workflow_names(self, repo: Path | None) -> None:
        """ConfigError naming the first ``workflows.NAME`` that names no workflow of the
        repository (built-in or its own): its settings, a budget among them, would apply to
        nothing (a typo such as ``reveiw-loop`` would leave the real workflow uncapped)."""
        if not self.workflows:
            return
        from phasegate.workflow.registry import WorkflowRegistry

        known = WorkflowRegistry(repo).names()
        for name in self.workflows:
            if name not in known:
                where = self._path if self._path is not None else Path(CONFIG_DIR) / CONFIG_FILE
                raise ConfigError(
                    f"{where}: workflows.{name}: names no workflow, so its settings would "
                    f"apply to nothing (workflows: {', '.join(known) or 'none'}); fix the "
                    "name or remove the entry"
                )

    def _check_installed(self, key: str, backend: str) -> None:
        from phasegate.agents.registry import backend_class, backend_classes

        if backend_class(backend) is not None:
            return
        installed = ", ".join(sorted(backend_classes())) or "none"
        where = self._path if self._path is not None else Path(CONFIG_DIR) / CONFIG_FILE
        raise ConfigError(
            f"{where}: roles.{key}.backend: unknown backend {backend!r} (installed: {installed})"
        )

    def setting_where(self, message: str, role: str) -> str:
        """``message`` of a backend serving ``role``, with a setting the role's own binding
        sets (``roles.ROLE.binary``) named there rather than under ``backends.NAME``."""
        if self._missing is not None:
            # No config file: the defaults bind every role to a scripted backend without
            # a script; `phasegate init` writes the config that binds them.
            return f"{message} ({missing_config(self._missing)})"
        key = role if role in self.roles else "default"
        binding = self.roles.get(key)
        if binding is None:
            return message
        for setting in binding.backend_settings():
            message = message.replace(
                f"(backends.{binding.backend}.{setting})", f"(roles.{key}.{setting})"
            )
        return message


def config_path(repo: Path) -> Path:
    return repo / CONFIG_DIR / CONFIG_FILE


def missing_config(path: Path) -> str:
    """Why the config file ``path`` is missing and what to do: ``there is no PATH: run
    'phasegate init'``, unless something not a folder stands where its folder belongs (a
    file named ``.phasegate``), which `phasegate init` refuses: that is named instead."""
    folder = path.parent
    if os.path.lexists(folder) and not folder.is_dir():
        return (
            f"there is no {path}: {folder} is not a folder; move it away, then run 'phasegate init'"
        )
    return f"there is no {path}: run 'phasegate init'"


def load_config(repo: Path) -> Config:
    """Read the repo's config; a missing file gives the defaults."""
    path = config_path(repo)
    if not path.exists():
        config = Config()
        config._missing = path
        return config
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except YAMLError as exc:
        raise ConfigError(yaml_problem(path, exc)) from None
    except UnicodeDecodeError as exc:  # saved in another encoding (an editor's Latin-1)
        line = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); save it as UTF-8"
        ) from None
    except OSError as exc:  # not a YAML problem: no permission, a folder in its place
        raise ConfigError(f"{path} cannot be read: {os_reason(exc)}") from None
    except Exception as exc:
        raise ConfigError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return Config()
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping")
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"{path}: {field}: {_message(error)}") from None
    config._path = path
    return config


#: What a section given as something else than a mapping should look like.
_MAPPING_EXAMPLES = {
    "roles": "a mapping such as {backend: claude, model: sonnet}",
    "budget": "a mapping such as {usd: 1, tokens: 200000}",
}


def _message(error: Any) -> str:
    """One validation error in the user's terms (no class names of phasegate's own)."""
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field" + _field_meant([str(p) for p in error["loc"]])
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        loc = [str(p) for p in error["loc"]]
        section = loc[0] if loc else ""
        if section == "workflows" and "budget" in loc:
            section = "budget"
        expected = "a mapping"
        if len(loc) >= 2 and section == "roles":
            expected = _MAPPING_EXAMPLES["roles"]
        elif section == "budget" and loc[-1] != "budget" and loc[-1] != "roles":
            expected = _MAPPING_EXAMPLES["budget"]
        value = error.get("input")
        got = f" (got {value!r})" if isinstance(value, str | int | float | bool) else ""
        return f"must be {expected}{got}"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    if kind == "missing":
        # A required key misspelt (`comand:`): name the misspelling, not only the key missing.
        import difflib

        wanted, given = str(error["loc"][-1]), error.get("input")
        keys = [str(k) for k in given] if isinstance(given, dict) else []
        close = difflib.get_close_matches(wanted, keys, n=1, cutoff=0.6)
        if close:
            return f"missing; {close[0]!r} is given: did you mean {wanted!r}?"
    loc = [str(p) for p in error["loc"]]
    if kind == "float_parsing" and ("timeouts" in loc[:1] or loc[-1:] == ["timeout"]):
        # ``10m``, ``90s``: the value is a number of seconds, written alone.
        value = error.get("input")
        got = f" (got {value!r})" if isinstance(value, str) else ""
        return f"must be a number of seconds, without a unit: 600, not 10m{got}"
    return str(error["msg"])


def _field_meant(loc: list[str]) -> str:
    """``; did you mean 'timeouts'?`` for the unknown field at ``loc``: a field spelt alike
    of the mapping that holds it (roles' and budgets' names are the user's own)."""
    import difflib
    import types
    import typing

    current: Any = Config
    for part in loc[:-1]:
        args = [a for a in typing.get_args(current) if a is not type(None)]
        if isinstance(current, types.UnionType) and len(args) == 1:
            current = args[0]  # X | None
        if isinstance(current, type) and issubclass(current, BaseModel):
            info = current.model_fields.get(part)
            if info is None:
                return ""
            current = info.annotation
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]  # a name of the user's: its value's type
        else:
            return ""
    args = [a for a in typing.get_args(current) if a is not type(None)]
    if isinstance(current, types.UnionType) and len(args) == 1:
        current = args[0]
    if not (isinstance(current, type) and issubclass(current, BaseModel)):
        return ""
    fields = list(current.model_fields)
    alike = [name for name in fields if name.lower() == loc[-1].lower()]  # `USD`: `usd`
    close = alike or difflib.get_close_matches(loc[-1], fields, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


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


#: The agent CLIs ``phasegate init`` looks for on PATH, in order of preference.
AGENT_CLIS: tuple[str, ...] = ("claude", "codex", "gemini")
#: Overrides detection: a comma-separated list of CLIs, or ``none``.
AGENT_CLIS_ENV = "PHASEGATE_AGENT_CLIS"


def detect_agent_clis() -> tuple[str, ...]:
    """The agent CLIs installed on PATH (``PHASEGATE_AGENT_CLIS`` overrides the search)."""
    forced = os.environ.get(AGENT_CLIS_ENV)
    if forced is not None:
        names = [n.strip() for n in forced.split(",") if n.strip()]
        return tuple(n for n in AGENT_CLIS if n in names)
    return tuple(name for name in AGENT_CLIS if shutil.which(name))


def default_roles(clis: tuple[str, ...]) -> tuple[str, str] | None:
    """``(executor backend, reviewer backend)`` for the installed CLIs, or ``None``.

    With two or more CLIs the reviewers run on a different one than the
    executor (cross-model review): claude executes, codex (else gemini) reviews.
    """
    if not clis:
        return None
    executor = clis[0]
    reviewers = [c for c in clis if c != executor]
    return executor, reviewers[0] if reviewers else executor


_BACKEND_EXAMPLES = {
    "claude": (
        "  claude:\n"
        "    # model: sonnet                 # default: Claude Code's own default\n"
        "    # tools: [Read, Glob, Grep, Edit, Write]   # what writers are offered (the default)\n"
        '    # allowed_tools: ["Read(./**)", "Bash(pytest:*)"]   # lets it run tests\n'
    ),
    "codex": ("  codex:\n    # model: gpt-5.5                # default: Codex's own default\n"),
    "gemini": (
        "  gemini:\n    # model: gemini-2.5-pro         # default: Gemini CLI's own default\n"
        "    # tools: [list_directory, read_file, glob, grep_search, replace, write_file]"
        "   # writers (the default)\n"
    ),
}


def _change_roles(clis: tuple[str, ...], executor: str) -> str:
    """The change workflow's writers: the implementer codes like the executor, and
    the proposal author runs on gemini when present (seed 002's Gemini / Codex /
    Claude split); its challenger and reviewer take the default."""
    lines = f"  implementer: {{backend: {executor}}}   # the change workflow's writers\n"
    author = "gemini" if "gemini" in clis else executor
    return lines + f"  proposal-author: {{backend: {author}}}\n"


def _roles_section(clis: tuple[str, ...]) -> str:
    chosen = default_roles(clis)
    if chosen is None:
        return (
            "# No agent CLI (claude, codex, gemini) was found on PATH: the scripted\n"
            "# backend answers from .phasegate/agents.yaml, a script to write (see\n"
            "# docs/backends.md#without-a-model-scripted-and-auto); `default: {backend:\n"
            "# auto}` walks a workflow with placeholder answers instead. Install a CLI and\n"
            "# point the roles at it, e.g. `default: {backend: claude}` (docs/backends.md).\n"
            "roles:\n"
            "  default: {backend: scripted}\n"
            "\n"
            "# Settings per backend.\n"
            "backends:\n"
            "  scripted:\n"
            "    script: .phasegate/agents.yaml\n"
        )
    executor, reviewer = chosen
    if executor == reviewer:
        roles = f"roles:\n  default: {{backend: {executor}}}\n"
        note = f"# Found on PATH: {executor}. Every role runs on it.\n"
    else:
        roles = f"roles:\n  default: {{backend: {reviewer}}}   # the reviewers\n"
        roles += f"  executor: {{backend: {executor}}}\n"
        roles += _change_roles(clis, executor)
        note = (
            f"# Found on PATH: {', '.join(clis)}. The executor runs on {executor} and the\n"
            f"# reviewers on {reviewer} (cross-model review).\n"
        )
    examples = "".join(_BACKEND_EXAMPLES[name] for name in clis)
    return (
        f"{note}{roles}"
        "\n"
        "# Settings per backend (docs/backends.md lists them all). Writers may edit\n"
        "# files in the work tree only; bypass_permissions: true lifts that (opt-in).\n"
        "backends:\n"
        f"{examples}"
    )


def render_default_config(test_command: str | None, clis: tuple[str, ...] | None = None) -> str:
    """The commented config ``phasegate init`` writes (``clis``: default, those on PATH)."""
    test = (
        f"  test: {json.dumps(test_command)}\n"
        if test_command
        # Left as comments, the section reads as empty; uncommented, it holds ``test``.
        else "  # test: python -m pytest -q\n"
    )
    found = detect_agent_clis() if clis is None else clis
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
        "# Backends: claude, codex, gemini (agent CLIs), openai (an OpenAI-compatible\n"
        "# server), scripted (answers from a script); `phasegate doctor` says which\n"
        "# are usable here.\n"
        f"{_roles_section(found)}"
        "\n"
        "timeouts:\n"
        "  agent: 900   # seconds one agent call may take (the process tree is killed after)\n"
        "  check: 600   # seconds one check command may take\n"
        "\n"
        "retries:\n"
        "  agent: 1     # extra attempts after an agent call fails (timeouts included)\n"
        "\n"
        "# An agent that changes phasegate's own files (this folder, an item's state\n"
        "# files or journal) has them put back; its call fails (fail) or the run stops (stop).\n"
        "protection:\n"
        "  on_violation: fail\n"
        "\n"
        "# Spending caps per work item, in USD and/or tokens; a call that would pass one\n"
        "# stops the run at the `budget` decision (README: Budget caps).\n"
        "# budget:\n"
        "#   item: {usd: 5, tokens: 2000000}\n"
        "#   roles: {final-reviewer: {usd: 1}}   # a workflow role, or an agent's name\n"
    )
