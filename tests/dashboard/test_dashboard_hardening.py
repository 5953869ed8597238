"""The dashboard against requests a user (or another site) should not be able to misuse:
odd tokens, artifacts linked from outside their folder, oversized answers, unknown API paths."""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_helpers import (
    GATED,
    ITEM,
    journal_text,
    new_repo,
    pending_decision,
    served,
)
from starlette.testclient import TestClient

from phasegate.dashboard import data
from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"
TOKEN = "t0ken-abc"
#: The largest request body the dashboard takes (1 MiB), and the longest note of an answer.
MAX_BODY_BYTES = 1024 * 1024
MAX_NOTE_CHARS = 20_000
#: Text that only the file outside the repository holds.
OUTSIDE_MARKER = "root:x:0:0:outside-the-repository"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with the item ``ITEM`` (its folder holds a spec) and a file outside it."""
    base = tmp_path_factory.mktemp("hardening")
    root = new_repo(base / "repo")
    (root / "docs/features" / ITEM / "spec.md").write_text("# Spec\n\nInside.\n")
    (base / "outside.md").write_text(OUTSIDE_MARKER + "\n")
    return root


@pytest.fixture
def client(repo: Path) -> Iterator[TestClient]:
    with TestClient(create_app(repo), base_url=BASE) as test_client:
        yield test_client


_GATED_ITEMS = iter(range(1000))


@pytest.fixture
def gated(repo: Path) -> str:
    """A new item of the ``gated`` workflow whose gate ``go`` waits for a person."""
    name = f"{GATED}-{next(_GATED_ITEMS)}"
    pending_decision(repo, name)
    return name


def _assert_api_error(response: object, status: int, *words: str) -> str:
    """``response`` is the API's error shape, ``{"error": ..., "exit_code": 2}``."""
    assert response.status_code == status, response.text[:300]  # type: ignore[attr-defined]
    content_type = response.headers["content-type"]  # type: ignore[attr-defined]
    assert content_type.startswith("application/json"), content_type
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) == {"error", "exit_code"} and body["exit_code"] == 2, body
    message = body["error"]
    assert "\n" not in message and "Traceback" not in message, message
    for word in words:
        assert word in message, (word, message)
    return str(message)


# -- the token -------------------------------------------------------------------------


def test_a_non_ascii_token_is_refused_like_any_wrong_token(repo: Path) -> None:
    """A token with characters beyond ASCII, in the address, a header or the cookie, is
    a wrong token: 401 with the usual error, never an internal error."""
    with TestClient(create_app(repo, token=TOKEN), base_url=BASE) as remote:
        _assert_api_error(remote.get("/api/items?token=%C3%A9"), 401, "needs its token")
        _assert_api_error(remote.get(f"/api/items?token={TOKEN}%C3%A9"), 401, "needs its token")
        header = remote.get("/api/items", headers={"authorization": b"Bearer \xe9"})
        _assert_api_error(header, 401, "needs its token")
        cookie = remote.get("/api/items", headers={"cookie": b"phasegate_token=\xe9"})
        _assert_api_error(cookie, 401, "needs its token")
        page = remote.get("/?token=%C3%A9")
        assert page.status_code == 401 and "needs its token" in page.text
        assert remote.get(f"/api/items?token={TOKEN}").status_code == 200


def test_a_served_remote_dashboard_refuses_a_non_ascii_token_as_json(tmp_path: Path) -> None:
    """``serve --host 0.0.0.0 --allow-remote``: the same through a real server."""
    root = new_repo(tmp_path / "repo")
    with served(root, "--host", "0.0.0.0", "--allow-remote") as url:
        found = re.match(r"http://0\.0\.0\.0:(\d+)/\?token=", url)
        assert found is not None, url
        port = int(found.group(1))
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/items?token=%C3%A9", timeout=10)
        assert refused.value.code == 401
        body = json.loads(refused.value.read())
        assert body["exit_code"] == 2 and "needs its token" in body["error"]
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            connection.putrequest("GET", "/api/items")
            connection.putheader("Authorization", b"Bearer \xe9")
            connection.endheaders()
            answered = connection.getresponse()
            assert answered.status == 401
            assert "needs its token" in json.loads(answered.read())["error"]
        finally:
            connection.close()


# -- artifacts -------------------------------------------------------------------------


def test_an_artifact_linked_from_outside_its_folder_is_neither_listed_nor_served(
    client: TestClient, repo: Path
) -> None:
    """A symlink in the item's folder to a file elsewhere (outside the repository, or in
    it but outside the folder) is not an artifact; one to a file of the folder is."""
    folder = repo / "docs/features" / ITEM
    os.symlink(repo.parent / "outside.md", folder / "pw.md")
    (repo / "README-elsewhere.md").write_text("# Elsewhere\n\nNot this item's.\n")
    os.symlink(repo / "README-elsewhere.md", folder / "elsewhere.md")
    (folder / "notes").mkdir()
    os.symlink(folder / "spec.md", folder / "notes" / "spec-again.md")
    try:
        listed = [a["name"] for a in client.get(f"/api/items/{ITEM}/artifacts").json()]
        assert "spec.md" in listed and "notes/spec-again.md" in listed
        assert "pw.md" not in listed and "elsewhere.md" not in listed
        for name in ("pw.md", "elsewhere.md"):
            direct = client.get(f"/api/items/{ITEM}/artifacts/{name}")
            _assert_api_error(direct, 404, name)
            shown = client.get(f"/items/{ITEM}/artifacts/{name}")
            assert shown.status_code == 404
            assert OUTSIDE_MARKER not in shown.text and "Not this item" not in shown.text
        item_page = client.get(f"/items/{ITEM}").text
        assert "pw.md" not in item_page and "elsewhere.md" not in item_page
        same = client.get(f"/api/items/{ITEM}/artifacts/notes/spec-again.md")
        assert same.status_code == 200 and "Inside." in same.json()["markdown"]
    finally:
        for link in ("pw.md", "elsewhere.md", "notes/spec-again.md"):
            (folder / link).unlink()
        (folder / "notes").rmdir()


# -- answers ---------------------------------------------------------------------------


def test_the_json_answer_api_refuses_a_body_over_its_limit_and_records_nothing(
    client: TestClient, repo: Path, gated: str
) -> None:
    """A JSON answer larger than the form's limit is refused with one line, not recorded."""
    url = f"/api/items/{gated}/decisions/go"
    huge = "x" * (MAX_BODY_BYTES + 10)
    refused = client.post(url, json={"choice": "yes", "note": huge})
    _assert_api_error(refused, 413, "too large", "1 MiB")

    def chunks() -> Iterator[bytes]:  # no Content-Length: the body is counted as it comes
        yield b'{"choice": "yes", "note": "'
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b"y" * 65536
        yield b'"}'

    streamed = client.post(url, content=chunks(), headers={"content-type": "application/json"})
    _assert_api_error(streamed, 413, "too large")
    assert data.decisions(repo, gated)[0]["status"] == "pending"
    journal = journal_text(repo, gated, "work/gated")
    assert "xxxxxxxxxx" not in journal and "yyyyyyyyyy" not in journal


def test_a_served_dashboard_answers_an_oversized_body_with_its_error(
    repo: Path, gated: str
) -> None:
    """Through ``phasegate serve``: a client that sends the whole body before it reads
    (as urllib does) still gets the one-line JSON refusal, with the usual headers."""
    body = json.dumps({"choice": "yes", "note": "z" * (3 * MAX_BODY_BYTES)}).encode()
    with served(repo) as url:
        request = urllib.request.Request(
            f"{url}api/items/{gated}/decisions/go",
            data=body,
            headers={"content-type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 413
    assert refused.value.headers["x-frame-options"] == "DENY"
    answer = json.loads(refused.value.read())
    assert answer["exit_code"] == 2 and "too large" in answer["error"]
    assert data.decisions(repo, gated)[0]["status"] == "pending"
    assert "zzzzzzzzzz" not in journal_text(repo, gated, "work/gated")


def test_a_note_over_the_cap_is_refused_on_every_route_and_records_nothing(
    client: TestClient, repo: Path, gated: str
) -> None:
    """A note longer than MAX_NOTE_CHARS: 400 naming the cap, from the API and the form."""
    url = f"/api/items/{gated}/decisions/go"
    long_note = "n" * (MAX_NOTE_CHARS + 1)
    cap = f"{MAX_NOTE_CHARS:,}"
    _assert_api_error(client.post(url, json={"choice": "yes", "note": long_note}), 400, cap)
    form_url = f"/items/{gated}/decisions/go"
    scripted = client.post(
        form_url,
        data={"choice": "yes", "note": long_note},
        headers={"accept": "application/json"},
    )
    _assert_api_error(scripted, 400, cap)
    plain = client.post(form_url, data={"choice": "yes", "note": long_note})
    assert plain.status_code == 400 and cap in plain.text
    assert data.decisions(repo, gated)[0]["status"] == "pending"
    assert "nnnnnnnnnn" not in journal_text(repo, gated, "work/gated")
    longest = "m" * MAX_NOTE_CHARS
    done = client.post(url, json={"choice": "yes", "note": longest})
    assert done.status_code == 200, done.text
    assert data.decisions(repo, gated)[0]["answer"]["note"] == longest


# -- unknown API paths -----------------------------------------------------------------


def test_unknown_api_paths_and_methods_are_json_errors(client: TestClient) -> None:
    """Under /api/ every error is JSON, an unknown address and a refused method too."""
    _assert_api_error(client.get("/api/nosuch"), 404, "/api/nosuch")
    _assert_api_error(client.get(f"/api/items/{ITEM}/nosuch/deeper"), 404, "nosuch")
    refused = client.post("/api/items")
    _assert_api_error(refused, 405, "POST", "/api/items")
    assert "GET" in refused.headers["allow"]
    _assert_api_error(client.delete(f"/api/items/{ITEM}"), 405, "DELETE")
    assert client.get("/nosuch").status_code == 404  # a page: not JSON
    assert not client.get("/nosuch").headers["content-type"].startswith("application/json")
