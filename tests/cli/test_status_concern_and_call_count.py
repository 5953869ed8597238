"""``status NAME`` of an item blocked by a failing check shows the check's first line of
output with its concern (the concern's first line only introduces it: ``... failed with
exit code 3:``), and counts one agent call as one ``call``, not ``calls``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from test_check_command_not_found import CONFIG, checked_repo

from cli_process import run_cli

FAILING = CONFIG.replace('"no-such-tool-xyz --run"', "\"echo 'assert 2 == 3 in test_sum'; exit 3\"")


def test_status_shows_the_failing_check_output_and_one_call(tmp_path: Path) -> None:
    assert FAILING != CONFIG
    root = checked_repo(tmp_path / "repo", FAILING)
    ran = run_cli(root, "run", "m")
    assert ran.returncode == 4, ran.stdout + ran.stderr
    shown = run_cli(root, "status", "m")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    text = " ".join(shown.stdout.split())  # the table wraps long lines
    assert "Unresolved reviewer concerns:" in text, shown.stdout
    assert "failed with exit code 3: assert 2 == 3 in test_sum" in text, shown.stdout
    assert "Usage: 1 agent call," in text, shown.stdout
