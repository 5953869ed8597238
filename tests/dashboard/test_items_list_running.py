"""The dashboard's list of items says which run goes on now, as ``phasegate status`` does:
``/api/items`` has ``running`` ({pid, host, since}, ``null`` when none) and the watching
command as the next one, and the list page shows the item ``running (pid N)``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dashboard_helpers import ITEM, approving_script, new_repo
from starlette.testclient import TestClient

from phasegate.dashboard.server import create_app

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

BASE = "http://127.0.0.1:8765"


def _wait_for_call(run: subprocess.Popen[bytes], journal: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert run.poll() is None, "the run ended before it got there"
        if journal.exists() and any(
            json.loads(line).get("event") == "agent.dispatched"
            for line in journal.read_text().splitlines()
        ):
            return
        time.sleep(0.05)
    raise AssertionError(f"no agent call in {journal}")


def test_the_items_list_shows_a_run_going_on(tmp_path: Path) -> None:
    script = approving_script()
    script["executor"]["brainstorm"] = [
        {"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}, "sleep": 60}
    ]
    repo = new_repo(tmp_path / "repo", script)
    journal = repo / "docs" / "features" / ITEM / ".journal.jsonl"
    watch = f"phasegate logs {ITEM} -f"
    with TestClient(create_app(repo), base_url=BASE) as client:
        (idle,) = client.get("/api/items").json()
        assert idle["running"] is None and idle["nextCommand"] != watch
        run = subprocess.Popen(
            [sys.executable, "-m", "phasegate", "run", ITEM],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for_call(run, journal)
            (row,) = client.get("/api/items").json()
            detail = client.get(f"/api/items/{ITEM}").json()
            assert row["running"]["pid"] == run.pid
            assert row["running"] == detail["running"]
            assert row["nextCommand"] == watch == detail["nextCommand"]
            page = client.get("/").text
            assert f"running (pid {run.pid})" in page and watch in page
            assert f"running (pid {run.pid})" in client.get(f"/items/{ITEM}").text
        finally:
            run.kill()
            run.wait(timeout=30)
        (gone,) = client.get("/api/items").json()
        assert gone["running"] is None and "running (pid" not in client.get("/").text
