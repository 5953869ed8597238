"""``phasegate change list`` once every change is archived does not say there are no
changes yet: it says none is in progress and how many were archived, and where."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_process import run_cli

SCRIPT = """\
proposal-author:
  "*":
    - write:
        "{item_dir}/proposal.md": "---\\nspecs: [{name: session}]\\n---\\n# Proposal\\n"
        "{item_dir}/specs/session.md": "### Requirement: Sessions\\nIt SHALL keep sessions.\\n"
        "{item_dir}/tasks.md": "# Tasks\\n\\n## 1. Data Layer\\n- [ ] 1.1 Create the token model\\n"
challenger:
  "*": [{verdict: {verdict: APPROVED, summary: Ready, issues: []}}]
implementer:
  "*": [{write: {"app/oauth.py": "TOKENS = {}\\n"}}]
reviewer:
  review:
    - mcp:
        - tool: create_review
          arguments: {change_id: "{item}", verdict: APPROVED, summary: Matches the spec,
                      findings: [], tests_run: [{command: pytest -q, passed: true}]}
"""


def test_change_list_names_the_archived_changes_when_none_is_in_progress(
    tmp_path: Path,
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert run_cli(tmp_path, "init").returncode == 0
    (tmp_path / ".phasegate" / "agents.yaml").write_text(SCRIPT, encoding="utf-8")
    for command in (("plan", "add-oauth", "Add OAuth login"), ("impl",), ("archive",)):
        args = command if len(command) > 1 else (*command, "add-oauth")
        done = run_cli(tmp_path, *args, "-q")
        assert done.returncode == 0, (args, done.stdout, done.stderr)

    listed = run_cli(tmp_path, "change", "list")
    assert listed.returncode == 0, listed.stderr
    assert "No changes yet" not in listed.stdout, listed.stdout
    assert "No change in progress (1 archived in changes/archive)" in listed.stdout
    assert 'phasegate plan ID "what it is about"' in listed.stdout
    # The JSON list stays the changes in progress: none.
    assert json.loads(run_cli(tmp_path, "change", "list", "--json").stdout) == []

    # status, with no work item left in progress, says so too (not "No work items yet").
    for _ in range(2):  # the table from the item index, then the full listing
        shown = run_cli(tmp_path, "status")
        assert shown.returncode == 0, shown.stderr
        assert "No work items yet" not in shown.stdout, shown.stdout
        text = " ".join(shown.stdout.split())
        assert "No work items in progress (1 archived change in changes/archive" in text, text
        assert "phasegate change list" in text, text
        (tmp_path / ".phasegate" / "index").mkdir(exist_ok=True)
