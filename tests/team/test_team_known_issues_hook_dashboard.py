"""An active team session whose FIX_BUILD failures the person accepted (UD-META-FIX-BUILD
``accept``) has known issues: ``phasegate status NAME`` lists them, and so do the
SessionStart hook (what a new session is told of the item) and the dashboard's item page,
where a user looks too."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_helpers import ITEM, LIMIT_BROKEN, cli, in_process, run_through, team_script

from phasegate.dashboard.data import item_detail
from phasegate.dashboard.pages import phases_html
from phasegate.errors import WaitingForHuman
from phasegate.integrations.claude_code.hook import session_context

GATES = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}


def test_accepted_failures_of_an_active_session_are_known_issues_everywhere(
    tmp_path: Path,
) -> None:
    script = team_script()
    script["coder"]["code:T1"][0]["write"]["src/limit.py"] = LIMIT_BROKEN
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    with pytest.raises(WaitingForHuman, match="UD-META-FIX-BUILD"):
        run_through(repo, agents, **GATES)
    repo.answer(ITEM, "UD-META-FIX-BUILD", "accept")
    with pytest.raises(WaitingForHuman, match="UD-DOD"):
        run_through(repo, agents)

    shown = cli(root, "status", ITEM, env={"COLUMNS": "400"})
    assert "Known issues (accepted):" in shown.stdout, shown.stdout
    (issue,) = repo.status(ITEM)["knownIssues"]
    first = issue.splitlines()[0]

    context = session_context({"cwd": str(root)}, environ={})
    assert "- Known issues (accepted) (1):" in context, context
    assert f"  - {first[:200]}" in context, context

    page = phases_html(item_detail(root, ITEM))
    assert "Known issues (accepted)" in page, page
    assert "accepted at UD-META-FIX-BUILD" in page
