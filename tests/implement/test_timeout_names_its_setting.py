"""A review of `phasegate implement` that ran out of time takes the escalation's default
action, and the console line saying so names the limit and the setting that holds it
(`review_timeout_minutes` of workflows.implement.settings): a person who wants reviews to
get longer knows what to raise, rather than only that the review timed out."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import cli, make_repo
from test_implement_cli import ONE_TASK, SCRIPTED


def test_a_timed_out_review_names_review_timeout_minutes(tmp_path: Path) -> None:
    config = {
        **SCRIPTED,
        "workflows": {"implement": {"settings": {"review_timeout_minutes": 0.02}}},
    }
    root = make_repo(tmp_path / "repo", ONE_TASK, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "import hmac\n"}, "text": "s"}]},
        "*": {"*": [{"sleep": 30, "text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    done = cli(root, "implement", "006", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if "review timed out" in line]
    assert said == [
        "phasegate: 006: task 'Sign outgoing payloads': review timed out "
        "(review_timeout_minutes: 0.02 in workflows.implement.settings); default action "
        "skip_with_warning"
    ], done.stderr
