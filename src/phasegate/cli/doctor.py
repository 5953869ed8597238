"""``phasegate doctor``: which agent backends can run here, and why not.

Every installed backend is checked (CLI found, version recent enough,
credentials present; for ``openai`` the server answers), then every role the
config and the workflows use is resolved to its backend. The command fails
(exit code 6) when a role is bound to a backend that cannot run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from phasegate.agents.base import Availability, Backend
from phasegate.agents.registry import backend_classes, create_backend
from phasegate.cli.app import RepoOption, app, out
from phasegate.cli.output import write_json
from phasegate.config import Config, find_repo, load_config
from phasegate.engine.dispatch import Backends
from phasegate.errors import BackendUnavailable, ConfigError, PhasegateError
from phasegate.workflow.registry import WorkflowRegistry


def _check(backend: Backend) -> Availability:
    try:
        return backend.availability()
    except PhasegateError as exc:
        return Availability(False, str(exc))
    except Exception as exc:  # a third-party backend's bug must not hide the others
        return Availability(False, f"availability check failed: {exc.__class__.__name__}: {exc}")


def backend_report(config: Config, base_dir: Path) -> list[dict[str, Any]]:
    """Each installed backend with its ``backends.<name>`` settings: usable or not, and why."""
    rows: list[dict[str, Any]] = []
    for name in sorted(backend_classes()):
        settings = {**config.backends.get(name, {}), "base_dir": str(base_dir)}
        try:
            found = _check(create_backend(name, settings))
        except PhasegateError as exc:
            found = Availability(False, str(exc))
        rows.append({"backend": name, "usable": found.usable, "detail": found.detail})
    return rows


def _role_names(config: Config, root: Path | None) -> list[str]:
    names = set(config.roles)
    registry = WorkflowRegistry(root)
    for workflow in registry.names():
        try:
            names.update(registry.get(workflow).workflow.roles)
        except PhasegateError:
            continue  # `phasegate validate` reports broken workflows
    return sorted(names)


def role_report(config: Config, root: Path | None, base_dir: Path) -> list[dict[str, Any]]:
    """Each role of the config and the workflows, with the backend serving it."""
    backends = Backends(config, base_dir)
    checked: dict[int, Availability] = {}
    rows: list[dict[str, Any]] = []
    for role in _role_names(config, root):
        row: dict[str, Any] = {"role": role, "backend": None, "model": None}
        try:
            binding = config.binding(role)
            row.update(backend=binding.backend, model=binding.model)
            backend = backends.for_role(role)
        except PhasegateError as exc:
            rows.append({**row, "usable": False, "detail": str(exc)})
            continue
        if id(backend) not in checked:
            checked[id(backend)] = _check(backend)
        found = checked[id(backend)]
        rows.append({**row, "usable": found.usable, "detail": found.detail})
    return rows


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    repo: RepoOption = None,
) -> None:
    """List the agent backends (usable or not, and why) and the backend of each role."""
    start = (repo or Path.cwd()).resolve()
    root: Path | None
    try:
        root = find_repo(start)
    except ConfigError:
        root = None  # outside a repository: the default configuration
    config = load_config(root) if root is not None else Config()
    base_dir = root or start
    backends = backend_report(config, base_dir)
    roles = role_report(config, root, base_dir)
    if as_json:
        write_json({"backends": backends, "roles": roles})
    else:
        _print(backends, roles, root)
    broken = [r for r in roles if not r["usable"]]
    if broken:
        names = ", ".join(f"{r['role']} ({r['backend'] or 'no backend'})" for r in broken)
        raise BackendUnavailable(f"roles bound to a backend that cannot run here: {names}")


def _print(backends: list[dict[str, Any]], roles: list[dict[str, Any]], root: Path | None) -> None:
    width = max(len(r["backend"]) for r in backends) if backends else 8
    out.print("Backends:", markup=False)
    for row in backends:
        state = "usable    " if row["usable"] else "not usable"
        out.print(f"  {row['backend']:<{width}}  {state}  {row['detail']}", markup=False)
    where = f"{root}/.phasegate/config.yaml" if root is not None else "defaults, no repository"
    out.print(f"Roles ({where}):", markup=False)
    role_width = max((len(r["role"]) for r in roles), default=8)
    for row in roles:
        label = row["backend"] or "-"
        if row["model"]:
            label += f":{row['model']}"
        state = "usable" if row["usable"] else f"not usable: {row['detail']}"
        out.print(f"  {row['role']:<{role_width}}  {label:<16}  {state}", markup=False)
