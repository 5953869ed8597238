"""A budget key written in capitals (``USD``) is refused naming the key meant, as a
misspelt key is (exit 2, one line)."""

from __future__ import annotations

import sys
from pathlib import Path

from test_cli import phasegate

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo


def test_a_capitalised_cap_key_names_the_key_meant(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\nbudget:\n  item: {USD: 5}\n")
    doctor = phasegate(repo, "doctor")
    assert doctor.returncode == 2, doctor.stderr
    assert (
        doctor.stderr.strip()
        .splitlines()[-1]
        .endswith(".phasegate/config.yaml: budget.item.USD: unknown field; did you mean 'usd'?")
    ), doctor.stderr
