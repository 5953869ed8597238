"""``phasegate run`` without a terminal prints progress lines only: it imports none of rich's
live display (``rich.live``, the spinner of ``rich.status``), which a terminal alone shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import item_run_until

#: Prints the exit code of ``phasegate *argv`` and the modules it imported.
MODULES = """
import contextlib, io, json, sys
from phasegate.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""
LIVE_DISPLAY = ("rich.live", "rich.live_render", "rich.status", "rich.spinner")


def test_run_without_a_terminal_imports_no_live_display(tmp_path: Path) -> None:
    root = item_run_until(tmp_path / "repo", "brainstorm")  # feature item x, mode quick
    for args in (("run", "x", "--until", "brainstorm"), ("run", "x")):
        done = subprocess.run(
            [sys.executable, "-c", MODULES, *args],
            cwd=root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=True,
        )
        found = json.loads(done.stdout.strip().splitlines()[-1])
        assert found["code"] == 0, (args, done.stderr)
        assert [m for m in found["modules"] if m in LIVE_DISPLAY] == [], args
    state = json.loads((root / "docs" / "features" / "x" / ".meta.json").read_text())
    assert state["status"] == "completed"  # the second run went to the end
