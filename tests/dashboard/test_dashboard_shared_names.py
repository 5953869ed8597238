"""An item name two workflows have, in the dashboard: every item page and endpoint takes
``?workflow=W`` to pick one, the list links to each with it, and the commands shown name the
workflow, so that they work as pasted; without it the name gives the CLI's clear error."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_helpers import ITEM, new_repo, phasegate
from starlette.testclient import TestClient

from phasegate.dashboard import data
from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"
#: The workflow with the second item named ``ITEM`` (its items live in ``work/``).
OTHER = "review-loop"
#: An item only the other workflow has.
UNIQUE = "only-here"
#: How the dashboard asks for the workflow (in the address), and how the commands do.
PICK_ONE = "add ?workflow=feature|review-loop to the address"
PICK_ONE_CLI = "pick one with --workflow"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ITEM`` of ``feature`` (run through specify, then waiting on a decision to skip to
    implement) and ``ITEM`` of ``review-loop`` (with a note of its own), and ``UNIQUE``."""
    root = new_repo(tmp_path_factory.mktemp("shared") / "repo")
    assert phasegate(root, "init", "--example", OTHER).returncode == 0
    ran = phasegate(root, "run", ITEM, "--until", "specify")
    assert ran.returncode == 0, ran.stderr
    for name in (ITEM, UNIQUE):
        created = phasegate(root, "new", name, "-w", OTHER, "-d", "the other one")
        assert created.returncode == 0, created.stderr
    (root / "work" / ITEM / "notes.md").write_text("# Notes of the other one\n")
    waiting = phasegate(root, "run", ITEM, "-w", "feature", "--phase", "implement")
    assert waiting.returncode == 3, waiting.stderr
    return root


@pytest.fixture
def client(repo: Path) -> Iterator[TestClient]:
    with TestClient(create_app(repo), base_url=BASE) as test_client:
        yield test_client


def _attributes(page: str, name: str) -> list[str]:
    return re.findall(rf'{name}="([^"]*)"', page)


def test_the_list_links_to_each_item_of_a_shared_name_with_its_workflow(
    client: TestClient,
) -> None:
    """Each row of the shared name opens its own item; a unique name keeps its short link."""
    page = client.get("/")
    assert page.status_code == 200
    links = _attributes(page.text, "href")
    assert f"/items/{ITEM}?workflow=feature" in links
    assert f"/items/{ITEM}?workflow={OTHER}" in links
    assert f"/items/{UNIQUE}" in links
    assert f"/items/{ITEM}" not in links
    for link in (f"/items/{ITEM}?workflow=feature", f"/items/{ITEM}?workflow={OTHER}"):
        assert client.get(link).status_code == 200


def test_the_list_link_encodes_the_workflow(repo: Path) -> None:
    """A workflow name is put in the address URL-encoded (and the page escapes it)."""
    from phasegate.dashboard import pages

    rows = [
        {"id": "dup", "workflow": "a&b c", "error": "x"},
        {"id": "dup", "workflow": "other", "error": "y"},
    ]
    page = pages.items_page(rows, str(repo))
    assert 'href="/items/dup?workflow=a%26b%20c"' in page
    assert pages.item_url("dup", "events", workflow="a/b") == "/items/dup/events?workflow=a%2Fb"


def test_the_list_commands_of_a_shared_name_name_the_workflow(
    client: TestClient, repo: Path
) -> None:
    """The next command of each row (page and /api/items) names its workflow where the
    name is shared, and works when pasted; a unique name's command is unchanged."""
    rows = client.get("/api/items").json()
    assert rows == data.list_items(repo)
    commands = {(row["id"], row["workflow"]): row["nextCommand"] for row in rows}
    assert commands == {
        (ITEM, "feature"): f"phasegate answer {ITEM} --workflow feature transition-warning proceed",
        (ITEM, OTHER): f"phasegate run {ITEM} --workflow {OTHER}",
        (UNIQUE, OTHER): f"phasegate run {UNIQUE}",
    }
    page = client.get("/").text
    for command in commands.values():
        assert f"<code>{command}</code>" in page


@pytest.mark.parametrize("workflow", ["feature", OTHER])
def test_the_item_page_and_api_of_each_workflow_open_with_it(
    client: TestClient, workflow: str
) -> None:
    """With ?workflow= each item of the shared name opens: its page, its JSON, its events,
    its artifacts (listed and opened) and its decisions."""
    query = {"workflow": workflow}
    page = client.get(f"/items/{ITEM}", params=query)
    assert page.status_code == 200, page.text
    detail = client.get(f"/api/items/{ITEM}", params=query)
    assert detail.status_code == 200, detail.text
    assert detail.json()["id"] == ITEM and detail.json()["workflow"] == workflow
    assert f"--workflow {workflow}" in detail.json()["nextCommand"]
    assert f"<code>{detail.json()['nextCommand']}</code>" in page.text
    events = client.get(f"/api/items/{ITEM}/events", params=query).json()
    assert events["events"][0]["event"] == "item.created"
    assert events["events"][0]["workflow"] == workflow
    listed = client.get(f"/api/items/{ITEM}/artifacts", params=query).json()
    expected = "spec.md" if workflow == "feature" else "notes.md"
    assert {
        "name": expected,
        "url": f"/items/{ITEM}/artifacts/{expected}?workflow={workflow}",
    } in listed
    assert len(listed) == (3 if workflow == "feature" else 1)  # each its own folder's files
    artifact = client.get(f"/api/items/{ITEM}/artifacts/{expected}", params=query)
    assert artifact.status_code == 200 and artifact.json()["name"] == expected
    shown = client.get(f"/items/{ITEM}/artifacts/{expected}", params=query)
    assert shown.status_code == 200
    assert f'href="/items/{ITEM}?workflow={workflow}"' in shown.text  # back to its item
    decisions = client.get(f"/api/items/{ITEM}/decisions", params=query)
    assert decisions.status_code == 200
    assert [d["id"] for d in decisions.json()] == (
        ["transition-warning"] if workflow == "feature" else []
    )


def test_the_item_page_keeps_the_workflow_in_its_links_and_forms(client: TestClient) -> None:
    """Artifact links, the live event stream and the answer forms of a page opened with
    ?workflow= name it too; its next command and pending answer command name it."""
    page = client.get(f"/items/{ITEM}?workflow=feature").text
    assert _attributes(page, "data-events") == [f"/items/{ITEM}/events?workflow=feature"]
    artifacts = [a for a in _attributes(page, "href") if "/artifacts/" in a]
    assert f"/items/{ITEM}/artifacts/spec.md?workflow=feature" in artifacts
    assert all(a.endswith("?workflow=feature") for a in artifacts)
    assert _attributes(page, "action") == [
        f"/items/{ITEM}/decisions/transition-warning?workflow=feature"
    ]
    (pending,) = client.get(f"/api/items/{ITEM}?workflow=feature").json()["pendingDecisions"]
    expected = f"phasegate answer {ITEM} --workflow feature transition-warning proceed"
    assert pending["command"] == expected
    assert f"<code>{expected}</code>" in page


def test_the_event_stream_of_a_shared_name_follows_the_workflow_it_names(
    client: TestClient, repo: Path
) -> None:
    """/items/NAME/events?workflow=W streams that item (its decisions panel keeps W)."""
    assert client.get(f"/items/{ITEM}/events").status_code == 400
    _, offset = data.journal_events(repo, ITEM, workflow="feature")
    seen: dict[str, dict[str, str]] = {}
    params = {"workflow": "feature", "offset": str(offset)}
    with client.stream("GET", f"/items/{ITEM}/events", params=params) as stream:
        assert stream.status_code == 200
        event = ""
        for line in stream.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                seen[event] = json.loads(line[6:])
                if event == "decisions":
                    break
    assert "/decisions/transition-warning?workflow=feature" in seen["decisions"]["html"]


@pytest.mark.parametrize(
    "path",
    [
        f"/items/{ITEM}",
        f"/items/{ITEM}/artifacts/spec.md",
        f"/items/{ITEM}/events",
        f"/api/items/{ITEM}",
        f"/api/items/{ITEM}/events",
        f"/api/items/{ITEM}/artifacts",
        f"/api/items/{ITEM}/artifacts/spec.md",
        f"/api/items/{ITEM}/decisions",
    ],
)
def test_without_a_workflow_a_shared_name_gives_the_pick_one_error(
    client: TestClient, path: str
) -> None:
    """As on the command line: a 400 that names both workflows and says to pick one."""
    got = client.get(path)
    assert got.status_code == 400
    if path.startswith("/api/"):
        assert PICK_ONE in got.json()["error"] and got.json()["exit_code"] == 2
        assert "(feature, review-loop)" in got.json()["error"]
    else:
        assert PICK_ONE in got.text


def test_an_unknown_workflow_is_404_naming_the_known_ones(client: TestClient) -> None:
    """?workflow= naming no workflow: a 404 page, or JSON, that lists the workflows."""
    page = client.get(f"/items/{ITEM}?workflow=nope")
    assert page.status_code == 404
    assert "unknown workflow &#x27;nope&#x27; (available: " in page.text
    for path in (f"/api/items/{ITEM}", f"/api/items/{ITEM}/events"):
        api = client.get(path, params={"workflow": "nope"})
        assert api.status_code == 404, path
        assert "unknown workflow 'nope' (available: " in api.json()["error"]
        assert f"{OTHER}" in api.json()["error"]
    answer = client.post(
        f"/api/items/{ITEM}/decisions/transition-warning?workflow=nope", json={"choice": "stop"}
    )
    assert answer.status_code == 404 and "unknown workflow 'nope'" in answer.json()["error"]


def test_a_workflow_without_the_item_is_404_naming_the_workflow(client: TestClient) -> None:
    """A workflow that has no item of that name says so (not "create it")."""
    got = client.get(f"/api/items/{UNIQUE}", params={"workflow": "feature"})
    assert got.status_code == 404
    assert f"workflow 'feature' has no work item named '{UNIQUE}'" in got.json()["error"]
    assert client.get(f"/api/items/{UNIQUE}").status_code == 200  # its name is enough


def test_a_decision_of_a_shared_name_is_answered_with_the_workflow(tmp_path: Path) -> None:
    """The answer form and the API answer the item ?workflow= names; without it the answer
    is refused with the pick-one error and nothing is recorded."""
    root = new_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--example", OTHER).returncode == 0
    assert phasegate(root, "new", ITEM, "-w", OTHER, "-d", "the other one").returncode == 0
    waiting = phasegate(root, "run", ITEM, "-w", "feature", "--phase", "design")
    assert waiting.returncode == 3, waiting.stderr
    with TestClient(create_app(root), base_url=BASE) as client:
        bare = client.post(f"/api/items/{ITEM}/decisions/transition-warning", json={"choice": "x"})
        assert bare.status_code == 400 and PICK_ONE in bare.json()["error"]
        form = client.post(
            f"/items/{ITEM}/decisions/transition-warning",
            data={"choice": "proceed"},
            follow_redirects=False,
        )
        assert form.status_code == 400 and PICK_ONE in form.text
        assert data.decisions(root, ITEM, "feature")[0]["status"] == "pending"
        url = f"/items/{ITEM}/decisions/transition-warning?workflow=feature"
        done = client.post(url, data={"choice": "proceed"}, follow_redirects=False)
        assert done.status_code == 303
        assert done.headers["location"] == f"/items/{ITEM}?workflow=feature#decisions"
        assert data.decisions(root, ITEM, "feature")[0]["answer"]["choice"] == "proceed"
        scripted = client.post(url, data={"choice": "stop"}, headers={"accept": "application/json"})
        assert scripted.status_code == 409 and "already answered" in scripted.json()["error"]
        again = client.post(
            f"/api/items/{ITEM}/decisions/transition-warning?workflow=feature",
            json={"choice": "stop"},
        )
        assert again.status_code == 409 and "already answered" in again.json()["error"]
        shown = client.get(f"/api/items/{ITEM}?workflow=feature").json()["nextCommand"]
    # The command the dashboard shows next for the answered item works as pasted.
    assert shown == f"phasegate run {ITEM} --workflow feature --phase design"
    goes_on = phasegate(root, *shlex.split(shown)[1:])
    assert PICK_ONE_CLI not in goes_on.stderr
    assert goes_on.returncode == 0, goes_on.stderr
