"""``notify.on: []`` would keep the notify command from ever running: refused like any bad
value (exit 2, one line naming the key), not taken silently."""

from __future__ import annotations

import sys
from pathlib import Path

from test_cli import phasegate

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo


def test_an_empty_notify_on_is_refused_naming_the_key(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\nnotify:\n  command: 'true'\n  on: []\n")
    doctor = phasegate(repo, "doctor")
    assert doctor.returncode == 2, doctor.stderr
    line = doctor.stderr.strip().splitlines()[-1]
    assert line.endswith(
        ".phasegate/config.yaml: notify.on: names no event, so the command would never run "
        "(events: waiting, failed, stopped, completed; leave notify out to send none)"
    ), line
