"""``phasegate status`` in each form imports no socket library: the host name is asked
only of a file a run left (whether its pid can be checked from here), and by a run that
writes one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import item_run_until

#: Prints the exit code of ``phasegate *argv``, what it printed and the modules it imported.
MODULES = """
import contextlib, io, json, sys
from phasegate.cli import main
with contextlib.redirect_stdout(io.StringIO()) as shown:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": shown.getvalue(), "modules": sorted(sys.modules)}))
"""


def test_status_in_each_form_imports_no_socket(tmp_path: Path) -> None:
    root = item_run_until(tmp_path / "repo", "brainstorm")  # feature item x
    for args in (("status",), ("status", "x"), ("status", "--json"), ("status", "x", "--json")):
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
        assert found["code"] == 0 and "x" in found["out"], (args, done.stderr)
        assert "socket" not in found["modules"], args
