"""Notifications of the change workflow: `plan` and `impl` stop before the change ends
(it goes on with impl and archive), so they announce nothing on success, as a `run` that
stops before its item ends; `archive`, which ends the change, announces `completed`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from change_helpers import complete
from ruamel.yaml import YAML

from cli_process import run_cli

RECORDER = """\
import json, sys
from pathlib import Path
folder = Path(sys.argv[1])
folder.mkdir(exist_ok=True)
(folder / f"{len(list(folder.iterdir()))}.json").write_text(sys.stdin.read())
"""

SCRIPT = {
    "proposal-author": {
        "proposal": [
            {"write": {"{item_dir}/proposal.md": "---\nchange_id: oauth\nspecs: []\n---\n# P\n"}}
        ],
        "tasks": [{"write": {"{item_dir}/tasks.md": "## 1. Data Layer\n- [ ] 1.1 x\n"}}],
    },
    "challenger": {"tasks": [{"json": {"verdict": "APPROVED", "summary": "ok", "issues": []}}]},
}


def configure(repo: Path, tmp_path: Path) -> Path:
    """Scripted agents and a notify command recording each event; where it records."""
    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    heard = tmp_path / "heard"
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
        "notify": {"command": f"{sys.executable} {script} {heard}"},
    }
    (repo / ".phasegate").mkdir(exist_ok=True)
    yaml = YAML(typ="safe", pure=True)
    for name, data in (("config.yaml", config), ("agents.yaml", SCRIPT)):
        with open(repo / ".phasegate" / name, "w") as handle:
            yaml.dump(data, handle)
    return heard


def events(folder: Path) -> list[dict[str, Any]]:
    if not folder.exists():
        return []
    return [json.loads(p.read_text()) for p in sorted(folder.iterdir())]


def test_a_finished_plan_does_not_announce_the_change_completed(repo: Path, tmp_path: Path) -> None:
    heard = configure(repo, tmp_path)
    planned = run_cli(repo, "plan", "oauth", "Add OAuth")
    assert planned.returncode == 0, planned.stderr
    assert "Next: phasegate impl oauth" in planned.stdout
    again = run_cli(repo, "plan", "oauth")
    assert again.returncode == 0, again.stderr
    assert events(heard) == []


def test_archiving_announces_the_change_completed(repo: Path, tmp_path: Path) -> None:
    complete(repo, "add-oauth")
    heard = configure(repo, tmp_path)
    archived = run_cli(repo, "archive", "add-oauth")
    assert archived.returncode == 0, archived.stderr
    (event,) = events(heard)
    assert (event["event"], event["item"], event["command"]) == (
        "completed",
        "add-oauth",
        "archive",
    )
    assert "archived to changes/archive/" in event["message"]
    again = run_cli(repo, "archive", "add-oauth")
    assert again.returncode == 0 and "already archived" in again.stdout
    assert len(events(heard)) == 1
