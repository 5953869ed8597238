"""`--answer` with a decision id the workflow cannot ask names the ids a person can
answer: the ones the item waits on, as asked, and the others with their placeholders
written as `<name>`, never a raw `{{ template }}`."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import cli
from test_escalation_answers_unclear import MEDIUM, unclear_repo


def test_an_unknown_answer_id_names_the_pending_decisions(tmp_path: Path) -> None:
    root = unclear_repo(tmp_path)
    assert cli(root, "implement", "006", "-q").returncode == 3
    for command in ("run", "implement"):
        refused = cli(root, command, "006", "--answer", "foo=bar")
        assert refused.returncode == 2, refused.stderr
        line = refused.stderr.strip()
        assert "\n" not in line, line
        assert "has no decision 'foo'" in line, line
        assert f"waiting: escalate-{MEDIUM};" in line, line
        assert "unclear-<task>" in line and "budget" in line, line
        assert "{{" not in line, line


def test_before_any_run_the_templated_ids_are_readable(tmp_path: Path) -> None:
    root = unclear_repo(tmp_path)
    refused = cli(root, "implement", "006", "--answer", "foo=bar")
    assert refused.returncode == 2, refused.stderr
    assert "its decisions: unclear-<task>, escalate-<task>" in refused.stderr, refused.stderr
    assert "{{" not in refused.stderr
