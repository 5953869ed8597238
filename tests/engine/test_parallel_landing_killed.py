"""A run killed while it puts the merged work of parallel items into a changed work tree,
file by file: the next run finishes that landing, leaving the files already merged as
they are."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from engine_helpers import git
from parallel_helpers import FOLDER, fan_repo, new_item

HERE = Path(__file__).parent

#: Run in its own process: T1 appends a function to a.txt and b.txt in its worktree while
#: the person renames the first one in the work tree (each file needs a three-way merge).
RUNNER = """\
import sys
from pathlib import Path

sys.path[:0] = [{here!r}, {tests!r}]
from parallel_helpers import Agents, run
from phasegate.agents.scripted import ScriptedReply

root = Path(sys.argv[1])
TASKS = "- [ ] T1: Add g\\n- [ ] T2: New file\\n"


def special(request):
    if request.labels.get("task") == "T1":
        for name in ("a.txt", "b.txt"):
            (root / name).write_text("F {{\\n}}\\n")
        return ScriptedReply(write={{n: "f {{\\n}}\\ng {{\\n}}\\n" for n in ("a.txt", "b.txt")}})
    return None


print(run(root, Agents(tasks=TASKS, delay=0.0, special=special)).status)
"""


def test_a_kill_between_two_merged_files_does_not_merge_the_first_again(tmp_path: Path) -> None:
    """Killed after a.txt was merged and before b.txt: the next run merges b.txt and leaves
    a.txt as merged (merged again, its new function used to be put in twice)."""
    root = fan_repo(tmp_path / "repo", parallel=2)
    for name in ("a.txt", "b.txt"):
        (root / name).write_text("f {\n}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "files")
    new_item(root)
    script = tmp_path / "runner.py"
    script.write_text(RUNNER.format(here=str(HERE), tests=str(HERE.parent)))

    def go(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(script), str(root)],
            cwd=root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            env={**os.environ, **env},
        )

    killed = go(PHASEGATE_CRASH_AT="fanout.landed_file")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert (root / "a.txt").read_text() == "F {\n}\ng {\n}\n"
    assert (root / "b.txt").read_text() == "F {\n}\n"  # not landed yet
    finished = go()
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "completed"
    for name in ("a.txt", "b.txt"):
        assert (root / name).read_text() == "F {\n}\ng {\n}\n", name
    lines = (root / FOLDER / ".journal.jsonl").read_text().splitlines()
    landing = [e for e in map(json.loads, lines) if e.get("event") == "fanout.landing-file"]
    assert [e["file"] for e in landing] == ["a.txt", "b.txt"]
