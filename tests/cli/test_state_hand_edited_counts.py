"""A node's counter in the state file edited by hand into something that is not a count:
``status NAME`` and ``run`` stop with exit code 5 naming the file and the field (never
"internal error"), and the file is left untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

from phasegate.errors import ExitCode

STATE = Path("docs/features/x/.engine.json")


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the approving scripted agents and item ``x`` run to specify."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    with open(root / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(root, "new", "x", "--mode", "quick").returncode == 0
    assert phasegate(root, "run", "x", "--until", "specify").returncode == 0
    return root


@pytest.mark.parametrize("value", ["x", None, [], -1])
def test_a_node_iteration_that_is_not_a_count_is_named(repo: Path, value: object) -> None:
    data = json.loads((repo / STATE).read_text())
    node = next(iter(data["nodes"]))
    data["nodes"][node]["iteration"] = value
    edited = json.dumps(data)
    (repo / STATE).write_text(edited)
    for args in (("status", "x"), ("run", "x")):
        refused = phasegate(repo, *args)
        assert refused.returncode == ExitCode.STATE, (args, refused.stderr)
        assert refused.stderr.startswith(
            f"phasegate: error: state file {repo / STATE} is invalid: field "
            f"'nodes.{node}.iteration' is not a count; it was left untouched"
        ), refused.stderr
    assert (repo / STATE).read_text() == edited
