"""An answer sent from the page's form (or the API) without a choice is refused with 400
saying the choice is missing, naming the decision and its choices, and nothing is
recorded: not "'' is not a choice"."""

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


@pytest.mark.parametrize("form", [{"note": "looks fine"}, {"choice": "", "note": "x"}])
def test_the_form_without_a_choice_says_it_is_missing(root: Path, form: dict[str, str]) -> None:
    before = _journal(root).read_text()
    with TestClient(create_app(root), base_url=BASE) as client:
        sent = client.post(f"/items/{GATED}/decisions/go", data=form, follow_redirects=False)
        assert sent.status_code == 400, sent.text
        assert "is not a choice" not in sent.text
        assert "choice is missing" in sent.text
        assert "decision &#x27;go&#x27;" in sent.text and "yes, no" in sent.text
        as_json = client.post(
            f"/items/{GATED}/decisions/go", data=form, headers={"accept": "application/json"}
        )
        assert as_json.status_code == 400
        error = as_json.json()["error"]
        assert error.startswith("choice is missing"), error
        assert "'go'" in error and "(choices: yes, no)" in error and "\n" not in error
        assert _journal(root).read_text() == before
        assert client.get(f"/api/items/{GATED}/decisions").json()[0]["status"] == "pending"


def test_the_api_with_an_empty_choice_says_it_is_missing(root: Path) -> None:
    before = _journal(root).read_text()
    with TestClient(create_app(root), base_url=BASE) as client:
        sent = client.post(f"/api/items/{GATED}/decisions/go", json={"choice": "  "})
        assert sent.status_code == 400, sent.text
        error = sent.json()["error"]
        assert error.startswith("choice is missing"), error
        assert "'go'" in error and "(choices: yes, no)" in error
        assert _journal(root).read_text() == before


def test_a_choice_missing_for_a_decision_that_is_not_there_names_that(root: Path) -> None:
    with TestClient(create_app(root), base_url=BASE) as client:
        sent = client.post(
            f"/items/{GATED}/decisions/nosuch",
            data={"note": "x"},
            headers={"accept": "application/json"},
        )
        assert sent.status_code in (400, 404), sent.text
        assert "nosuch" in sent.json()["error"]
