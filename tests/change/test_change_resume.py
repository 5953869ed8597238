"""Durable state: a killed ``plan`` or ``impl`` resumes without calling an agent twice.

Each run is a real process killed with SIGKILL at a named fault point right
after an agent's result was journaled and before it was applied; running
the command again must finish the work and never repeat that agent call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from change_helpers import changes

HERE = Path(__file__).parent

DRIVER = """\
import sys
from pathlib import Path
sys.path.insert(0, {here!r})
from change_helpers import ChangeAgents, changes

repo, command = Path(sys.argv[1]), sys.argv[2]
agents = ChangeAgents(repo, log=repo.parent / "calls.jsonl")
backends = {{"default": agents.backend()}}
if command == "plan":
    print(changes(repo).plan("add-oauth", "Add OAuth login", backends=backends).action)
else:
    print(changes(repo).impl("add-oauth", backends=backends).status)
"""


def run(repo: Path, command: str, crash_at: str | None = None) -> subprocess.CompletedProcess[str]:
    driver = repo.parent / "driver.py"
    driver.write_text(DRIVER.format(here=str(HERE)))
    env = {**os.environ}
    if crash_at:
        env["PHASEGATE_CRASH_AT"] = crash_at
    return subprocess.run(
        [sys.executable, str(driver), str(repo), command],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def calls(repo: Path) -> list[tuple[str, str]]:
    lines = (repo.parent / "calls.jsonl").read_text().splitlines()
    return [tuple(json.loads(line)) for line in lines]  # type: ignore[misc]


def test_killed_plan_resumes_without_calling_the_author_again(repo: Path) -> None:
    """Durable state: the proposal's journaled result is reused, not re-dispatched."""
    killed = run(repo, "plan", crash_at="agent.returned@1")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert calls(repo) == [("proposal-author", "proposal")]
    resumed = run(repo, "plan")
    assert resumed.returncode == 0 and resumed.stdout.strip() == "challenged", resumed.stderr
    assert calls(repo) == [
        ("proposal-author", "proposal"),
        ("proposal-author", "spec:session.md"),
        ("proposal-author", "spec:oauth-login.md"),
        ("proposal-author", "tasks"),
        ("challenger", "challenge"),
    ]


def test_killed_impl_resumes_without_calling_the_reviewer_again(repo: Path) -> None:
    """Durable state: the review recorded by create_review is read after the restart."""
    assert run(repo, "plan").returncode == 0
    killed = run(repo, "impl", crash_at="agent.returned@5")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert calls(repo)[-1] == ("reviewer", "review")
    assert changes(repo).state("add-oauth").phase.value == "implementing"
    resumed = run(repo, "impl")
    assert resumed.returncode == 0 and resumed.stdout.strip() == "complete", resumed.stderr
    assert [c for c in calls(repo) if c[0] in ("implementer", "reviewer")] == [
        ("implementer", "implement:data"),
        ("implementer", "implement:logic"),
        ("implementer", "implement:integration"),
        ("implementer", "implement:testing"),
        ("reviewer", "review"),
    ]
