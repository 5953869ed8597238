"""An item's own worktree (``phasegate new NAME --worktree``) never shares a folder with the
worktree of another item's parallel items (``.phasegate/worktrees/ITEM--LOOP--KEY``): such
a name is refused when the item is made, and a loop never removes an item's worktree."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import git
from parallel_helpers import ITEM, Agents, fan_repo, new_item, run

from cli_process import run_cli
from phasegate.api import open_repo
from phasegate.errors import BlockedError, ExitCode

CLASH = f"{ITEM}--tasks--T1"


def test_a_worktree_item_named_like_a_task_worktree_is_refused(tmp_path: Path) -> None:
    root = fan_repo(tmp_path / "repo")
    made = run_cli(root, "new", CLASH, "-w", "fan", "-d", "x", "--worktree")
    assert made.returncode == ExitCode.BAD_INPUT, made.stdout + made.stderr
    (line,) = made.stderr.strip().splitlines()
    assert f"'{CLASH}'" in line and "'--'" in line and "parallel items" in line
    assert not (root / ".phasegate" / "worktrees" / CLASH).exists()
    assert "phasegate/" not in git(root, "branch", "--list", "phasegate/*")
    # Without --worktree the name is fine: the item works in the main checkout.
    assert run_cli(root, "new", CLASH, "-w", "fan", "-d", "x").returncode == 0
    assert run_cli(root, "new", "plain", "-w", "fan", "-d", "x", "--worktree").returncode == 0


def test_a_loop_never_removes_an_items_worktree_in_its_way(tmp_path: Path) -> None:
    """An item worktree made before the name was refused stays as it is, with its work:
    the loop stops blocked naming it."""
    root = fan_repo(tmp_path / "repo")
    where = root / ".phasegate" / "worktrees" / CLASH
    git(root, "worktree", "add", "-q", "-b", f"phasegate/{CLASH}", str(where), "HEAD")
    (where / "precious.txt").write_text("work\n")
    new_item(root)
    try:
        run(root, Agents(delay=0.0))
    except BlockedError as exc:
        message = str(exc)
    else:
        message = ""
    assert (where / "precious.txt").read_text() == "work\n"
    assert "\n" not in message
    assert f"branch phasegate/{CLASH}" in message and str(where) in message
    assert open_repo(root).status(ITEM)["status"] == "active"
