"""After a run was killed (SIGKILL) or stopped on a failed agent call in the middle of a
node, every view of the item says what ``phasegate status NAME`` says: the table's status
column reads ``interrupted`` (or ``stopped``), not ``active``; ``status --json``'s list has
``inProgress.interrupted``; the dashboard's list and item page show it too. An item whose
failed checks block it reads ``blocked`` there, as ``status NAME``'s phase line says."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
sys.path.insert(0, str(Path(__file__).parent))
from dashboard_helpers import ITEM, approving_script, init_repo, new_repo, phasegate, write_script
from test_status_live import running, status_json, table_row, wait_for

from phasegate.dashboard.data import item_detail, list_items
from phasegate.dashboard.pages import items_page, summary_html

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


def _killed(tmp_path: Path) -> Path:
    script = approving_script()
    script["executor"]["brainstorm"] = [
        {"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}, "sleep": 60}
    ]
    repo = new_repo(tmp_path / "repo", script)
    journal = repo / "docs" / "features" / ITEM / ".journal.jsonl"
    with running(repo, ITEM) as run:
        wait_for(run, journal, "agent.dispatched")
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
    return repo


def _assert_shown(repo: Path, said: str) -> None:
    detail = phasegate(repo, "status", ITEM, env={"COLUMNS": "300"})
    assert f"Phase: brainstorm, {said}: iteration 1 of 3" in detail.stdout, detail.stdout

    row = table_row(repo, ITEM)
    assert row.split()[2] == said, row
    assert row.rstrip().endswith(f"phasegate run {ITEM}")

    (listed,) = status_json(repo)
    assert listed["inProgress"]["interrupted"] is True
    assert listed["running"] is None

    (dash_row,) = list_items(repo)
    assert f"status-{said}" in items_page([dash_row], repo=str(repo))
    page = item_detail(repo, ITEM)
    assert f">{said}</span>" in summary_html(page)


def test_the_table_and_dashboard_say_a_killed_run_left_the_node_interrupted(
    tmp_path: Path,
) -> None:
    repo = _killed(tmp_path)
    _assert_shown(repo, "interrupted")


def test_the_table_and_dashboard_say_a_run_stopped_on_a_failed_call_stopped(
    tmp_path: Path,
) -> None:
    script = approving_script()
    script["executor"]["brainstorm"] = [{"fail": {"exit": 1, "error": "the model is overloaded"}}]
    repo = new_repo(tmp_path / "repo", script)
    failed = phasegate(repo, "run", ITEM)
    assert failed.returncode != 0
    _assert_shown(repo, "stopped")
    page = item_detail(repo, ITEM)
    assert "the model is overloaded" in summary_html(page)


def test_the_table_and_dashboard_say_an_item_its_failed_checks_block_is_blocked(
    tmp_path: Path,
) -> None:
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init", "--test-command", "false").returncode == 0
    write_script(repo, approving_script())
    created = phasegate(repo, "new", ITEM, "--mode", "standard", "--description", "A limiter")
    assert created.returncode == 0, created.stderr
    assert phasegate(repo, "run", ITEM, timeout=300).returncode == 4

    detail = phasegate(repo, "status", ITEM, env={"COLUMNS": "300"})
    assert "Phase: implement, blocked (checks failed)" in detail.stdout, detail.stdout
    row = table_row(repo, ITEM)
    assert row.split()[2] == "blocked", row
    (dash_row,) = list_items(repo)
    assert "status-blocked" in items_page([dash_row], repo=str(repo))
    assert ">blocked</span>" in summary_html(item_detail(repo, ITEM))
