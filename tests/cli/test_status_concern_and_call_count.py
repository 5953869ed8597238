"""``status NAME`` of an item blocked by a failing check shows the check's first line of
output with its concern (the concern's first line only introduces it: ``... failed with
exit code 3:``), and counts one agent call as one ``call``, not ``calls``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from cli_process import run_cli

CONFIG = """\
version: 1
commands:
  test: "echo 'assert 2 == 3 in test_sum'; exit 3"
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
"""

WORKFLOW = """\
name: checked
items_dir: work
modes:
  standard: {max_iterations: 1}
roles:
  worker: {access: write}
nodes:
  - id: build
    executor: worker
    prompt: build.md
    checks: [test]
    on: {pass: done}
  - id: done
    kind: end
"""

SCRIPT = """\
worker:
  "*": [{write: {"a.py": "x = 1\\n"}}]
"""


def test_status_shows_the_failing_check_output_and_one_call(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    prompts = root / ".phasegate" / "workflows" / "prompts" / "checked"
    prompts.mkdir(parents=True)
    (prompts / "build.md").write_text("Build {{ item }}.\n")
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    (root / ".phasegate" / "agents.yaml").write_text(SCRIPT)
    (root / ".phasegate" / "workflows" / "checked.yaml").write_text(WORKFLOW)
    assert run_cli(root, "new", "m", "--workflow", "checked", "--description", "x").returncode == 0
    ran = run_cli(root, "run", "m")
    assert ran.returncode == 4, ran.stdout + ran.stderr
    shown = run_cli(root, "status", "m")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    text = " ".join(shown.stdout.split())  # the table wraps long lines
    assert "Unresolved reviewer concerns:" in text, shown.stdout
    assert "failed with exit code 3: assert 2 == 3 in test_sum" in text, shown.stdout
    assert "Usage: 1 agent call," in text, shown.stdout
