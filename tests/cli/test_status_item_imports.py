"""``phasegate status NAME`` and ``status --json`` start without what only other commands
need: no run lock library (filelock: a read takes no lock), no agent or verdict models,
no YAML parser once the workflows are cached, and for JSON no rich table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.runner import RunOptions

#: Modules none of these commands needs (each imported only by a run, a review or a parse).
NOT_NEEDED = ("filelock", "phasegate.agents.base", "phasegate.verdicts.model", "ruamel")
_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$", re.MULTILINE)


def _imported(root: Path, *args: str) -> tuple[str, set[str]]:
    """stdout of ``phasegate *args`` (a new process) and the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "phasegate", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout, set(_IMPORTED.findall(done.stderr))


def _heavy(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in names))


def test_status_of_an_item_and_as_json_import_only_what_they_show(tmp_path: Path) -> None:
    repo = make_repo(init_repo(tmp_path / "repo"))
    repo.new("first", description="Item first")
    repo.new("second", description="Item second")
    options = RunOptions(until="brainstorm", yes=True)
    backend = ScriptedBackend(script=approving_script())
    repo.run("first", backends={"default": backend}, options=options)
    subprocess.run(
        [sys.executable, "-m", "phasegate", "status", "--json"],
        cwd=repo.root,
        capture_output=True,
        check=True,
        timeout=120,
    )  # the workflows are validated and cached once

    shown, modules = _imported(repo.root, "status", "first")
    assert "first (feature" in shown and "brainstorm" in shown
    assert _heavy(modules, NOT_NEEDED) == []
    assert "rich.table" in modules  # the text shows the phases as a table

    for args in (("status", "--json"), ("status", "first", "--json")):
        shown, modules = _imported(repo.root, *args)
        assert '"id": "first"' in shown
        assert _heavy(modules, (*NOT_NEEDED, "rich.table", "phasegate.cli.views")) == [], args
