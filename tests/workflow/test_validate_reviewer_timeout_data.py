"""``phasegate validate`` warns of a reviewer's ``timeout`` naming item data that no
plug-in of the workflow sets (as it does of a gate's ``timeout.minutes``): one line naming
the file, line and field; the workflow is still valid (exit 0)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from test_review_timeout_data_unset_warns import WORKFLOW

from cli_process import run_cli


def test_validate_warns_of_a_reviewer_timeout_naming_unset_data(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    prompts = tmp_path / ".phasegate" / "workflows" / "prompts" / "wf"
    prompts.mkdir(parents=True)
    (prompts / "draft.md").write_text("Draft.\n")
    (prompts / "check.md").write_text("Check.\n")
    path = tmp_path / ".phasegate" / "workflows" / "wf.yaml"
    path.write_text(WORKFLOW)
    shown = run_cli(tmp_path, "validate", str(path))
    assert shown.returncode == 0, shown.stdout + shown.stderr
    text = shown.stdout + shown.stderr
    line = next((ln for ln in text.splitlines() if "check_seconds" in ln), "")
    assert "wf.yaml:12: nodes[0].reviewers[0].timeout:" in line, text
    assert "reviewer 'checker' of node 'draft'" in line, text
    assert "the review takes the default limit" in line, text
