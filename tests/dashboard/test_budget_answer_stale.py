"""An answer given on the dashboard answers the question the page showed, never a later one.

Every budget question has the id ``budget``; a form sent again (a reload, a second tab left
open) must not answer the next, different budget question the run asked since.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from dashboard_helpers import ITEM, approving_script, new_repo, phasegate, write_script
from starlette.testclient import TestClient

from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"
URL = f"/items/{ITEM}/decisions/budget"
API = f"/api/items/{ITEM}/decisions/budget"


def _repo(tmp_path: Path) -> Path:
    """Every call costs $1 and the item may spend $1: each call past the first asks."""
    script = approving_script()
    for replies in script["executor"].values():
        replies[0]["cost_usd"] = 1
    script["*"]["*"][0]["cost_usd"] = 1
    root = new_repo(tmp_path / "repo", script)
    config = root / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "budget:\n  item: {usd: 1}\n")
    write_script(root, script)
    asked = phasegate(root, "run", ITEM)
    assert asked.returncode == 3, asked.stderr
    return root


def _form_fields(page: str) -> dict[str, str]:
    """The hidden fields of the budget decision's form, as a browser would send them."""
    form = re.search(r'<form class="answer"[^>]*decisions/budget[^>]*>(.*?)</form>', page, re.S)
    assert form is not None, page
    hidden = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(1))
    return dict(hidden)


def _state(root: Path) -> dict[str, object]:
    path = root / "docs" / "features" / ITEM / ".engine.json"
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def test_a_form_sent_again_does_not_answer_the_next_budget_question(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with TestClient(create_app(root), base_url=BASE) as client:
        page = client.get(f"/items/{ITEM}").text
        assert 'maxlength="20000"' in page  # the note field holds what the server takes
        fields = {**_form_fields(page), "choice": "raise", "note": "1"}
        first = client.post(URL, data=fields, follow_redirects=False)
        assert first.status_code == 303
    asked_again = phasegate(root, "run", ITEM)
    assert asked_again.returncode == 3, asked_again.stderr
    question = _state(root)["decisions"]["budget"]  # type: ignore[index]
    assert question["status"] == "pending" and "$2.00 is spent" in question["question"]
    with TestClient(create_app(root), base_url=BASE) as client:
        again = client.post(URL, data=fields, follow_redirects=False)
        assert again.status_code == 409, again.text
        assert "came too late" in again.text and "already answered" in again.text
        # The question now pending is still pending, and the cap was not raised for it.
        pending = [d for d in client.get(f"/api/items/{ITEM}/decisions").json()]
        assert [d["status"] for d in pending if d["id"] == "budget"] == ["pending"]
        assert "$2.00 of $2.00" in client.get(f"/items/{ITEM}").text
        # The page shown now answers the question it shows.
        fresh = _form_fields(client.get(f"/items/{ITEM}").text)
        assert fresh != _form_fields(page)
        answered = client.post(URL, data={**fresh, "choice": "stop"}, follow_redirects=False)
        assert answered.status_code == 303
    stopped = phasegate(root, "run", ITEM)
    assert stopped.returncode == 4, stopped.stderr


def test_the_json_api_refuses_an_answer_to_a_question_no_longer_pending(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with TestClient(create_app(root), base_url=BASE) as client:
        listed = client.get(f"/api/items/{ITEM}/decisions").json()
        visit = next(d["visit"] for d in listed if d["id"] == "budget")
        assert client.post(API, json={"choice": "raise", "note": "1", "visit": visit}).is_success
    assert phasegate(root, "run", ITEM).returncode == 3
    with TestClient(create_app(root), base_url=BASE) as client:
        late = client.post(API, json={"choice": "raise", "note": "1", "visit": visit})
        assert late.status_code == 409 and "came too late" in late.json()["error"]
        assert late.json()["exit_code"] == 2
        never = client.post(API, json={"choice": "raise", "visit": visit + 5})
        assert never.status_code == 400 and "was never asked" in never.json()["error"]
        bad = client.post(API, json={"choice": "raise", "visit": "one"})
        assert bad.status_code == 400 and "visit" in bad.json()["error"]
        # Without "visit" the answer goes to the question pending now, as before.
        now = client.post(API, json={"choice": "stop"})
        assert now.status_code == 200 and now.json()["visit"] == visit + 1
