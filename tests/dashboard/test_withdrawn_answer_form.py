"""A dashboard form (or API call) answering a decision a run withdrew meanwhile is refused
as too late (409, as a stale form is), saying the decision no longer waits; nothing is
recorded. ``phasegate answer`` is told the same (exit 2)."""

from __future__ import annotations

import re
from pathlib import Path

from dashboard_helpers import ITEM, approving_script, new_repo, phasegate, write_script
from starlette.testclient import TestClient

from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"


def _withdrawn(tmp_path: Path) -> tuple[Path, dict[str, str], int]:
    """A budget question the page showed, then withdrawn: the cap was taken out of the
    config and the next run went on without an answer."""
    script = approving_script()
    for replies in script["executor"].values():
        replies[0]["cost_usd"] = 1
    script["*"]["*"][0]["cost_usd"] = 1
    root = new_repo(tmp_path / "repo", script)
    config = root / ".phasegate" / "config.yaml"
    plain = config.read_text()
    config.write_text(plain + "budget:\n  item: {usd: 1}\n")
    write_script(root, script)
    asked = phasegate(root, "run", ITEM)
    assert asked.returncode == 3, asked.stderr
    with TestClient(create_app(root), base_url=BASE) as client:
        page = client.get(f"/items/{ITEM}").text
        visit = next(d["visit"] for d in client.get(f"/api/items/{ITEM}/decisions").json())
    form = re.search(r'<form class="answer"[^>]*decisions/budget[^>]*>(.*?)</form>', page, re.S)
    assert form is not None, page
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form[1]))
    config.write_text(plain)
    phasegate(root, "run", ITEM)
    journal = (root / "docs" / "features" / ITEM / ".journal.jsonl").read_text()
    assert '"decision.withdrawn"' in journal
    return root, fields, visit


def test_a_form_answering_a_withdrawn_decision_is_refused_as_too_late(tmp_path: Path) -> None:
    root, fields, visit = _withdrawn(tmp_path)
    journal = root / "docs" / "features" / ITEM / ".journal.jsonl"
    before = journal.read_text()
    with TestClient(create_app(root), base_url=BASE) as client:
        form = client.post(
            f"/items/{ITEM}/decisions/budget",
            data={**fields, "choice": "raise", "note": "1"},
            follow_redirects=False,
        )
        assert form.status_code == 409, form.text
        assert "came too late" in form.text and "withdrew it" in form.text
        api = client.post(
            f"/api/items/{ITEM}/decisions/budget", json={"choice": "stop", "visit": visit}
        )
        assert api.status_code == 409, api.text
        assert "withdrew it" in api.json()["error"] and api.json()["exit_code"] == 2
    late = phasegate(root, "answer", ITEM, "budget", "stop")
    assert late.returncode == 2, late.stderr
    assert "came too late" in late.stderr and "withdrew it" in late.stderr
    assert journal.read_text() == before  # nothing recorded
