"""An artifact a completed phase made, deleted since: the next phase needs it
(``previous_required``), so the run stops blocked (exit 4) before that phase starts,
with one line naming the file, the phase that made it and the command that runs it
again; no agent is called, the completed phase stays completed, and running that
phase again lets the item go on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, approving_script, new_repo, phasegate

BLOCKED = 4
LINE = (
    f"phasegate: error: cannot start design: spec.md, which the specify phase makes, is "
    f"missing or empty though that phase completed; put it back, or run the specify phase "
    f"again: "
    f"phasegate run {ITEM} --phase specify"
)


def journal(folder: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (folder / ".journal.jsonl").read_text().splitlines()]


def test_a_deleted_artifact_of_a_completed_phase_stops_the_next_one(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", approving_script())
    folder = repo / "docs/features" / ITEM
    assert phasegate(repo, "run", ITEM, "--until", "specify").returncode == 0
    (folder / "spec.md").unlink()
    before = len(journal(folder))

    for args in (("run", ITEM), ("run", ITEM, "--yes"), ("run", ITEM, "--phase", "design")):
        result = phasegate(repo, *args)
        assert result.returncode == BLOCKED, (args, result.stderr)
        assert result.stderr.strip().splitlines() == [LINE], args

    events = journal(folder)[before:]
    assert not [e for e in events if str(e["event"]).startswith(("agent.", "phase.", "node."))]
    assert not (folder / "design.md").exists()
    status = json.loads(phasegate(repo, "status", ITEM, "--json").stdout)
    assert status["blocked"] == LINE.removeprefix("phasegate: error: ")
    assert status["blockedBy"] == {"by": "prerequisites", "node": "design"}
    phases = {p["node"]: p for p in status["phases"]}
    assert phases["specify"]["status"] == "completed"
    assert phases["design"]["status"] == "pending"

    # As the line says: the phase run again makes the file, and the item goes on.
    again = phasegate(repo, "run", ITEM, "--phase", "specify", "--yes")
    assert again.returncode == 0, again.stderr
    assert (folder / "spec.md").is_file()
    on = phasegate(repo, "run", ITEM, "--until", "design")
    assert on.returncode == 0, on.stderr
    assert (folder / "design.md").is_file()


def test_deleted_while_the_next_phase_goes_on_stops_it_unfinished(tmp_path: Path) -> None:
    """Deleted while design is under way (here: its run killed before the review): no
    verdict can make spec.md again, so design stops blocked, still unfinished, rather
    than complete with a blocker; with the file back the phase goes on."""
    repo = new_repo(tmp_path / "repo", approving_script())
    folder = repo / "docs/features" / ITEM
    assert phasegate(repo, "run", ITEM, "--until", "specify").returncode == 0
    spec = (folder / "spec.md").read_text()
    crash = {"PHASEGATE_CRASH_AT": "dispatch.before_call@2"}  # design's reviewer
    assert phasegate(repo, "run", ITEM, "--until", "design", env=crash).returncode == -9
    (folder / "spec.md").unlink()

    result = phasegate(repo, "run", ITEM, "--until", "design")
    assert result.returncode == BLOCKED, result.stderr
    assert result.stderr.strip().splitlines()[-1] == LINE.replace(
        "cannot start design:", "design cannot go on:"
    )
    status = json.loads(phasegate(repo, "status", ITEM, "--json").stdout)
    design = next(p for p in status["phases"] if p["node"] == "design")
    assert design["status"] != "completed"
    ended = [e["node"] for e in journal(folder) if e["event"] == "phase.completed"]
    assert "design" not in ended

    (folder / "spec.md").write_text(spec)
    on = phasegate(repo, "run", ITEM, "--until", "design")
    assert on.returncode == 0, on.stderr
    status = json.loads(phasegate(repo, "status", ITEM, "--json").stdout)
    design = next(p for p in status["phases"] if p["node"] == "design")
    assert design["status"] == "completed" and design["review"] == "approved"
