"""A node's counter in the state file edited by hand into something that is not a count:
``status NAME`` and ``run`` stop with exit code 5 naming the file and the field (never
"internal error"), and the file is left untouched."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import item_run_until
from engine_helpers import phasegate_cli as phasegate

from phasegate.errors import ExitCode

STATE = Path("docs/features/x/.engine.json")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the approving scripted agents and item ``x`` run to specify."""
    return item_run_until(tmp_path / "repo", "specify")


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
