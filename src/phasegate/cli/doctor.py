"""``phasegate doctor``: which agent backends can run here, and why not.

Every installed backend is checked (CLI found, version recent enough, every
flag phasegate passes listed by its ``--help``, credentials present; for
``openai`` the server answers), then every role the config and the workflows
use is resolved to its backend. The command fails (exit code 6) only when a
role of a workflow *in use* is bound to a backend that cannot run: the
``feature`` workflow (the default of ``phasegate new``) and every workflow
with work items in the repository. The other roles are listed, and said not
to be needed.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate.cli.app import JsonOption, RepoOption, app, out
from phasegate.cli.output import write_json
from phasegate.errors import BackendUnavailable, BadInputError, ConfigError, PhasegateError

if TYPE_CHECKING:  # imported where used: --help starts without the backends and config
    from phasegate.agents.base import Availability, Backend
    from phasegate.config import Config


def _redacted(usable: bool, detail: str) -> "Availability":
    """An availability whose detail shows no secret: the password of a ``base_url``
    (``scheme://user:password@host``), a key from the environment... are masked as the
    run's own records mask them."""
    from phasegate.agents.base import Availability
    from phasegate.redact import redact

    return Availability(usable, redact(detail))


def _check(backend: "Backend") -> "Availability":
    try:
        found = backend.availability()
    except PhasegateError as exc:
        return _redacted(False, str(exc))
    except Exception as exc:  # a third-party backend's bug must not hide the others
        return _redacted(False, f"availability check failed: {exc.__class__.__name__}: {exc}")
    return _redacted(found.usable, found.detail)


def backend_report(config: "Config", base_dir: Path) -> list[dict[str, Any]]:
    """Each installed backend with its ``backends.<name>`` settings: usable or not, and why."""
    from phasegate.agents.registry import backend_classes, create_backend

    rows: list[dict[str, Any]] = []
    for name in sorted(backend_classes()):
        settings = {**config.backends.get(name, {}), "base_dir": str(base_dir)}
        try:
            found = _check(create_backend(name, settings))
        except PhasegateError as exc:
            found = _redacted(False, str(exc))
        rows.append({"backend": name, "usable": found.usable, "detail": found.detail})
    for key in config.unknown_backends():
        name = key.rsplit(".", 1)[1]
        detail = f"not installed: {key} in the config names no backend (a typo?)"
        rows.append({"backend": name, "usable": False, "detail": detail})
    return rows


#: Always in use: ``phasegate new`` creates items of this workflow unless told otherwise.
DEFAULT_WORKFLOW = "feature"


def _workflow_roles(config: "Config", root: Path | None) -> dict[str, list[str]]:
    """Each role of the config and the workflows, with the workflows that have it."""
    from phasegate.workflow.registry import WorkflowRegistry

    roles: dict[str, list[str]] = {role: [] for role in config.roles}
    registry = WorkflowRegistry(root)
    for name in registry.names():
        try:
            workflow = registry.get(name).workflow
        except PhasegateError:
            continue  # `phasegate validate` reports broken workflows
        for role in workflow.roles:
            roles.setdefault(role, []).append(name)
    return dict(sorted(roles.items()))


def workflows_in_use(config: "Config", root: Path | None) -> set[str]:
    """``feature``, plus every workflow with at least one work item in the repository."""
    from phasegate.engine.items import iter_items
    from phasegate.workflow.registry import WorkflowRegistry

    used = {DEFAULT_WORKFLOW}
    if root is None:
        return used
    registry = WorkflowRegistry(root)
    for workflow_name, _, _ in iter_items(root, registry, config):
        used.add(workflow_name)
    return used


def role_report(config: "Config", root: Path | None, base_dir: Path) -> list[dict[str, Any]]:
    """Each role of the config and the workflows, with the backend serving it.

    ``needed`` says whether a workflow in use has the role (see
    :func:`workflows_in_use`); only those roles make doctor fail.
    """
    from phasegate.engine.calls import Backends

    backends = Backends(config, base_dir)
    in_use = workflows_in_use(config, root)
    checked: dict[int, Availability] = {}
    rows: list[dict[str, Any]] = []
    for role, workflows in _workflow_roles(config, root).items():
        row: dict[str, Any] = {
            "role": role,
            "backend": None,
            "model": None,
            "workflows": workflows,
            "needed": any(w in in_use for w in workflows),
        }
        # Shown even when the backend it names is not installed (binding() refuses that).
        bound = config.roles.get(role) or config.roles.get("default")
        if bound is not None:
            row.update(backend=bound.backend, model=bound.model)
        try:
            backend = backends.for_role(role)
        except PhasegateError as exc:
            rows.append({**row, "usable": False, "detail": _redacted(False, str(exc)).detail})
            continue
        if id(backend) not in checked:
            checked[id(backend)] = _check(backend)
        found = checked[id(backend)]
        rows.append({**row, "usable": found.usable, "detail": found.detail})
    return rows


@app.command()
def doctor(
    as_json: JsonOption = False,
    repo: RepoOption = None,
) -> None:
    """List the agent backends (usable or not, and why) and the backend of each role.

    Exits 6 when a role of a workflow in use (feature, and every workflow with work
    items) is bound to a backend that cannot run here, 2 when it is bound to one that is
    not installed (a config error, as a run says), else 0.
    """
    from phasegate.config import Config, config_path, find_repo, load_config, missing_config

    if repo is not None and not repo.is_dir():
        raise BadInputError(f"--repo {repo} is not a directory")
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
    config.check_backend_names()  # a run refuses such a config: doctor fails on it too
    config.check_workflow_names(root)
    if root is not None:
        from phasegate.engine.budget import check_role_keys

        check_role_keys(config, root)  # a role cap that caps nothing, as a run refuses it
    from phasegate.cli.output import warn

    for line in _unmeasured_caps(config, root):
        warn(line)
    if root is not None:
        for line in _misspelt_roles(config, root, roles):
            warn(line)
    if root is not None:
        from phasegate.notify import command_problem

        notify_problem = command_problem(root, config)
        if notify_problem is not None:
            warn(notify_problem)
    broken = [r for r in roles if r["needed"] and not r["usable"]]
    for row in broken:
        # A backend that is not installed (a typo such as `clade`) is a config error: exit 2
        # naming the key, as a run says it.
        config.binding(row["role"])
    if broken:
        names = ", ".join(f"{r['role']} ({r['backend'] or 'no backend'})" for r in broken)
        message = f"roles bound to a backend that cannot run here: {names}"
        if root is not None and not config_path(root).exists():
            message += f" ({missing_config(config_path(root))})"
        raise BackendUnavailable(message)


def _unmeasured_caps(config: "Config", root: Path | None) -> list[str]:
    """What a run would warn of, for each workflow in use (see :func:`workflows_in_use`):
    a USD cap over roles whose backend reports no cost."""
    from phasegate.engine.budget import unmeasured_usd
    from phasegate.workflow.registry import WorkflowRegistry

    registry = WorkflowRegistry(root)
    lines: list[str] = []
    for name in sorted(workflows_in_use(config, root)):
        try:
            roles = registry.get(name).workflow.roles
        except PhasegateError:
            continue  # `phasegate validate` reports broken workflows
        lines += [f"workflow {name}: {line}" for line in unmeasured_usd(config, name, roles)]
    return lines


def _misspelt_roles(config: "Config", root: Path, roles: list[dict[str, Any]]) -> list[str]:
    """A ``roles:`` entry that is no role of any workflow of the repository nor an agent
    file's, spelt like one of those roles (``reviwer``): it binds nothing, and the role
    meant stays on ``default``. A name close to no role is taken for an agent of
    ``implement`` bound in the config, which is what such an entry is. The roles of a
    workflow that does not load are read from its file; while one cannot be read, no
    entry is warned of (it may be that workflow's)."""
    import difflib

    from phasegate.config import config_path
    from phasegate.implement.agents import find_agents

    known = sorted(r["role"] for r in roles if r["workflows"])
    unknown = [r["role"] for r in roles if not r["workflows"] and r["role"] != "default"]
    if not unknown:
        return []
    unloaded = _roles_of_broken_workflows(root)
    if unloaded is None:
        return []
    unknown = [key for key in unknown if key not in unloaded]
    files = set(find_agents(root, config, config.roles).agents)  # agent files only
    lines: list[str] = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        if key in files or not close:
            continue
        lines.append(
            f"{config_path(root)}: roles.{key}: no workflow has a role {key!r}, so it "
            f"binds no workflow's role (only an implement task naming agent {key!r} would "
            f"use it); did you mean {close[0]!r}?"
        )
    return lines


def _roles_of_broken_workflows(root: Path) -> set[str] | None:
    """The role names written in the files of the repository's workflows that do not load
    (read as YAML only); ``None`` when a file's roles cannot be read."""
    from phasegate.workflow.loader import read_yaml
    from phasegate.workflow.registry import WorkflowRegistry

    registry = WorkflowRegistry(root)
    found: set[str] = set()
    for name, (path, _) in registry.files().items():
        try:
            registry.get(name)
            continue
        except PhasegateError:
            pass
        try:
            document = read_yaml(path)
        except PhasegateError:
            return None
        if not isinstance(document, dict):
            return None
        written = document.get("roles") or {}  # none written: it has no roles
        if not isinstance(written, dict):
            return None
        found.update(str(role) for role in written)
    return found


def _print(backends: list[dict[str, Any]], roles: list[dict[str, Any]], root: Path | None) -> None:
    width = max(len(r["backend"]) for r in backends) if backends else 8
    out.print("Backends:", markup=False)
    for row in backends:
        state = "usable    " if row["usable"] else "not usable"
        out.print(f"  {row['backend']:<{width}}  {state}  {row['detail']}", markup=False)
    where = f"{root}/.phasegate/config.yaml" if root is not None else "defaults, no repository"
    if root is not None and not (root / ".phasegate" / "config.yaml").exists():
        from phasegate.config import config_path, missing_config

        where = f"defaults: {missing_config(config_path(root))}"
    out.print(f"Roles ({where}):", markup=False)
    role_width = max((len(r["role"]) for r in roles), default=8)
    for row in roles:
        label = row["backend"] or "-"
        if row["model"]:
            label += f":{row['model']}"
        if row["usable"]:
            state = "usable"
        elif row["needed"]:
            state = f"not usable: {row['detail']}"
        else:
            state = f"not usable ({_not_needed(row)}): {row['detail']}"
        out.print(f"  {row['role']:<{role_width}}  {label:<16}  {state}", markup=False)


def _not_needed(row: dict[str, Any]) -> str:
    workflows = row["workflows"]
    if not workflows:
        return "not needed: no workflow has this role"
    names = ", ".join(workflows)
    return f"not needed: {names} {'has' if len(workflows) == 1 else 'have'} no work items"
