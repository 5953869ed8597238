"""Seed 000 reads the mode from ``.meta.json``; phasegate writes that file from its engine
state, so a person who edits the mode there (to get more review iterations) is told the
edit is not read, and which mode the run uses, instead of losing it silently."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_process import run_cli


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    for args in (("init",), ("new", "f", "--workflow", "feature", "--mode", "quick")):
        done = run_cli(path, *args)
        assert done.returncode == 0, done.stderr
    script = {
        "executor": {"*": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}]},
        "chain-reviewer": {"*": [{"verdict": {"approved": True, "summary": "ok", "issues": []}}]},
    }
    (path / ".phasegate" / "agents.yaml").write_text(json.dumps(script), encoding="utf-8")
    return path


def test_a_mode_edited_in_meta_json_is_warned_of(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    meta = root / "docs" / "features" / "f" / ".meta.json"
    document = json.loads(meta.read_text(encoding="utf-8"))
    assert document["mode"] == "quick"
    document["mode"] = "full"
    meta.write_text(json.dumps(document), encoding="utf-8")

    status = run_cli(root, "status", "f")
    assert status.returncode == 0, status.stderr
    warned = [line for line in status.stderr.splitlines() if "warning" in line]
    assert len(warned) == 1, status.stderr
    assert "mode 'full'" in warned[0] and "'quick'" in warned[0], warned[0]
    assert str(Path("docs/features/f/.meta.json")) in warned[0]

    done = run_cli(root, "run", "f", "--until", "brainstorm")
    assert done.returncode == 0, done.stderr
    assert "mode 'full'" in done.stderr
    assert "mode quick" in done.stderr + done.stdout
    # Written again from the engine state: the next command has nothing to warn of.
    assert json.loads(meta.read_text(encoding="utf-8"))["mode"] == "quick"
    again = run_cli(root, "status", "f")
    assert "warning" not in again.stderr, again.stderr


def test_an_unchanged_meta_json_is_not_warned_of(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    done = run_cli(root, "run", "f", "--until", "brainstorm")
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr, done.stderr
    status = run_cli(root, "status", "f")
    assert "warning" not in status.stderr, status.stderr
