"""A role cap that names no role nor agent (a typo) is refused by ``doctor`` as by ``run``
(exit 2, one line naming the key), and the line names the role most likely meant."""

from __future__ import annotations

import sys
from pathlib import Path

from test_cli import phasegate

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo
from test_cli import write_script


def repo_with(tmp_path: Path, budget: str) -> Path:
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    write_script(root, approving_script())
    config = root / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + budget)
    return root


def test_doctor_refuses_a_misspelt_role_cap_naming_the_role_meant(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, "\nbudget:\n  roles: {exectuor: {usd: 1}}\n")
    doctor = phasegate(repo, "doctor")
    assert doctor.returncode == 2, doctor.stderr
    line = doctor.stderr.strip().splitlines()[-1]
    assert ".phasegate/config.yaml: budget.roles.exectuor: names no workflow role nor agent" in (
        line
    )
    assert line.endswith("did you mean 'executor'?"), line
    assert phasegate(repo, "new", "item", "-d", "Add rate limiting").returncode == 0
    run = phasegate(repo, "run", "item")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1] == line


def test_doctor_takes_role_caps_of_every_workflow(tmp_path: Path) -> None:
    """feature's and implement's roles are both known to ``doctor``: no refusal."""
    repo = repo_with(
        tmp_path,
        "\nbudget:\n  roles: {executor: {usd: 1}, reviewer: {usd: 1}}\n"
        "workflows: {implement: {budget: {roles: {implementer: {usd: 1}}}}}\n",
    )
    doctor = phasegate(repo, "doctor")
    assert doctor.returncode == 0, doctor.stderr
    assert "names no workflow role" not in doctor.stderr
