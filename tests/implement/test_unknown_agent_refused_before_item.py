"""A task naming an agent that is not known is refused before a work item is made, by
`implement` and by `new --plan` (exit 2, naming the task and its line), as an error in
PLAN.md is: nothing is left behind, and once the agent exists the same command works."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli
from test_implement_cli import APPROVING, ONE_TASK, scripted_repo

from phasegate.errors import ExitCode

UNKNOWN = ONE_TASK.replace("the-developer", "the-ml-wizard")
LINE = (
    f"phasegate: error: {PLAN}:5:34: task 'Sign outgoing payloads' names agent 'the-ml-wizard', "
    "which is not known here"
)


def test_implement_makes_no_item_for_a_task_naming_an_unknown_agent(tmp_path: Path) -> None:
    root = scripted_repo(tmp_path, APPROVING, plan=UNKNOWN)
    ran = cli(root, "implement", "006")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert ran.stderr.strip().splitlines()[-1].startswith(LINE), ran.stderr
    assert "Created 006" not in ran.stdout
    assert not (root / ".phasegate" / "implement" / "006").exists()
    assert json.loads(cli(root, "status", "--json").stdout) == []

    (root / PLAN).write_text(ONE_TASK)
    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stderr
    assert "Created 006 (implement)" in again.stdout


def test_new_makes_no_item_for_a_task_naming_an_unknown_agent(tmp_path: Path) -> None:
    root = scripted_repo(tmp_path, APPROVING, plan=UNKNOWN)
    made = cli(root, "new", "signing", "--workflow", "implement", "--plan", PLAN)
    assert made.returncode == ExitCode.BAD_INPUT, made.stderr
    assert made.stderr.strip().splitlines()[-1].startswith(LINE), made.stderr
    assert "known agents: the-architect, the-data-engineer, the-developer" in made.stderr
    assert not (root / ".phasegate" / "implement" / "signing").exists()
    assert json.loads(cli(root, "status", "--json").stdout) == []


def test_a_ticked_task_naming_an_unknown_agent_is_not_refused(tmp_path: Path) -> None:
    """Only open tasks are run, so only their agents must be known."""
    plan = UNKNOWN.replace("- [ ] **Sign", "- [x] **Sign") + (
        "- [ ] **Verify payloads** [`agent: the-developer`]\n"
    )
    root = scripted_repo(tmp_path, APPROVING, plan=plan)
    made = cli(root, "new", "signing", "--workflow", "implement", "--plan", PLAN)
    assert made.returncode == 0, made.stderr
