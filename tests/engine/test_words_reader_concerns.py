"""A passing word of the ``words`` reader that lists a high-severity issue is never a
clean approval: it becomes the first word mapped to ``revise``, or ``UNCLEAR`` when the
vocabulary maps none to ``revise``; the issue stays an open concern ``status`` shows."""

from __future__ import annotations

import json
from pathlib import Path

from engine_helpers import init_repo

from cli_process import run_cli as _cli

CONFIG = """\
version: 1
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
"""

WORKFLOW = """\
name: gonogo
items_dir: work
modes:
  standard: {max_iterations: 2}
roles:
  writer: {access: write}
  critic: {access: read-only}
nodes:
  - id: a
    label: drafting
    executor: writer
    prompt: writer.md
    outputs: [{file: draft.md}]
    reviewers:
      - role: critic
        prompt: critic.md
        reader: words
        on: {GO: pass, STOP: stopped, UNCLEAR: UNCLEAR_TARGET}
    on: {pass: done, stopped: halted}
  - id: done
    kind: end
  - id: halted
    kind: end
    status: stopped
"""

AGENTS = """\
writer:
  "*":
    - write: {"{item_dir}/draft.md": "# Draft\\n"}
critic:
  "*":
    - verdict:
        verdict: GO
        summary: ship it
        issues: [{severity: high, description: SQL injection in login, location: app.py:3}]
"""


def _repo(root: Path, unclear: str) -> Path:
    init_repo(root)
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "gonogo").mkdir(parents=True)
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    (root / ".phasegate" / "agents.yaml").write_text(AGENTS)
    (folder / "gonogo.yaml").write_text(WORKFLOW.replace("UNCLEAR_TARGET", unclear))
    (folder / "prompts" / "gonogo" / "writer.md").write_text("Write the draft.\n")
    (folder / "prompts" / "gonogo" / "critic.md").write_text("Review the draft.\n")
    return root


def test_a_passing_word_with_a_high_issue_and_no_revise_word_is_not_approved(
    tmp_path: Path,
) -> None:
    """GO with a high-severity issue, in a vocabulary mapping no word to revise, is read
    as UNCLEAR: the node does not pass, and status shows the issue as a concern."""
    root = _repo(tmp_path / "repo", "stopped")
    assert _cli(root, "validate", ".phasegate/workflows/gonogo.yaml").returncode == 0
    assert _cli(root, "new", "d", "--workflow", "gonogo", "--description", "x").returncode == 0
    done = _cli(root, "run", "d")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(_cli(root, "status", "d", "--json").stdout)
    assert data["status"] == "stopped"
    assert data["phases"][0]["review"] == "concerns"
    assert data["unresolvedConcerns"] == [
        {"phase": "drafting", "note": "[high] SQL injection in login (at app.py:3)"}
    ]
    shown = _cli(root, "status", "d").stdout
    assert "SQL injection in login" in shown, shown
    verdicts = [
        json.loads(line)
        for line in (root / "work" / "d" / ".journal.jsonl").read_text().splitlines()
        if '"review.verdict"' in line
    ]
    assert [(v["verdict"], v["approved"]) for v in verdicts] == [("UNCLEAR", False)]


def test_with_unclear_mapped_to_revise_the_issue_goes_back_to_the_writer(
    tmp_path: Path,
) -> None:
    """UNCLEAR mapped to revise: the high issue is fed back, and once the budget is spent
    the node completes with it kept as a concern, never as a clean approval."""
    root = _repo(tmp_path / "repo", "revise")
    assert _cli(root, "new", "d", "--workflow", "gonogo", "--description", "x").returncode == 0
    done = _cli(root, "run", "d")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(_cli(root, "status", "d", "--json").stdout)
    assert data["phases"][0]["iterations"] == 2
    assert data["phases"][0]["review"] == "concerns"
    assert [c["note"] for c in data["unresolvedConcerns"]] == [
        "[high] SQL injection in login (at app.py:3)"
    ]
