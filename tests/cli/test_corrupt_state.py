"""Detect before writing: a corrupt journal or state file stops `phasegate run` with exit code 5,
one line naming the file (and the line), and not one byte written anywhere first."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

from phasegate.errors import ExitCode

ITEM = Path("docs/features/x")


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture(scope="module")
def specified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An item run up to specify (a journal of some twenty lines, state and view files)."""
    repo = init_repo(tmp_path_factory.mktemp("corrupt") / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(repo, "new", "x", "--mode", "quick").returncode == 0
    assert phasegate(repo, "run", "x", "--until", "specify").returncode == 0
    return repo


def every_file(repo: Path) -> dict[str, bytes]:
    """The repository's files but git's and phasegate's locks, by path."""
    return {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and not p.relative_to(repo).as_posix().startswith((".git/", ".phasegate/l"))
    }


def edit_json(name: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        data = json.loads((folder / name).read_text())
        change(data)
        (folder / name).write_text(json.dumps(data, indent=2))

    return edit


def append(line: str) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        with open(folder / ".journal.jsonl", "a") as handle:
            handle.write(line + "\n")

    return edit


def spoil_line_3(folder: Path) -> None:
    """Line 3 keeps its length but is no longer JSON (a disk or a hand gone wrong)."""
    path = folder / ".journal.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"X" + lines[2][1:]
    path.write_bytes(b"\n".join(lines))


def cut_journal(folder: Path) -> None:
    path = folder / ".journal.jsonl"
    path.write_bytes(path.read_bytes()[:100])


FINISHED = '{"ts": "t", "event": "agent.finished", "key": "k", "attempt": "a", "ok": "yes"}'
ANSWERED = '{"ts": "t", "event": "decision.answered", "id": "d", "visit": "1", "choice": "c"}'

CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "garbage journal line": (append("{not json"), r"\.journal\.jsonl line 20 is corrupt"),
    "corrupt line mid-journal": (spoil_line_3, r"\.journal\.jsonl line 3 is corrupt"),
    "line not an event": (append("[1, 2]"), r"line 20 is not an event object"),
    "wrong-typed ok": (append(FINISHED), r"line 20: field 'ok' has the wrong type \(str\)"),
    "wrong-typed visit": (append(ANSWERED), r"line 20: field 'visit' has the wrong type"),
    "journal cut short": (cut_journal, r"\.journal\.jsonl is shorter \(100 bytes\)"),
    "journal deleted": (
        lambda folder: (folder / ".journal.jsonl").unlink(),
        r"\.journal\.jsonl is missing",
    ),
    "unknown mode in the engine state": (
        edit_json(".engine.json", lambda d: d.update(mode="turbo")),
        r"\.engine\.json: unknown mode 'turbo'",
    ),
    "unknown node in the engine state": (
        edit_json(".engine.json", lambda d: d.update(at="nowhere")),
        r"\.engine\.json: unknown node 'nowhere'",
    ),
    # A .meta.json that cannot be used is written again instead: test_item_folders.py.
    "a count in the engine's usage that is not a number": (
        edit_json(".engine.json", lambda d: d["usage"].update(calls="many")),
        r"\.engine\.json is invalid: field 'usage\.calls' is not a number",
    ),
    "usage by role that is not a mapping": (
        edit_json(".engine.json", lambda d: d.update(usage_by_role=[])),
        r"\.engine\.json is invalid: field 'usage_by_role' has the wrong type \(list\)",
    ),
    "a node's usage that is not a mapping": (
        edit_json(".engine.json", lambda d: d["nodes"]["specify"].update(usage=3)),
        r"field 'nodes\.specify\.usage' has the wrong type \(int\)",
    ),
    "a decision whose choices are not a mapping": (
        edit_json(
            ".engine.json",
            lambda d: d["decisions"].update(g={"id": "g", "visit": 1, "choices": "abc"}),
        ),
        r"field 'decisions\.g\.choices' has the wrong type \(str\)",
    ),
    "a journal position that is not a count": (
        edit_json(".engine.json", lambda d: d["journal"].update(offset=-4)),
        r"field 'journal\.offset' is not a count",
    ),
    "a description that is not text": (
        edit_json(".engine.json", lambda d: d.update(description=["x"])),
        r"field 'description' has the wrong type \(list\)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_corrupt_state_is_detected_before_anything_is_written(
    case: str, specified: Path, tmp_path: Path
) -> None:
    """Exit 5, the file (and line) named in one line, and every file's bytes unchanged."""
    repo = tmp_path / "repo"
    shutil.copytree(specified, repo, symlinks=True)
    spoil, message = CASES[case]
    spoil(repo / ITEM)
    before = every_file(repo)
    ran = phasegate(repo, "run", "x")
    assert ran.returncode == ExitCode.STATE, ran.stderr
    (line,) = ran.stderr.strip().splitlines()
    assert line.startswith("phasegate: error: ") and "Traceback" not in ran.stderr
    assert str(repo / ITEM) in line
    assert re.search(message, line), line
    assert every_file(repo) == before


def test_one_unreadable_item_does_not_hide_the_others_decisions(
    specified: Path, tmp_path: Path
) -> None:
    """`phasegate decisions` lists every readable item's decisions and names the unreadable
    one on stderr; asked about that item alone, it fails with exit 5."""
    repo = tmp_path / "repo"
    shutil.copytree(specified, repo, symlinks=True)
    assert phasegate(repo, "new", "y", "--mode", "quick").returncode == 0
    assert phasegate(repo, "run", "y", "--phase", "design").returncode == ExitCode.WAITING
    (repo / ITEM / ".engine.json").write_text("{")
    for args in (["decisions"], ["decisions", "--json"]):
        listed = phasegate(repo, *args)
        assert listed.returncode == 0, listed.stderr
        assert "phasegate answer y transition-warning proceed" in listed.stdout
        (warning,) = listed.stderr.strip().splitlines()
        assert warning.startswith("phasegate: warning: state file ")
        assert str(repo / ITEM / ".engine.json") in warning
    alone = phasegate(repo, "decisions", "x")
    assert alone.returncode == ExitCode.STATE
