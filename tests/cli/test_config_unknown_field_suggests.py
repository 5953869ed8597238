"""A misspelt key of ``.phasegate/config.yaml`` is refused naming the file and the field,
and the key meant when one of that place is spelt alike (as a workflow's fields are)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli


@pytest.mark.parametrize(
    ("config", "line"),
    [
        ("timeout: {agent: 5}", "timeout: unknown field; did you mean 'timeouts'?"),
        ("retry: {agent: 2}", "retry: unknown field; did you mean 'retries'?"),
        ("timeouts: {agnet: 5}", "timeouts.agnet: unknown field; did you mean 'agent'?"),
        ("budget: {itme: {usd: 5}}", "budget.itme: unknown field; did you mean 'item'?"),
        (
            "budget: {roles: {reviewer: {usdd: 1}}}",
            "budget.roles.reviewer.usdd: unknown field; did you mean 'usd'?",
        ),
        (
            "workflows: {feature: {item_dir: work}}",
            "workflows.feature.item_dir: unknown field; did you mean 'items_dir'?",
        ),
        ("zzz: 1", "zzz: unknown field"),
    ],
)
def test_a_misspelt_config_key_names_the_key_meant(tmp_path: Path, config: str, line: str) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    path = tmp_path / ".phasegate" / "config.yaml"
    path.parent.mkdir()
    path.write_text(f"version: 1\n{config}\n", encoding="utf-8")
    done = run_cli(tmp_path, "status")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [f"phasegate: error: {path}: {line}"]
