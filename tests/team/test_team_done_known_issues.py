"""A team session that reached DONE after the person accepted FIX_BUILD's failing checks
(UD-META-FIX-BUILD ``accept``), fixed them by hand and checked again (UD-DOD ``recheck``):
the failing checks FIX_BUILD's last round found are the accepted known issues (seed 003:
"(b) accept with known issues"), not current failures; ``phasegate status`` shows them so,
and no longer under "Unresolved reviewer concerns"."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_helpers import LIMIT_BROKEN, LIMIT_OK, cli, in_process, run_through, team_script

from phasegate.errors import WaitingForHuman

GATES = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}


def test_accepted_failing_checks_are_shown_as_known_issues_at_done(tmp_path: Path) -> None:
    script = team_script()
    script["coder"]["code:T1"][0]["write"]["src/limit.py"] = LIMIT_BROKEN
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    with pytest.raises(WaitingForHuman, match="UD-META-FIX-BUILD"):
        run_through(repo, agents, **GATES)
    repo.answer("login", "UD-META-FIX-BUILD", "accept")
    with pytest.raises(WaitingForHuman, match="UD-DOD"):
        run_through(repo, agents)
    (root / "src" / "limit.py").write_text(LIMIT_OK)  # fixed by hand
    repo.answer("login", "UD-DOD", "recheck")
    assert run_through(repo, agents).status == "completed"

    shown = cli(root, "status", "login", env={"COLUMNS": "400"})
    assert shown.returncode == 0, shown.stderr
    assert "Unresolved reviewer concerns" not in shown.stdout, shown.stdout
    assert "unresolved reviewer concerns" not in shown.stdout, shown.stdout
    assert "known issues accepted in INTEGRATE" in shown.stdout, shown.stdout
    known = shown.stdout.split("Known issues (accepted):\n", 1)[1].splitlines()[0]
    assert known.startswith("    - meta: accepted at UD-META-FIX-BUILD: [blocker] check 'T1:1'")
    data = repo.status("login")
    assert data["unresolvedConcerns"] == []
    assert [i.split(":")[0] for i in data["knownIssues"]] == ["meta"]
    assert "check 'AC-1'" in data["knownIssues"][0]
