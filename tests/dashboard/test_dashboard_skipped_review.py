"""A phase run with its review skipped (``--no-review``) adds no review iteration on the
dashboard either: the list's total and the phase row agree with ``phasegate status``."""

from __future__ import annotations

import json
from pathlib import Path

from dashboard_helpers import ITEM, new_repo, phasegate

from phasegate.dashboard import data
from phasegate.dashboard.pages import phases_html


def test_a_skipped_review_counts_no_iteration_in_the_list_or_the_phase_row(
    tmp_path: Path,
) -> None:
    root = new_repo(tmp_path / "repo")
    ran = phasegate(root, "run", ITEM, "--phase", "brainstorm", "--no-review")
    assert ran.returncode == 0, ran.stderr
    status = json.loads(phasegate(root, "status", ITEM, "--json").stdout)
    (brainstorm,) = [p for p in status["phases"] if p["name"] == "brainstorm"]
    assert brainstorm["review"] == "skipped"
    assert [p["name"] for p in status["phases"] if p["status"] == "completed"] == ["brainstorm"]
    (row,) = data.list_items(root)
    assert row["iterations"] == 0  # no reviewer looked at anything yet
    detail = data.item_detail(root, ITEM)
    html = phases_html(detail)
    cell = html.split('<td data-label="phase">brainstorm</td>', 1)[1]
    cell = cell.split('<td data-label="iterations" class="num">', 1)[1].split("</td>", 1)[0]
    assert cell == "-", html
