"""A journal event whose fields hold values of unexpected types (a journal edited by hand)
is one odd line: ``phasegate logs`` prints it and the rest (no internal error), and an
item page open while it is appended keeps following the journal (its stream does not break);
the page opened afresh says which line is wrong, as it did."""

from __future__ import annotations

import json
from pathlib import Path

from dashboard_helpers import GATED, new_repo, pending_decision, phasegate
from starlette.testclient import TestClient

from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"
ODD = {
    "ts": "2026-01-01T00:00:00Z",
    "event": "agent.finished",
    "item": GATED,
    "ok": True,
    "duration_s": {"s": 1},
    "key": "draft#9/1/execute/0",
    "attempt": "draft.9.executor.odd",
    "role": "executor",
    "phase": "draft",
}


def test_an_event_with_odd_field_types_is_one_odd_line(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    pending_decision(root)
    journal = root / "work" / "gated" / GATED / ".journal.jsonl"
    with TestClient(create_app(root), base_url=BASE) as client:
        offset = client.get(f"/api/items/{GATED}/events").json()["offset"]
        with open(journal, "a") as handle:
            handle.write(json.dumps(ODD) + "\n")
        with client.stream("GET", f"/items/{GATED}/events?offset={offset}") as stream:
            data = None
            for line in stream.iter_lines():
                if line.startswith("data: ") and '"count": 1' in line:
                    data = json.loads(line[len("data: ") :])
                    break
        assert data is not None
        assert "a field of it holds a value of an unexpected type" in data["html"]
        page = client.get(f"/items/{GATED}")
        assert page.status_code == 500
        assert "field &#x27;duration_s&#x27; has the wrong type" in page.text
    logs = phasegate(root, "logs", GATED)
    assert logs.returncode == 0, logs.stderr
    assert "unexpected type" in logs.stdout and "internal error" not in logs.stderr
    assert "created" in logs.stdout  # the rest is there
