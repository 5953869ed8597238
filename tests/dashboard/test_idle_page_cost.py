"""An item's page left open while nothing happens costs the server little: its event stream
does not load the item (its decisions) at every poll, only when the item's files change."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from dashboard_helpers import ITEM, new_repo, phasegate

IDLE_SECONDS = 6.0


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_an_open_page_of_an_idle_item_leaves_the_server_idle(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    ran = phasegate(root, "run", ITEM, timeout=300)  # every phase: a journal of some length
    assert ran.returncode == 0, ran.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "serve", "--port", "0"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = re.search(r"(http://\S+)", proc.stdout.readline())
        assert url is not None
        received: list[bytes] = []

        def follow() -> None:
            address = f"{url.group(1)}items/{ITEM}/events"
            with urllib.request.urlopen(address, timeout=IDLE_SECONDS + 20) as stream:
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    received.append(line)

        threading.Thread(target=follow, daemon=True).start()
        deadline = time.monotonic() + 30
        while not any(b"event: decisions" in line for line in received):
            assert time.monotonic() < deadline, "the stream sent no decisions"
            time.sleep(0.1)
        before = _cpu_seconds(proc.pid)
        time.sleep(IDLE_SECONDS)
        spent = _cpu_seconds(proc.pid) - before
        # Loading the item at each of its four polls a second cost it 7 times as much (0.28 s).
        assert spent < IDLE_SECONDS * 0.025, f"{spent:.2f}s of CPU in {IDLE_SECONDS}s idle"
    finally:
        proc.terminate()
        proc.wait(timeout=15)
