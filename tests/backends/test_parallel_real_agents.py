"""A parallel foreach with real Claude Code agents on the stub server, each in its worktree."""

from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import APPROVE, claude_settings

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import git
from parallel_helpers import FOLDER, ITEM, TASKS, fan_repo, worktrees

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer

_CWD = re.compile(r"[Ww]orking directory: (\S+)")
_TASK = re.compile(r"Do task (T\d)")


class Coders:
    """What the stub answers Claude Code: write src/<task>.py in the session's directory.

    The first turn of T1-T3 waits a little, so the three sessions overlap; T4
    writes the names of the files it finds in its directory (T1-T3's work).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: set[str] = set()
        self.most = 0
        self.cwd: dict[str, str] = {}

    def __call__(self, request: LoggedRequest) -> Reply | None:
        task = _TASK.search(request.prompt)
        where = _CWD.search(request.system) or _CWD.search(request.prompt)
        if task is None or where is None:
            return None
        key, cwd = task.group(1), where.group(1)
        if request.tool_result:  # the file was written: the turn is over
            with self.lock:
                self.open.discard(key)
            return Reply(text=f"Wrote src/{key}.py")
        with self.lock:
            self.open.add(key)
            self.most = max(self.most, len(self.open))
            self.cwd[key] = cwd
        if key != "T4":
            time.sleep(1.5)
            content = f"# {key}\n"
        else:
            found = sorted(p.name for p in (Path(cwd) / "src").glob("*.py"))
            content = f"# T4 wires {' '.join(found)}\n"
        return Reply.tool("Write", file_path=f"{cwd}/src/{key}.py", content=content)


@pytest.mark.cli_e2e
@pytest.mark.slow
def test_three_claude_agents_in_parallel_worktrees_then_a_dependent_sees_all_three(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    """Three independent tasks run by three Claude Code processes at once, each in its own
    worktree; merged; then the dependent task's agent works in a tree with all three."""
    root = fan_repo(tmp_path / "repo", parallel=3)
    coders = Coders()
    with StubLLMServer(Script(anthropic=[coders])) as stub:
        config: dict[str, Any] = {
            "retries": {"agent": 0},
            "roles": {"coder": {"backend": "claude"}},
            "backends": {"claude": claude_settings(stub, home)},
        }
        repo = Repo(root, Config.model_validate(config))
        repo.new(ITEM, workflow="fan", description="Fan out")
        planner = ScriptedBackend(
            script={"planner": {"*": [{"write": {"{item_dir}/tasks.md": TASKS}}]}}
        )
        reviewer = ScriptedBackend(script={"reviewer": {"*": [{"verdict": APPROVE}]}})
        outcome = repo.run(
            ITEM, backends={"planner": planner, "reviewer": reviewer}, options=RunOptions()
        )
    assert outcome.status == "completed", outcome.message
    assert coders.most == 3
    assert len({coders.cwd[k] for k in ("T1", "T2", "T3", "T4")}) == 4
    assert all(".phasegate/worktrees/" in coders.cwd[k] for k in coders.cwd)
    for key in ("T1", "T2", "T3"):
        assert (root / "src" / f"{key}.py").read_text() == f"# {key}\n"
    assert (root / "src" / "T4.py").read_text() == "# T4 wires T1.py T2.py T3.py\n"
    assert worktrees(root) == []
    assert (root / FOLDER / ".engine.json").is_file()
    assert "?? src/T4.py" in git(root, "status", "--porcelain", "--untracked-files=all")
