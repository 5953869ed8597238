"""The SessionStart hook says of a loop one of whose items is blocked what ``phasegate
status NAME`` says (``blocked``, ``blocked (checks failed)`` when the item's checks still
failed), not that the loop is ``in progress``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "cli"))
from test_status_parallel_loop_faults import _repo

from cli_process import cli_in_process as cli
from phasegate.errors import ExitCode
from phasegate.integrations.claude_code.hook import session_context

CODER = {"*": [{"sleep": 0.2, "write": {"src/{task}.py": "z\n"}}]}
#: T1's checks fail in T1's worktree, where its coder wrote src/T1.py; T2's pass.
COMMANDS = 'commands:\n  unit-tests: "test ! -f src/T1.py"\n'


@pytest.mark.parametrize(
    ("how", "said"),
    [("check", "blocked"), ("checks", "blocked (checks failed)")],
)
def test_the_hook_says_a_loop_with_a_blocked_item_is_blocked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str, said: str
) -> None:
    repo = _repo(tmp_path, CODER, config=COMMANDS, **{how: True})
    assert cli(capsys, "new", "f1", "-w", "fan", "-d", "x", "-C", str(repo))[0] == 0
    code, out, err = cli(capsys, "run", "f1", "-C", str(repo))
    assert code == ExitCode.BLOCKED, out + err
    code, shown, err = cli(capsys, "status", "f1", "-C", str(repo))
    assert code == 0, err
    assert f"Phase: tasks, {said}: 1 of 2 items done" in shown, shown

    context = session_context({"cwd": str(repo)}, environ={})
    (phase,) = [line for line in context.splitlines() if line.startswith("- Phase:")]
    assert phase.startswith(f"- Phase: tasks, {said} ("), context
    assert "in progress" not in phase
