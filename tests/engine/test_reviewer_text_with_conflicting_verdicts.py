"""A reviewer answering in text (a backend that does not enforce the schema) is never read
as approving when its answer is ambiguous: two JSON verdicts that disagree, a JSON verdict
whose keys repeat with different values, or an approving first line above a JSON verdict
that does not match the schema are all unclear, recorded as not approved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import init_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions

ITEM_DIR = Path("docs/features/item")
REJECT = '{"approved": false, "issues": [], "summary": "no problem statement"}'
APPROVE = '{"approved": true, "issues": [], "summary": "fine"}'

ANSWERS = {
    "a rejection, then an approval": (
        f"Draft:\n```json\n{REJECT}\n```\nFinal:\n```json\n{APPROVE}\n```"
    ),
    "a key given twice": '{"approved": false, "approved": true, "issues": [], "summary": "x"}',
    "APPROVED above an almost-right verdict": 'APPROVED\n```json\n{"approved": "yes"}\n```',
    "APPROVED above a verdict with a wrong key": 'APPROVED\n```json\n{"Approved": true}\n```',
}


def review(tmp_path: Path, answer: str) -> dict[str, Any]:
    root = init_repo(tmp_path / "repo")
    repo = Repo(root, Config())
    repo.new("item", mode="hotfix", description="Add rate limiting")
    executor = ScriptedBackend(
        script={"executor": {"*": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}]}}
    )
    reviewer = ScriptedBackend(script={"*": {"*": [{"text": answer}]}}, structured_output=False)
    repo.run(
        "item",
        backends={"executor": executor, "chain-reviewer": reviewer},
        options=RunOptions(until="brainstorm"),
    )
    lines = (root / ITEM_DIR / ".journal.jsonl").read_text().splitlines()
    (verdict,) = [e for e in map(json.loads, lines) if e["event"] == "review.verdict"]
    return verdict


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_an_ambiguous_text_verdict_is_unclear(answer: str, tmp_path: Path) -> None:
    verdict = review(tmp_path, ANSWERS[answer])
    assert verdict["approved"] is False
    assert verdict["unclear"] is True, verdict


def test_one_verdict_after_a_quoted_example_is_still_read(tmp_path: Path) -> None:
    """A fenced block that is not a verdict (an example quoted from the spec) is no second
    verdict: the answer's own is read."""
    answer = f'The spec shows:\n```json\n{{"port": 80}}\n```\nMy verdict:\n```json\n{APPROVE}\n```'
    verdict = review(tmp_path, answer)
    assert (verdict["approved"], verdict["verdict"]) == (True, "APPROVED")
