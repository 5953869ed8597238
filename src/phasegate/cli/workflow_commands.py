"""``phasegate workflows`` and ``phasegate validate``: the workflows a repository can use."""

from contextlib import suppress
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from phasegate.cli.app import JsonOption, RepoOption, _repo, app, err, out
from phasegate.cli.output import write_json
from phasegate.errors import BadInputError, ConfigError, WorkflowError


@app.command()
def workflows(
    as_json: JsonOption = False,
    repo: RepoOption = None,
) -> None:
    """List the built-in workflows and the repository's own (.phasegate/workflows/)."""
    from phasegate.workflow.graph import main_path
    from phasegate.workflow.registry import WorkflowRegistry
    from phasegate.workflow.sources import BUILTIN_DIR
    from phasegate.workflow.transitions import phase_names

    root: Path | None
    try:
        root = _repo(repo)
    except ConfigError:
        root = None  # outside a repository: built-ins only
    registry = WorkflowRegistry(root)
    rows: list[dict[str, Any]] = []
    for name, (path, source) in sorted(registry.files().items()):
        row: dict[str, Any] = {"name": name, "source": source, "file": str(path)}
        if source == "repo" and (BUILTIN_DIR / f"{name}.yaml").is_file():
            row["replacesBuiltIn"] = True  # the built-in of that name is not used here
        try:
            wf = registry.get(name).workflow
        except WorkflowError as exc:
            rows.append({**row, "valid": False, "error": str(exc)})
            continue
        modes = {m: v.max_iterations for m, v in wf.modes.items()}
        rows.append(
            {
                **row,
                "valid": True,
                "description": wf.description,
                # What `run --phase`/`--until` take; the labelled ends apart.
                "phases": phase_names(wf),
                "ends": [n for n in wf.label_names if n not in phase_names(wf)],
                "paths": {m: main_path(wf, m) for m in wf.modes},
                "nodes": [path for path, _ in wf.walk()],
                "commands": list(wf.commands),
                "modes": modes,
                "defaultMode": wf.default_mode,
            }
        )
    if as_json:
        write_json(rows)
        return
    for row in rows:
        name, source = row["name"], row["source"]
        if row.get("replacesBuiltIn"):
            source += ", replaces the built-in"
        if not row["valid"]:
            out.print(f"[red]{name}[/] ({source}, invalid): {escape(row['error'])}")
            continue
        modes_text = ", ".join(f"{m}={n}" for m, n in row["modes"].items())
        out.print(f"[bold]{name}[/] ({source}) {escape(row['description'])}")
        paths = row["paths"]
        if len({tuple(p) for p in paths.values()}) > 1:
            for mode, path in paths.items():
                out.print(f"    phases ({mode}): {' → '.join(path)}")
        else:
            ends = f"; ends: {', '.join(row['ends'])}" if row["ends"] else ""
            out.print(f"    phases: {' → '.join(row['phases'])}{ends}")
        if row["commands"]:
            out.print(f"    commands: {', '.join(row['commands'])}")
        out.print(f"    modes (max review iterations): {modes_text}; default {row['defaultMode']}")
        if row["source"] == "repo":
            out.print(f"    file: {row['file']}")


def _named_workflow(path: Path) -> str:
    """When ``path`` is a workflow's name rather than a file: ``validate`` takes the file,
    and this names it (``; the workflow review-loop is .phasegate/workflows/...``)."""
    from phasegate.config import git_toplevel
    from phasegate.workflow.registry import WorkflowRegistry

    if path.parent != Path(".") or path.suffix:
        return ""
    root = git_toplevel(Path.cwd())
    found = WorkflowRegistry(root).files().get(path.name)
    if found is None:
        return ""
    file, _source = found
    with suppress(ValueError):
        file = file.relative_to(Path.cwd())
    return f"; validate takes a workflow's file: phasegate validate {file}"


@app.command()
def validate(
    path: Annotated[Path, typer.Argument(help="A workflow YAML file.")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON (every problem in 'problems').")
    ] = False,
) -> None:
    """Check a workflow definition and report every problem by file, line and field.

    A check node's command name that the repository's config (commands:) lacks is a
    warning: the check would fail when it runs; so is an empty prompt template, and a
    placeholder a template writes in single braces ({item}: never filled). Exits 0 when
    the workflow is valid (warnings or not), 2 when it is not.
    """
    from phasegate.config import CONFIG_DIR, git_toplevel
    from phasegate.workflow.loader import WorkflowProblems, load_workflow

    if path.is_dir():
        raise BadInputError(f"{path}: is a directory, not a workflow file")
    if not path.exists():
        raise BadInputError(f"{path}: no such file{_named_workflow(path)}")
    if not path.is_file():
        raise BadInputError(f"{path}: not a regular file")
    root = git_toplevel(path.resolve().parent)
    overrides = root / CONFIG_DIR / "prompts" if root else None
    if root is not None and path.resolve() == (root / CONFIG_DIR / "config.yaml").resolve():
        raise BadInputError(
            f"{path}: this is phasegate's config, not a workflow: 'phasegate doctor' checks "
            "it (workflows are NAME.yaml files in .phasegate/workflows/)"
        )
    if path.suffix != ".yaml":
        from phasegate.cli.output import warn

        warn(
            f"{path}: never loaded as it is named: only NAME.yaml files in "
            f".phasegate/workflows/ are workflows (rename it to {path.stem}.yaml)"
        )
    try:
        loaded = load_workflow(path.resolve(), "repo", overrides)
        if root is not None:  # its items folder must be its own among the repo's workflows
            from phasegate.workflow.registry import WorkflowRegistry

            shared = WorkflowRegistry(root).shared_folder(loaded)
            if shared is not None:
                raise WorkflowProblems(path, [shared])
    except WorkflowProblems as exc:
        if as_json:
            write_json({"file": str(path), "valid": False, "problems": exc.problems})
        else:
            for problem in exc.problems:
                err.print(escape(problem))
        count = len(exc.problems)
        raise WorkflowError(
            f"{path} is not a valid workflow ({count} problem{'s' if count > 1 else ''})"
        ) from None
    wf = loaded.workflow
    count = sum(1 for _ in wf.walk())
    from phasegate.workflow.transitions import phase_names

    runnable = phase_names(wf)  # what `run --phase` takes (`workflows` lists the same)
    warnings = _config_warnings(path, root, wf)
    from phasegate.workflow.loader import template_warnings, unset_data_names

    warnings += template_warnings(loaded)
    warnings += unset_data_names(path.resolve(), wf)
    if as_json:
        write_json(
            {
                "file": str(path),
                "valid": True,
                "problems": [],
                "warnings": warnings,
                "workflow": wf.name,
                "phases": runnable,
                "ends": [name for name in wf.label_names if name not in runnable],
                "nodes": count,
                "modes": list(wf.modes),
            }
        )
        return
    many = len(runnable)
    phases = f"{many} phase{'' if many == 1 else 's'}, " if many else ""
    if warnings:
        from phasegate.cli.output import warn

        for line in warnings:
            warn(line)
    out.print(
        f"{path}: ok: workflow {wf.name!r}, {phases}{count} nodes, modes {', '.join(wf.modes)}"
    )


def _config_warnings(path: Path, root: Path | None, wf: Any) -> list[str]:
    """What the repository's config makes fail at run time: a check node's command name
    that ``commands:`` lacks (none when the config cannot be read: ``doctor`` says why)."""
    from phasegate.config import load_config
    from phasegate.errors import PhasegateError
    from phasegate.workflow.loader import unconfigured_checks

    if root is None:
        return []
    try:
        commands = load_config(root).commands
    except PhasegateError:
        return []
    return unconfigured_checks(path.resolve(), wf, commands)
