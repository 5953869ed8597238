"""An open item page hears that the run it showed going on has ended, even when the run
journals nothing more (killed, or ended right after its last event): the event stream
sends the summary again, no longer saying ``running (pid N)``."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from dashboard_helpers import ITEM, approving_script, new_repo
from starlette.testclient import TestClient

from phasegate.dashboard import data
from phasegate.dashboard.server import create_app

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

BASE = "http://127.0.0.1:8765"


def test_the_summary_is_sent_again_once_the_run_is_gone(tmp_path: Path) -> None:
    script = approving_script()
    script["executor"]["brainstorm"] = [
        {"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}, "sleep": 60}
    ]
    repo = new_repo(tmp_path / "repo", script)
    run = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "run", ITEM],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while data.item_detail(repo, ITEM)["running"] is None or not any(
            e["event"] == "agent.dispatched" for e in data.journal_events(repo, ITEM)[0]
        ):
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        _, offset = data.journal_events(repo, ITEM)
        with TestClient(create_app(repo), base_url=BASE) as client:
            assert f"running (pid {run.pid})" in client.get(f"/items/{ITEM}").text

            def kill_later() -> None:
                time.sleep(1)
                run.kill()
                run.wait(timeout=30)

            threading.Thread(target=kill_later).start()
            summary = None
            give_up = time.monotonic() + 40
            with client.stream("GET", f"/items/{ITEM}/events", params={"offset": offset}) as s:
                event = ""
                for line in s.iter_lines():
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event == "summary":
                        summary = json.loads(line[6:])
                        break
                    if time.monotonic() > give_up:
                        break
        assert summary is not None, "no summary sent after the run ended"
        assert "running (pid" not in summary["html"]
        assert f"phasegate run {ITEM}" in summary["html"]
    finally:
        if run.poll() is None:
            run.kill()
        run.wait(timeout=30)
