"""A decision waiting on the dashboard says what each choice does, which need a note and
which is recommended, as ``phasegate decisions`` does; the list of items points at it."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_helpers import GATED, add_gated_workflow, new_repo, phasegate
from starlette.testclient import TestClient

from phasegate.dashboard import pages
from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An item of the ``gated`` workflow waiting at its gate, whose ``no`` needs a note."""
    root = new_repo(tmp_path_factory.mktemp("choices") / "repo")
    add_gated_workflow(root)
    flow = root / ".phasegate" / "workflows" / "gated.yaml"
    flow.write_text(
        flow.read_text().replace(
            "no: {to: stopped, description: stop here}",
            "no: {to: stopped, description: stop here, note: required}",
        )
    )
    created = phasegate(root, "new", GATED, "--workflow", "gated", "--description", "Try")
    assert created.returncode == 0, created.stderr
    ran = phasegate(root, "run", GATED)
    assert ran.returncode == 3, ran.stderr
    return root


@pytest.fixture
def client(repo: Path) -> Iterator[TestClient]:
    with TestClient(create_app(repo), base_url=BASE) as test_client:
        yield test_client


def test_a_pending_decision_shows_what_each_choice_does(client: TestClient) -> None:
    page = client.get(f"/items/{GATED}").text
    assert "<b>yes</b>: ship it" in page
    assert '<b>no</b>: stop here <span class="needs-note">(needs a note)</span>' in page
    listed = client.get(f"/api/items/{GATED}/decisions").json()
    assert listed[0]["notes_required"] == ["no"]


def test_a_choice_without_its_note_says_where_the_note_goes(client: TestClient) -> None:
    refused = client.post(
        f"/items/{GATED}/decisions/go",
        data={"choice": "no", "visit": "1"},
        headers={"Accept": "application/json"},
    )
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert "needs a note" in error and "Note field" in error
    assert "--note" not in error  # a command-line option means nothing on the page
    # Without the page's script, the error page leads back to the item.
    page = client.post(f"/items/{GATED}/decisions/go", data={"choice": "no", "visit": "1"})
    assert page.status_code == 400
    assert f'href="/items/{GATED}#decisions"' in page.text


def test_the_list_and_the_summary_say_a_decision_waits_here(client: TestClient) -> None:
    listing = client.get("/").text
    assert f'href="/items/{GATED}#decisions">1 decision waiting</a>' in listing
    page = client.get(f"/items/{GATED}").text
    assert '<a href="#decisions">answer below</a>' in page


def test_the_recommended_choice_is_marked() -> None:
    decision = {
        "id": "strategy",
        "question": "How to review?",
        "choices": ["per-batch", "single-final"],
        "descriptions": {"per-batch": "after each batch", "single-final": "once at the end"},
        "recommendation": "single-final",
        "status": "pending",
        "visit": 1,
    }
    html = pages.decisions_html("it", [decision], [])
    assert '<b>single-final</b>: once at the end <span class="recommended">' in html
    assert 'value="single-final" class="recommended"' in html


def test_a_port_in_use_says_how_to_pick_another(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "repo")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        refused = phasegate(root, "serve", "--port", str(port))
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"cannot listen on 127.0.0.1:{port}" in lines[0]
    assert "--port 0" in lines[0]
