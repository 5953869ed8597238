"""A reviewer's concern of thousands of characters is clipped in the status `run --until`
prints at its end, and in `phasegate status`, as run's progress clips it (300 characters,
`…` marking the cut); `status --json` and the review history keep it whole."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from test_progress_repair_and_long_issues import AGENTS, phasegate


def test_an_unresolved_concern_is_clipped_in_the_summary(tmp_path: Path) -> None:
    issue = "The limiter drops requests " + "and more words " * 400 + "END-OF-ISSUE"
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True
        )
    assert phasegate(repo, "init").returncode == 0
    (repo / ".phasegate" / "agents.yaml").write_text(AGENTS.format(issue=issue))
    assert phasegate(repo, "new", "a", "--description", "x").returncode == 0
    ran = phasegate(repo, "run", "a", "--until", "brainstorm", "--yes")
    assert ran.returncode == 0, ran.stderr
    status = phasegate(repo, "status", "a")
    for output in (ran.stdout + ran.stderr, status.stdout + status.stderr):
        assert "Unresolved reviewer concerns:" in output, output
        (shown,) = [x for x in output.splitlines() if x.startswith("    - brainstorm: ")]
        assert "The limiter drops requests" in shown and shown.endswith("…"), shown
        assert len(shown) < 340 and "END-OF-ISSUE" not in shown, shown
    whole = phasegate(repo, "status", "a", "--json")
    assert "END-OF-ISSUE" in json.dumps(json.loads(whole.stdout)["unresolvedConcerns"])
