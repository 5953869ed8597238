"""An item with a huge journal: its page shows the latest timeline entries (at most
TIMELINE_SHOWN) and says how many earlier ones it leaves out and how to see them all,
rather than sending every event of the journal in one page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dashboard_helpers import GATED, new_repo, pending_decision
from starlette.testclient import TestClient

from phasegate.dashboard.pages import TIMELINE_SHOWN
from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"
CALLS = 1500


def _long_journal(tmp_path: Path) -> tuple[Path, int]:
    """The gated item waiting at its gate, its journal then grown by CALLS agent calls;
    and how many events it holds."""
    root = new_repo(tmp_path / "repo")
    pending_decision(root)
    journal = root / "work" / "gated" / GATED / ".journal.jsonl"
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    dispatched = next(e for e in events if e["event"] == "agent.dispatched")
    finished = next(e for e in events if e["event"] == "agent.finished")
    with open(journal, "a") as handle:
        for n in range(CALLS):
            for event in (dispatched, finished):
                handle.write(json.dumps({**event, "key": f"extra-{n}"}) + "\n")
    return root, len(events) + 2 * CALLS


def test_a_huge_journal_shows_its_latest_entries_and_says_what_it_left_out(
    tmp_path: Path,
) -> None:
    root, count = _long_journal(tmp_path)
    with TestClient(create_app(root), base_url=BASE) as client:
        page = client.get(f"/items/{GATED}")
        assert page.status_code == 200
        timeline = re.search(r'<ol id="timeline"[^>]*>(.*?)</ol>', page.text, re.S)
        assert timeline is not None
        shown = re.findall(r'<li class="entry kind-(?!earlier)', timeline[1])
        assert len(shown) == TIMELINE_SHOWN
        assert 'data-event="item.created"' not in timeline[1]
        said = re.search(
            rf"([0-9]+) earlier events not shown: <code>phasegate logs {GATED}</code> prints "
            "them all",
            timeline[1],
        )
        assert said is not None, timeline[1][:300]
        # Every event of the calls added is an entry; a few of the run's own are not.
        assert 2 * CALLS - TIMELINE_SHOWN <= int(said[1]) <= count - TIMELINE_SHOWN
        # The gate waiting is still on the page, and so is every event through the API.
        assert 'action="/items/gated-one/decisions/go"' in page.text
        assert len(client.get(f"/api/items/{GATED}/events").json()["events"]) == count


def test_a_replaced_journal_read_again_on_a_live_page_is_capped_too(tmp_path: Path) -> None:
    root, count = _long_journal(tmp_path)
    with (
        TestClient(create_app(root), base_url=BASE) as client,
        client.stream("GET", f"/items/{GATED}/events?offset=999999999") as stream,
    ):
        data = None
        for line in stream.iter_lines():
            if line.startswith("data: ") and '"reset": true' in line:
                data = json.loads(line[len("data: ") :])
                break
        assert data is not None
        assert data["count"] == count
        assert data["html"].count('<li class="entry kind-') == TIMELINE_SHOWN + 1
        assert re.search(
            r"^<li class=\"entry kind-earlier\">.*?[0-9]+ earlier events", data["html"]
        )
