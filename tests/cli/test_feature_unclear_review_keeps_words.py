"""A feature reviewer whose answer cannot be read as a verdict ("LGTM, but ..." from a
text-only backend, or prose where the schema was enforced) is unclear and never approves,
and what it said is kept in its blocker: the review history and the executor's next
iteration see the reviewer's words, not only that they could not be read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SAID = "LGTM, but the spec has a blocker: no acceptance criteria"
AGENTS = f"""\
executor:
  brainstorm: [{{write: {{"{{item_dir}}/brainstorm.md": "# Brainstorm\\n"}}}}]
  specify: [{{write: {{"{{item_dir}}/spec.md": "# Spec\\n"}}}}]
chain-reviewer:
  brainstorm: [{{verdict: {{approved: true, summary: fine, issues: []}}}}]
  specify: [{{text: "{SAID}"}}]
"""


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "300", "PHASEGATE_AGENT_CLIS": "none"},
    )


@pytest.mark.parametrize("structured", [True, False])
def test_an_unreadable_review_keeps_what_the_reviewer_said(
    tmp_path: Path, structured: bool
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    assert phasegate(repo, "init").returncode == 0
    config = repo / ".phasegate" / "config.yaml"
    text = config.read_text()
    setting = "    script: .phasegate/agents.yaml\n"
    assert setting in text
    config.write_text(
        text.replace(setting, f"{setting}    structured_output: {str(structured).lower()}\n")
    )
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS)
    assert phasegate(repo, "new", "a", "--mode", "quick", "--description", "x").returncode == 0

    ran = phasegate(repo, "run", "a", "--until", "specify")
    assert ran.returncode == 0, ran.stderr
    folder = repo / "docs" / "features" / "a"
    events = [json.loads(line) for line in (folder / ".journal.jsonl").read_text().splitlines()]
    verdicts = [e for e in events if e["event"] == "review.verdict" and e["node"] == "specify"]
    assert [(v["approved"], v["unclear"]) for v in verdicts] == [(False, True), (False, True)]
    first = verdicts[0]["issues"][0]["description"]
    assert first.splitlines()[0].startswith("The reviewer's answer could not be read")
    assert first.splitlines()[-1] == f"The reviewer said: {SAID}"
    assert f"The reviewer said: {SAID}" in (folder / ".review-history.md").read_text()
    shown = ran.stdout + ran.stderr
    assert "The reviewer said" not in shown, shown  # the progress keeps to the first line
