"""A misspelt setting of the scripted backend is refused like any backend's
(docs/backends.md: "Unknown settings are errors"), not silently ignored."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli

SCRIPT = """\
"*":
  "*": [{verdict: {approved: true, summary: Fine, issues: []}}]
"""


def _repo(path: Path, scripted: str) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / ".phasegate").mkdir()
    (path / ".phasegate" / "agents.yaml").write_text(SCRIPT, encoding="utf-8")
    (path / ".phasegate" / "config.yaml").write_text(
        "version: 1\nroles:\n  default: {backend: scripted}\n"
        f"backends:\n  scripted: {scripted}\n",
        encoding="utf-8",
    )
    created = run_cli(path, "new", "demo", "--description", "try it")
    assert created.returncode == 0, created.stderr
    return path


def test_run_refuses_a_misspelt_scripted_setting_before_any_call(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", "{script: .phasegate/agents.yaml, calls_lgo: calls.jsonl}")
    result = run_cli(root, "run", "demo")
    assert result.returncode == 2, result.stdout + result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("phasegate: error: backend 'scripted'"), error
    assert "calls_lgo: unknown setting" in error
    journal = (root / "docs" / "features" / "demo" / ".journal.jsonl").read_text(encoding="utf-8")
    assert "agent.dispatched" not in journal


def test_doctor_names_the_misspelt_setting(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo", "{script: .phasegate/agents.yaml, calls_lgo: calls.jsonl}")
    result = run_cli(root, "doctor")
    assert result.returncode == 6, result.stdout + result.stderr
    assert "calls_lgo: unknown setting" in result.stdout


def test_the_documented_settings_are_taken(tmp_path: Path) -> None:
    root = _repo(
        tmp_path / "repo",
        "{script: .phasegate/agents.yaml, calls_log: calls.jsonl, structured_output: true}",
    )
    result = run_cli(root, "run", "demo", "--until", "brainstorm")
    # The script writes no artifact, so the phase is blocked by its empty output; the
    # settings themselves were accepted and the calls logged.
    assert "unknown setting" not in result.stderr
    assert (root / "calls.jsonl").is_file()
