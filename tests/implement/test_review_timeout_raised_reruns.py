"""A review that ran out of time is the call's result (it ends with the escalation's
default action, not retried), and a run killed just after journaling it reuses it when
resumed. When the limit was raised since (`review_timeout_minutes`), the review is asked
again instead: the recorded result says only that it did not finish in the smaller limit,
and taking the default action for it (a task ticked as skipped) would ignore the raise."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from implement_helpers import PLAN, cli, make_repo
from test_implement_cli import ONE_TASK, SCRIPTED


def killed_after_the_timed_out_review(tmp_path: Path) -> Path:
    config = {
        **SCRIPTED,
        "workflows": {"implement": {"settings": {"review_timeout_minutes": 0.02}}},
    }
    root = make_repo(tmp_path / "repo", ONE_TASK, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "import hmac\n"}, "text": "s"}]},
        "*": {"*": [{"sleep": 3, "text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    # The implementer's call returns first, the review's (timed out) second: killed there.
    killed = cli(root, "implement", "006", "-q", env={"PHASEGATE_CRASH_AT": "agent.returned@2"})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    return root


def limit(root: Path, minutes: float) -> None:
    path = root / ".phasegate" / "config.yaml"
    config = json.loads(path.read_text())
    config["workflows"]["implement"]["settings"]["review_timeout_minutes"] = minutes
    path.write_text(json.dumps(config) + "\n")


@pytest.mark.parametrize(("minutes", "reviewed"), [(1, True), (0.02, False)])
def test_a_raised_limit_asks_the_review_again(
    tmp_path: Path, minutes: float, reviewed: bool
) -> None:
    root = killed_after_the_timed_out_review(tmp_path)
    limit(root, minutes)
    done = cli(root, "implement", "006", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    plan = (root / PLAN).read_text()
    assert "- [x] **Sign outgoing payloads**" in plan
    assert ("the review timed out" not in plan) == reviewed, plan
