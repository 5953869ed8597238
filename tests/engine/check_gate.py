"""A repository whose workflow is one check node: its commands pass to ``done`` or
fail to a blocked end (exit code 4), with scripted agents (no agent is called)."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import init_repo

from cli_process import run_cli

#: The config of these repositories: every role on the scripted backend.
SCRIPTED_CONFIG = """\
version: 1
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
"""


def check_gate_workflow(name: str, commands: list[str]) -> str:
    """The workflow ``name``: one check node running ``commands`` (each a YAML flow item:
    a command's name from the config, or ``{name: ..., run: ...}``)."""
    run = "".join(f"      - {command}\n" for command in commands)
    return (
        f"name: {name}\n"
        "items_dir: work\n"
        "modes:\n"
        "  standard: {max_iterations: 1}\n"
        "roles:\n"
        "  worker: {access: write}\n"
        "nodes:\n"
        "  - id: checks\n"
        "    kind: check\n"
        "    run:\n"
        f"{run}"
        "    on: {pass: done, fail: broken}\n"
        "  - id: done\n"
        "    kind: end\n"
        "  - id: broken\n"
        "    kind: end\n"
        "    status: blocked\n"
        "    message: the checks did not pass\n"
    )


def check_gate_repo(
    root: Path, name: str, commands: list[str], *, config: str = SCRIPTED_CONFIG, item: str = "s"
) -> Path:
    """A git repository at ``root`` with the workflow of :func:`check_gate_workflow` and the
    work item ``item`` made with it (its folder: ``work/ITEM``)."""
    init_repo(root)
    (root / ".phasegate" / "workflows").mkdir(parents=True)
    (root / ".phasegate" / "config.yaml").write_text(config)
    (root / ".phasegate" / "agents.yaml").write_text("{}\n")
    workflow = check_gate_workflow(name, commands)
    (root / ".phasegate" / "workflows" / f"{name}.yaml").write_text(workflow)
    made = run_cli(root, "new", item, "--workflow", name, "--description", "x")
    assert made.returncode == 0, made.stdout + made.stderr
    return root
