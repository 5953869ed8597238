"""An answer sent to the decisions API as a JSON object without a ``"choice"`` key (or with
``"choice": null``) is refused as the form without a choice is: 400 saying the choice is
missing, naming the decision and its choices, and nothing is recorded. A choice that is
not text is refused saying so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dashboard_helpers import GATED, new_repo, pending_decision
from starlette.testclient import TestClient

from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"


def _journal(root: Path) -> Path:
    return root / "work" / "gated" / GATED / ".journal.jsonl"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = new_repo(tmp_path_factory.mktemp("api-choice") / "repo")
    pending_decision(root)
    return root


@pytest.mark.parametrize("body", [{"note": "looks fine"}, {}, {"choice": None, "note": "x"}])
def test_a_body_without_a_choice_says_it_is_missing(root: Path, body: dict[str, Any]) -> None:
    before = _journal(root).read_text()
    with TestClient(create_app(root), base_url=BASE) as client:
        sent = client.post(f"/api/items/{GATED}/decisions/go", json=body)
        assert sent.status_code == 400, sent.text
        error = sent.json()["error"]
        assert error.startswith("choice is missing"), error
        assert "'go'" in error and "(choices: yes, no)" in error and "\n" not in error
        assert _journal(root).read_text() == before
        assert client.get(f"/api/items/{GATED}/decisions").json()[0]["status"] == "pending"


@pytest.mark.parametrize(
    ("choice", "said"), [(1, "a number"), (False, "true or false"), (["yes"], "an array")]
)
def test_a_choice_that_is_not_text_says_so(root: Path, choice: object, said: str) -> None:
    before = _journal(root).read_text()
    with TestClient(create_app(root), base_url=BASE) as client:
        sent = client.post(f"/api/items/{GATED}/decisions/go", json={"choice": choice})
        assert sent.status_code == 400, sent.text
        error = sent.json()["error"]
        assert '"choice" must be text' in error and said in error, error
        assert _journal(root).read_text() == before
