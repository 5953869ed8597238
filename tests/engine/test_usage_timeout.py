"""A review that runs out of time and ends by its ``on_timeout`` is one call in
``status``'s usage (it failed, and the workflow used its outcome): not counted once as
a used call and again as a failed one."""

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
name: timed
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
        timeout: 2
        on_timeout: pass
        on: {GO: pass, STOP: revise, UNCLEAR: revise}
    on: {pass: done}
  - id: done
    kind: end
"""

AGENTS = """\
writer:
  "*":
    - write: {"{item_dir}/draft.md": "# Draft\\n"}
      usage: {input_tokens: 40, output_tokens: 2}
critic:
  "*":
    - sleep: 30
      verdict: {verdict: GO, summary: fine, issues: []}
"""


def test_a_review_ended_by_its_timeout_is_counted_once(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "timed").mkdir(parents=True)
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    (root / ".phasegate" / "agents.yaml").write_text(AGENTS)
    (folder / "timed.yaml").write_text(WORKFLOW)
    (folder / "prompts" / "timed" / "writer.md").write_text("Write the draft.\n")
    (folder / "prompts" / "timed" / "critic.md").write_text("Review the draft.\n")
    assert _cli(root, "new", "d", "--workflow", "timed", "--description", "x").returncode == 0
    done = _cli(root, "run", "d")
    assert done.returncode == 0, done.stdout + done.stderr
    journal = (root / "work" / "d" / ".journal.jsonl").read_text().splitlines()
    dispatched = [line for line in journal if '"agent.dispatched"' in line]
    assert len(dispatched) == 2
    data = json.loads(_cli(root, "status", "d", "--json").stdout)
    assert data["phases"][0]["usage"]["calls"] == 2
    assert data["usage"]["calls"] == 2
    assert data["usage"]["failedCalls"] == 1
    assert data["usage"]["inputTokens"] + data["usage"]["outputTokens"] == 42
    shown = _cli(root, "status", "d").stdout
    assert "Usage: 2 agent calls (1 failed), 42 tokens in and out" in shown, shown
