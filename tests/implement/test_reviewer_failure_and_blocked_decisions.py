"""Seed 004's agent failures, for the review too: a task whose reviewer's call fails every
attempt is a decision for a person (retry the review, skip the task with a warning, or
abort), not a run that stops with exit 6; and an implementer answering ``BLOCKED:`` is
asked about at ``blocked-<task>``, not at ``failed-<task>``."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli
from test_implement_cli import SIGN, scripted_repo

REVIEW_FAILS = {
    "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}, "text": "done"}]},
    "*": {"*": [{"fail": {"exit": 1, "error": "the model is overloaded"}}]},
}
REVIEW_WORKS = {
    "the-developer": {"implement": [{"write": {"src/sign.py": "x = 2\n"}, "text": "again"}]},
    "*": {"*": [{"text": "APPROVED"}]},
}


def _calls(root: Path) -> list[dict[str, object]]:
    log = root / ".phasegate" / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_a_failing_reviewer_asks_a_person_instead_of_stopping_the_run(tmp_path: Path) -> None:
    root = scripted_repo(tmp_path, REVIEW_FAILS)
    first = cli(root, "implement", "006")
    said = first.stdout + first.stderr
    assert first.returncode == 3, said
    assert f"review-failed-{SIGN}" in said, said
    assert "could not be reviewed" in said, said
    assert "the model is overloaded" in said, said
    assert "Retry the review, skip it with a warning, or abort?" in said, said

    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert (row["state"], row["decision"]) == ("review failed", f"review-failed-{SIGN}"), row

    calls = len(_calls(root))
    again = cli(root, "implement", "006")
    assert again.returncode == 3, again.stdout + again.stderr
    assert len(_calls(root)) == calls  # the journaled failure is reused: no new call


def test_retrying_a_failed_review_reviews_the_same_work_again(tmp_path: Path) -> None:
    root = scripted_repo(tmp_path, REVIEW_FAILS)
    assert cli(root, "implement", "006").returncode == 3
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(REVIEW_WORKS))
    done = cli(root, "implement", "006", "--answer", f"review-failed-{SIGN}=retry")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()
    # The implementer was not called again: only the review was.
    assert (root / "src" / "sign.py").read_text() == "x = 1\n"
    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert row["state"] == "done", row


def test_skipping_a_task_whose_review_failed_goes_on_with_a_warning(tmp_path: Path) -> None:
    root = scripted_repo(tmp_path, REVIEW_FAILS)
    assert cli(root, "implement", "006").returncode == 3
    answered = cli(root, "answer", "006", f"review-failed-{SIGN}", "skip_with_warning")
    assert answered.returncode == 0, answered.stderr
    done = cli(root, "implement", "006")
    assert done.returncode == 0, done.stdout + done.stderr
    plan = (root / PLAN).read_text()
    assert "⚠️ Skipped with warning (phasegate): its review failed: the-security-engineer" in (
        plan
    ), plan
    assert "the model is overloaded" in plan, plan


def test_a_blocked_implementer_is_asked_about_at_blocked_task(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"text": "BLOCKED: the key format is not specified"}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script)
    first = cli(root, "implement", "006")
    said = first.stdout + first.stderr
    assert first.returncode == 3, said
    assert f"blocked-{SIGN}: Task 'Sign outgoing payloads'" in said, said
    assert f"failed-{SIGN}" not in said, said
    (row,) = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert (row["state"], row["decision"]) == ("agent blocked", f"blocked-{SIGN}"), row
    answered = cli(root, "answer", "006", f"blocked-{SIGN}", "skip_with_warning")
    assert answered.returncode == 0, answered.stderr
    assert cli(root, "implement", "006").returncode == 0
    assert "the key format is not specified" in (root / PLAN).read_text()
