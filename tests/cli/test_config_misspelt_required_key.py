"""A misspelt required key (``notify.comand``, ``roles.default.backnd``) is named as the
misspelling, with the key meant, not only as the required key being missing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "notify:\n  comand: notify-send done\n",
            "notify.command: missing; 'comand' is given: did you mean 'command'?",
        ),
        (
            "roles:\n  default: {backnd: claude}\n",
            "roles.default.backend: missing; 'backnd' is given: did you mean 'backend'?",
        ),
    ],
)
def test_a_misspelt_required_key_is_named(tmp_path: Path, text: str, said: str) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = tmp_path / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_text(text, encoding="utf-8")
    done = run_cli(tmp_path, "status")
    assert done.returncode == 2, done.stdout
    assert done.stderr.strip() == f"phasegate: error: {config}: {said}"


def test_a_required_key_left_out_is_still_said_missing(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = tmp_path / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_text("notify:\n  timeout: 5\n", encoding="utf-8")
    done = run_cli(tmp_path, "status")
    assert done.returncode == 2, done.stdout
    assert done.stderr.strip() == f"phasegate: error: {config}: notify.command: Field required"
