"""A spec file an implementer adds to the challenged plan is removed even when the
implementer kills phasegate during its call (SIGKILL): the next run removes it before it
does anything else (what it held copied to .phasegate/cache/put-back/after-kill/), says
so and journals it, so `archive` never merges a spec the challenger did not approve."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from change_helpers import ChangeAgents, changes, plan_approved

FOLDER = Path("changes/add-oauth")
KEPT = Path(".phasegate/cache/put-back/after-kill")

#: Run in a process of its own: the implementer adds spec files, then kills phasegate.
KILLING_RUN = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from change_helpers import ChangeAgents, changes
from phasegate.agents.scripted import ScriptedBackend
repo = Path(sys.argv[1])
agents = ChangeAgents(repo)
def handler(request):
    if request.role == "implementer" and sys.argv[3] == "link":
        specs = repo / request.labels["item_dir"] / "specs"
        specs.rename(specs.with_name("moved-specs"))
        os.symlink(repo, specs)
        os.kill(os.getpid(), signal.SIGKILL)
    if request.role == "implementer":
        specs = repo / request.labels["item_dir"] / "specs"
        (specs / "billing.md").write_text("# billing\\n\\nADDED BY THE IMPLEMENTER\\n")
        (specs / "api").mkdir()
        (specs / "api" / "v2.md").write_text("# v2\\n\\nADDED BY THE IMPLEMENTER\\n")
        os.kill(os.getpid(), signal.SIGKILL)
    return agents(request)
changes(repo).impl("add-oauth", backends={"default": ScriptedBackend(handler=handler)})
"""


def killed_during_impl(repo: Path, how: str) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", KILLING_RUN, str(repo), str(Path(__file__).parent), how],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr


def test_a_spec_added_before_killing_phasegate_is_removed_by_the_next_run(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan_approved(repo)
    specs = repo / FOLDER / "specs"
    approved = sorted(p.name for p in specs.iterdir())
    killed_during_impl(repo, "add")
    assert (specs / "billing.md").is_file()  # left as the agent made it

    capsys.readouterr()
    outcome = changes(repo).impl("add-oauth", backends={"default": ChangeAgents(repo).backend()})
    assert outcome.status == "complete", outcome.message
    assert sorted(p.name for p in specs.iterdir()) == approved
    for added in ("billing.md", "api/v2.md"):
        kept = repo / KEPT / FOLDER / "specs" / added
        assert "ADDED BY THE IMPLEMENTER" in kept.read_text(), added
    said = capsys.readouterr().err
    assert "killed during an agent call" in said, said
    assert f"{FOLDER.as_posix()}/specs/billing.md" in said, said
    lines = (repo / FOLDER / ".journal.jsonl").read_text().splitlines()
    (restored,) = [e for e in map(json.loads, lines) if e["event"] == "guard.restored"]
    assert f"{FOLDER.as_posix()}/specs/billing.md" in restored["paths"]
    assert f"{FOLDER.as_posix()}/specs/api/v2.md" in restored["paths"]


def test_a_specs_folder_replaced_by_a_link_before_a_kill_keeps_what_it_leads_to(
    repo: Path,
) -> None:
    plan_approved(repo)
    specs = repo / FOLDER / "specs"
    approved = {p.name: p.read_text() for p in specs.iterdir()}
    killed_during_impl(repo, "link")
    assert specs.is_symlink()  # left as the agent made it

    outcome = changes(repo).impl("add-oauth", backends={"default": ChangeAgents(repo).backend()})
    assert outcome.status == "complete", outcome.message
    assert (repo / "README.md").is_file()
    assert not specs.is_symlink()
    assert {p.name: p.read_text() for p in specs.iterdir()} == approved
