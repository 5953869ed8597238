"""An answer's note (and choice) is text: a file sent in the page's form, a note that is a
JSON number or object, or a body that is not UTF-8 is refused (400, one line saying what)
and nothing is recorded, rather than recording a Python representation as the note."""

from __future__ import annotations

from pathlib import Path

import pytest
from dashboard_helpers import GATED, new_repo, pending_decision
from starlette.testclient import TestClient

from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"


def _journal(root: Path) -> Path:
    return root / "work" / "gated" / GATED / ".journal.jsonl"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = new_repo(tmp_path / "repo")
    pending_decision(root)
    return root


def test_a_file_sent_as_the_forms_note_is_refused_and_nothing_is_recorded(root: Path) -> None:
    before = _journal(root).read_text()
    with TestClient(create_app(root), base_url=BASE) as client:
        sent = client.post(
            f"/items/{GATED}/decisions/go",
            data={"choice": "yes"},
            files={"note": ("notes.txt", b"a note in a file", "text/plain")},
            follow_redirects=False,
        )
        assert sent.status_code == 400, sent.text
        assert "the form&#x27;s field note must be text, not a file" in sent.text
        as_json = client.post(
            f"/items/{GATED}/decisions/go",
            data={"note": "ok"},
            files={"choice": ("c.txt", b"yes", "text/plain")},
            headers={"accept": "application/json"},
        )
        assert as_json.status_code == 400
        assert "field choice must be text" in as_json.json()["error"]
        assert _journal(root).read_text() == before
        assert client.get(f"/api/items/{GATED}/decisions").json()[0]["status"] == "pending"


@pytest.mark.parametrize(
    ("note", "said"), [(5, "a number"), ({"why": "x"}, "an object"), (["x"], "an array")]
)
def test_a_json_note_that_is_not_text_is_refused_and_nothing_is_recorded(
    root: Path, note: object, said: str
) -> None:
    before = _journal(root).read_text()
    with TestClient(create_app(root), base_url=BASE) as client:
        sent = client.post(f"/api/items/{GATED}/decisions/go", json={"choice": "yes", "note": note})
        assert sent.status_code == 400, sent.text
        error = sent.json()["error"]
        assert '"note" must be text' in error and said in error
        assert _journal(root).read_text() == before


def test_a_body_that_is_not_utf8_is_a_clean_400(root: Path) -> None:
    before = _journal(root).read_text()
    with TestClient(create_app(root), base_url=BASE, raise_server_exceptions=False) as client:
        sent = client.post(
            f"/api/items/{GATED}/decisions/go",
            content=b'{"choice": "yes", "note": "\xff\xfe"}',
            headers={"content-type": "application/json"},
        )
        assert sent.status_code == 400, sent.text
        assert "must be a JSON object" in sent.json()["error"]
        assert _journal(root).read_text() == before
