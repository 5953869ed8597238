"""A notify command the system cannot start at all (one holding a NUL character, which a
YAML double-quoted "\\0" writes) is reported as a warning: the run ends as it would have."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
from review_loop_cli_helpers import ITEM, review_loop_repo, run_cli


def test_a_notify_command_with_a_nul_character_does_not_change_the_run(tmp_path: Path) -> None:
    repo = review_loop_repo(tmp_path / "repo")
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + '\nnotify:\n  command: "echo done\\0"\n')
    ran = run_cli(repo, "run", ITEM)
    assert ran.returncode == 0, ran.stderr
    assert "internal error" not in ran.stderr
    assert "notify command could not start" in ran.stderr, ran.stderr
    assert "the run's outcome is unchanged" in ran.stderr
