"""The dashboard's endpoints, through Starlette's test client and through ``phasegate serve``."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_helpers import (
    GATED,
    ITEM,
    SECRET,
    new_repo,
    pending_decision,
    phasegate,
    served,
)
from starlette.testclient import TestClient

from phasegate.dashboard import data
from phasegate.dashboard.server import create_app
from phasegate.state.journal import Journal

BASE = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose item went through brainstorm and specify (specify rejected once)."""
    root = new_repo(tmp_path_factory.mktemp("api") / "repo")
    ran = phasegate(root, "run", ITEM, "--until", "specify")
    assert ran.returncode == 0, ran.stderr
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


def test_items_page_lists_every_item_with_its_spend(client: TestClient) -> None:
    """The list page: each item with workflow, phase, status, spend and next command."""
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert f'href="/items/{ITEM}"' in page.text
    for shown in ("feature", "specify", "active", f"phasegate run {ITEM}"):
        assert shown in page.text


def test_item_page_shows_calls_verdicts_with_issues_artifacts_and_phases(
    client: TestClient,
) -> None:
    """The timeline has each agent call (role, backend, duration, tokens) and each verdict."""
    page = client.get(f"/items/{ITEM}").text
    assert re.search(r"chain-reviewer · scripted</span><span class=\"what\">finished in", page)
    assert re.search(r'<span class="spend">\d+ tokens</span>', page)
    assert "iteration 1: not approved (1 blocker(s)): Criteria missing" in page
    assert "<b>blocker</b> No acceptance criteria <code>spec.md</code>" in page
    assert f'href="/items/{ITEM}/artifacts/spec.md"' in page
    assert '<ol id="timeline" data-events="/items/rate-limit/events" data-offset="' in page
    assert "<th>phase</th>" in page and ">create-plan<" in page


def test_item_page_offers_pending_decisions_as_forms(client: TestClient, gated: str) -> None:
    """A pending decision is a form with one button per canonical choice."""
    page = client.get(f"/items/{gated}").text
    assert f'action="/items/{gated}/decisions/go"' in page
    assert '<button type="submit" name="choice" value="yes">' in page
    assert f"Go on with {gated}?" in page and "Decisions (1 waiting)" in page


def test_a_check_shows_its_output_tail(client: TestClient, repo: Path) -> None:
    """A check in the timeline shows its outcome and the tail of its output, escaped."""
    Journal(repo / "docs/features" / ITEM / ".journal.jsonl").append(
        "check.finished",
        phase="implement",
        check="test",
        passed=False,
        exit_code=1,
        output="FAILED test_bucket.py::test_refill <boom>",
    )
    page = client.get(f"/items/{ITEM}").text
    assert "check test failed (exit 1)" in page
    assert "<pre>FAILED test_bucket.py::test_refill &lt;boom&gt;</pre>" in page


def test_an_artifact_is_rendered_as_markdown_with_raw_html_escaped(
    client: TestClient, repo: Path
) -> None:
    """Nothing an agent wrote runs in the page: raw HTML is text, no javascript: links."""
    (repo / "docs/features" / ITEM / "notes.md").write_text(
        "# Notes\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))\n\n| a |\n|---|\n| 1 |\n"
    )
    page = client.get(f"/items/{ITEM}/artifacts/notes.md").text
    assert "<h1>Notes</h1>" in page and "<table>" in page
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'href="javascript:' not in page
    api = client.get(f"/api/items/{ITEM}/artifacts/notes.md").json()
    assert api["markdown"].startswith("# Notes") and "<h1>Notes</h1>" in api["html"]


def test_the_review_history_is_an_artifact(client: TestClient) -> None:
    """The review history is rendered like any artifact."""
    page = client.get(f"/items/{ITEM}/artifacts/.review-history.md")
    assert page.status_code == 200 and "No acceptance criteria" in page.text


def test_only_listed_artifacts_are_served(client: TestClient) -> None:
    """Any other path, one escaping the folder included, is 404."""
    for name in ("missing.md", "../../../README.md", ".meta.json", "%2e%2e/%2e%2e/README.md"):
        page = client.get(f"/items/{ITEM}/artifacts/{name}")
        assert page.status_code == 404, name
    assert client.get(f"/api/items/{ITEM}/artifacts/missing.md").status_code == 404


def test_an_unknown_item_is_404_as_a_page_and_as_json(client: TestClient) -> None:
    """An unknown item: a 404 page, or JSON with the CLI's exit code under /api."""
    page = client.get("/items/ghost")
    assert page.status_code == 404 and "no work item named &#x27;ghost&#x27;" in page.text
    api = client.get("/api/items/ghost")
    assert api.status_code == 404
    assert api.json() == {"error": api.json()["error"], "exit_code": 2}
    assert "no work item named 'ghost'" in api.json()["error"]


def test_api_items_and_item(client: TestClient, repo: Path) -> None:
    """/api/items and /api/items/ITEM give what data.py reads."""
    assert client.get("/api/items").json() == data.list_items(repo)
    detail = client.get(f"/api/items/{ITEM}").json()
    assert detail["id"] == ITEM and detail["node"] == "specify" and detail["phases"]


def test_api_events_read_from_an_offset(client: TestClient, repo: Path) -> None:
    """/api/items/ITEM/events reads on from the offset it returned last."""
    first = client.get(f"/api/items/{ITEM}/events").json()
    assert first["events"][0]["event"] == "item.created"
    Journal(repo / "docs/features" / ITEM / ".journal.jsonl").append("api.probe")
    later = client.get(f"/api/items/{ITEM}/events", params={"offset": first["offset"]}).json()
    assert [e["event"] for e in later["events"]] == ["api.probe"]
    assert client.get(f"/api/items/{ITEM}/events?offset=x").status_code == 400
    inside = client.get(f"/api/items/{ITEM}/events?offset=5")
    assert inside.status_code == 400 and "not the start of a line" in inside.json()["error"]


def test_api_events_refuse_a_negative_offset_saying_so(client: TestClient) -> None:
    """A negative offset is a number, just not a byte offset: the message says what is wrong."""
    for raw in ("-1", "-5000"):
        refused = client.get(f"/api/items/{ITEM}/events", params={"offset": raw})
        assert refused.status_code == 400, raw
        assert refused.json() == {"error": refused.json()["error"], "exit_code": 2}
        assert "0 or more" in refused.json()["error"]
        assert "not a number" not in refused.json()["error"]
    for raw in ("x", "1.5", "\u00b2", " 7", "+7"):  # "²" passes str.isdigit but not int()
        refused = client.get(f"/api/items/{ITEM}/events", params={"offset": raw})
        assert refused.status_code == 400, raw
        assert "not a number" in refused.json()["error"], raw
    stream = client.get(f"/items/{ITEM}/events", params={"offset": "-1"})
    assert stream.status_code == 400 and "0 or more" in stream.text


def test_api_events_refuse_an_offset_past_the_end_instead_of_reading_from_0(
    client: TestClient, repo: Path, gated: str
) -> None:
    """An offset past the end is no offset of this journal: a client must not get the
    events it has again as if they were new. It is told to read the journal again from 0,
    which is also what a client whose journal was replaced by a shorter one needs."""
    end = client.get(f"/api/items/{ITEM}/events").json()["offset"]
    for offset in (end + 1, 99999999999):
        past = client.get(f"/api/items/{ITEM}/events", params={"offset": offset})
        assert past.status_code == 400, offset
        assert past.json() == {"error": past.json()["error"], "exit_code": 2}
        assert "past the end of the journal" in past.json()["error"]
        assert "read it again from offset 0" in past.json()["error"]
    at_end = client.get(f"/api/items/{ITEM}/events", params={"offset": end}).json()
    assert at_end == {"events": [], "offset": end}
    # A replaced (shorter) journal: the old offset is refused, offset 0 reads the new one.
    (path,) = repo.glob(f"**/{gated}/.journal.jsonl")
    old = client.get(f"/api/items/{gated}/events").json()["offset"]
    path.write_text(json.dumps({"ts": "t", "event": "fresh"}) + "\n")
    assert client.get(f"/api/items/{gated}/events", params={"offset": old}).status_code == 400
    again = client.get(f"/api/items/{gated}/events").json()
    assert [e["event"] for e in again["events"]] == ["fresh"]


def test_the_event_stream_tells_the_page_to_start_over_when_the_offset_is_past_the_end(
    client: TestClient, repo: Path
) -> None:
    """The journal was replaced (or the offset is wrong): the stream sends every event
    from the start, marked ``reset`` so that the page replaces its timeline."""
    events, _ = data.journal_events(repo, ITEM)
    with client.stream("GET", f"/items/{ITEM}/events", params={"offset": 99999999999}) as stream:
        assert stream.status_code == 200
        event = ""
        for line in stream.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "entries":
                entries = json.loads(line[6:])
                break
    assert entries["reset"] is True and entries["count"] == len(events)
    script = client.get("/static/dashboard.js").text
    assert "payload.reset" in script


def test_api_artifacts_list_names_and_addresses(client: TestClient) -> None:
    """/api/items/ITEM/artifacts lists each Markdown file with its page."""
    listed = client.get(f"/api/items/{ITEM}/artifacts").json()
    assert {"name": "spec.md", "url": f"/items/{ITEM}/artifacts/spec.md"} in listed


def test_api_decisions_and_answer(client: TestClient, repo: Path, gated: str) -> None:
    """Decisions through the API: choices checked exactly, answered once, then 409."""
    (pending,) = client.get(f"/api/items/{gated}/decisions").json()
    assert pending["id"] == "go" and pending["status"] == "pending"
    assert pending["choices"] == ["yes", "no"] and pending["files"] == ["draft.md"]
    url = f"/api/items/{gated}/decisions/go"
    bad = client.post(url, json={"choice": "Yes"})
    assert bad.status_code == 400 and "(choices: yes, no)" in bad.json()["error"]
    assert client.post(url, content=b"not json").status_code == 400
    assert data.decisions(repo, gated)[0]["status"] == "pending"  # nothing changed
    done = client.post(url, json={"choice": "yes", "note": "looks right"})
    assert done.status_code == 200
    assert done.json()["answer"]["choice"] == "yes"
    assert done.json()["answer"]["by"] == "dashboard"
    assert data.decisions(repo, gated)[0]["answer"]["note"] == "looks right"
    again = client.post(url, json={"choice": "no"})
    assert again.status_code == 409
    assert again.json()["exit_code"] == 2
    assert "already answered: 'yes' by dashboard" in again.json()["error"]
    unknown = client.post(f"/api/items/{gated}/decisions/nope", json={"choice": "no"})
    assert unknown.status_code == 400 and "no decision 'nope'" in unknown.json()["error"]
    # The next run takes the answer and finishes the item.
    finished = phasegate(repo, "run", gated)
    assert finished.returncode == 0, finished.stderr
    assert client.get(f"/api/items/{gated}").json()["status"] == "completed"


def test_the_answer_form_works_without_script_and_with_it(
    client: TestClient, repo: Path, gated: str
) -> None:
    """A plain form POST redirects back to the item; with script, JSON and the new panel."""
    url = f"/items/{gated}/decisions/go"
    plain = client.post(url, data={"choice": "no", "note": ""}, follow_redirects=False)
    assert plain.status_code == 303 and plain.headers["location"] == f"/items/{gated}#decisions"
    assert data.decisions(repo, gated)[0]["answer"]["choice"] == "no"
    scripted = client.post(url, data={"choice": "no"}, headers={"accept": "application/json"})
    assert scripted.status_code == 409 and "already answered" in scripted.json()["error"]
    page = client.post(url, data={"choice": "no"})
    assert page.status_code == 409 and "already answered" in page.text


def test_the_event_stream_sends_new_journal_events_and_decisions(
    client: TestClient, repo: Path
) -> None:
    """An open item page hears of events appended after it loaded, without a reload."""
    _, offset = data.journal_events(repo, ITEM)
    journal = Journal(repo / "docs/features" / ITEM / ".journal.jsonl")

    def append_later() -> None:
        time.sleep(0.5)
        journal.append(
            "review.verdict", phase="design", iteration=1, approved=True, summary="late", issues=[]
        )

    threading.Thread(target=append_later).start()
    seen: dict[str, dict[str, object]] = {}
    with client.stream("GET", f"/items/{ITEM}/events", params={"offset": offset}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        event = ""
        for line in stream.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("id: "):
                seen["id"] = {"value": int(line[4:])}
            elif line.startswith("data: "):
                seen[event] = json.loads(line[6:])
            if "entries" in seen and "summary" in seen:
                break
    assert "iteration 1: approved: late" in str(seen["entries"]["html"])
    assert seen["entries"]["count"] == 1
    assert seen["id"]["value"] == data.journal_events(repo, ITEM)[1]
    assert "decisions" in seen  # the panel is sent once when the stream opens


def test_the_event_stream_of_an_unknown_item_or_a_bad_offset_is_refused_at_once(
    client: TestClient,
) -> None:
    """Bad requests fail with a status, not inside a stream the browser would retry."""
    assert client.get("/items/ghost/events").status_code == 404
    assert client.get(f"/items/{ITEM}/events?offset=5").status_code == 400
    assert client.get(f"/items/{ITEM}/events?offset=x").status_code == 400


def test_everything_but_answers_is_read_only(client: TestClient) -> None:
    """No route but answering a decision accepts a write method."""
    for method, url in (
        ("POST", "/"),
        ("POST", f"/items/{ITEM}"),
        ("PUT", f"/api/items/{ITEM}"),
        ("DELETE", f"/api/items/{ITEM}"),
        ("POST", f"/api/items/{ITEM}/events"),
        ("POST", f"/items/{ITEM}/artifacts/spec.md"),
    ):
        assert client.request(method, url).status_code == 405, (method, url)


def test_a_post_from_another_site_is_refused(client: TestClient, repo: Path, gated: str) -> None:
    """A page elsewhere cannot answer a decision through the visitor's browser."""
    refused = client.post(
        f"/items/{gated}/decisions/go",
        data={"choice": "yes"},
        headers={"origin": "http://evil.example"},
    )
    assert refused.status_code == 403
    assert "another site" in refused.text
    assert data.decisions(repo, gated)[0]["status"] == "pending"


def test_a_post_from_another_site_to_the_api_is_refused_as_json(
    client: TestClient, repo: Path, gated: str
) -> None:
    """Under /api/ (and for the page's script, which asks for JSON) the refusal has the
    shape of every other API error; a plain form still gets text."""
    evil = {"origin": "http://evil.example"}
    refused = client.post(f"/api/items/{gated}/decisions/go", json={"choice": "yes"}, headers=evil)
    assert refused.status_code == 403
    assert refused.headers["content-type"].startswith("application/json")
    assert refused.json() == {"error": refused.json()["error"], "exit_code": 2}
    assert "another site" in refused.json()["error"]
    scripted = client.post(
        f"/items/{gated}/decisions/go",
        data={"choice": "yes"},
        headers={**evil, "accept": "application/json"},
    )
    assert scripted.status_code == 403 and "another site" in scripted.json()["error"]
    assert data.decisions(repo, gated)[0]["status"] == "pending"
    named = client.get("/api/items", headers={"host": "evil.example:8765"})
    assert named.status_code == 403 and "loopback" in named.json()["error"]
    assert client.get("/", headers={"host": "evil.example:8765"}).text.startswith("phasegate:")


def test_on_loopback_a_request_naming_another_host_is_refused(client: TestClient) -> None:
    """DNS rebinding: a name that resolves to 127.0.0.1 is still not this dashboard."""
    assert client.get("/", headers={"host": "evil.example:8765"}).status_code == 403
    for host in ("localhost:8765", "127.0.0.1", "[::1]:8765"):
        assert client.get("/api/items", headers={"host": host}).status_code == 200, host


def test_a_remote_dashboard_needs_its_token(repo: Path) -> None:
    """Without the token: 401. With it once in the address: a cookie carries it after that."""
    with TestClient(create_app(repo, token="t0ken-abc"), base_url=BASE) as remote:
        assert remote.get("/").status_code == 401
        assert remote.get("/?token=wrong").status_code == 401
        assert remote.get("/api/items", headers={"authorization": "Bearer t0ken-abc"}).is_success
        first = remote.get("/?token=t0ken-abc")
        assert first.status_code == 200
        assert "HttpOnly" in first.headers["set-cookie"]
        assert remote.get(f"/items/{ITEM}").status_code == 200  # the cookie, now
    with TestClient(create_app(repo, token="t0ken-abc"), base_url=BASE) as remote:
        untold = remote.get("/api/items")
        assert untold.status_code == 401 and "needs its token" in untold.json()["error"]
        assert untold.json()["exit_code"] == 2


def test_pages_load_nothing_from_other_sites(client: TestClient) -> None:
    """No CDN: every script, stylesheet and image comes from the dashboard itself."""
    for url in ("/", f"/items/{ITEM}", f"/items/{ITEM}/artifacts/spec.md"):
        page = client.get(url)
        assert "default-src 'self'" in page.headers["content-security-policy"]
        for ref in re.findall(r'(?:src|href)="([^"]+)"', page.text):
            assert ref.startswith("/") or ref.startswith("#"), (url, ref)
    for asset in ("/static/dashboard.css", "/static/dashboard.js"):
        assert client.get(asset).status_code == 200


def test_secrets_stay_redacted_in_pages(
    client: TestClient, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret in an artifact is masked on its page and in the API."""
    monkeypatch.setenv("DASHBOARD_API_TOKEN", SECRET)
    (repo / "docs/features" / ITEM / "leak.md").write_text(f"# Leak\nkey {SECRET}\n")
    for url in (f"/items/{ITEM}/artifacts/leak.md", f"/api/items/{ITEM}/artifacts/leak.md"):
        text = client.get(url).text
        assert SECRET not in text and "[REDACTED]" in text


def _post(url: str, choice: str) -> tuple[int, str]:
    request = urllib.request.Request(
        url,
        data=json.dumps({"choice": choice}).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


ANSWER_IN_ANOTHER_PROCESS = """
import sys, time
from pathlib import Path
from phasegate.dashboard import data
from phasegate.errors import AlreadyAnsweredError
root, item, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
while not go.exists():
    time.sleep(0.005)
try:
    data.answer(root, item, "go", "yes", None, "command")
    print("won")
except AlreadyAnsweredError as exc:
    print("lost:", exc)
"""


def test_a_decision_answered_at_once_from_the_page_and_a_command_is_recorded_once(
    tmp_path: Path,
) -> None:
    """Several answers racing (HTTP to a served dashboard, and other processes): one wins,
    each other one is told the decision was already answered, and one answer is journaled."""
    root = new_repo(tmp_path / "repo")
    pending_decision(root)
    go = tmp_path / "go"
    commands = [
        subprocess.Popen(
            [sys.executable, "-c", ANSWER_IN_ANOTHER_PROCESS, str(root), GATED, str(go)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    with served(root) as url:
        results: list[tuple[int, str]] = []

        def page_answer() -> None:
            while not go.exists():
                time.sleep(0.005)
            results.append(_post(f"{url}api/items/{GATED}/decisions/go", "no"))

        pages = [threading.Thread(target=page_answer) for _ in range(3)]
        for thread in pages:
            thread.start()
        time.sleep(0.5)
        go.touch()
        for thread in pages:
            thread.join(timeout=30)
        outputs = [p.communicate(timeout=30)[0].strip() for p in commands]
    won = [o for o in outputs if o == "won"] + [r for r in results if r[0] == 200]
    assert len(won) == 1, (outputs, results)
    lost = [o for o in outputs if o != "won"] + [r[1] for r in results if r[0] != 200]
    assert len(lost) == 5
    assert all("was already answered" in str(message) for message in lost), lost
    assert all(r[0] in (200, 409) for r in results), results
    (recorded,) = data.decisions(root, GATED)
    assert recorded["status"] == "answered"
    events, _ = data.journal_events(root, GATED)
    assert [e["choice"] for e in events if e["event"] == "decision.answered"] == [
        recorded["answer"]["choice"]
    ]


def test_serve_refuses_a_non_loopback_host_without_allow_remote(tmp_path: Path) -> None:
    """Listening beyond loopback needs an explicit --allow-remote (exit 2 otherwise)."""
    root = new_repo(tmp_path / "repo")
    result = phasegate(root, "serve", "--host", "0.0.0.0", "--port", "0")
    assert result.returncode == 2
    assert "not a loopback address" in result.stderr and "--allow-remote" in result.stderr


def test_serve_refuses_a_port_out_of_range(tmp_path: Path) -> None:
    """A port above 65535 (or below 0) is bad input naming --port, not an internal error."""
    root = new_repo(tmp_path / "repo")
    for port in ("99999", "-1"):
        result = phasegate(root, "serve", "--port", port)
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert "--port" in line and "internal error" not in line


def test_serve_with_allow_remote_prints_a_token_every_request_must_carry(tmp_path: Path) -> None:
    """A remote dashboard prints its token at start and refuses requests without it."""
    root = new_repo(tmp_path / "repo")
    with served(root, "--host", "0.0.0.0", "--allow-remote") as url:
        found = re.match(r"http://0\.0\.0\.0:(\d+)/\?token=([\w-]{20,})$", url)
        assert found is not None, url
        port, token = found.groups()
        bare = f"http://127.0.0.1:{port}/api/items"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(bare, timeout=10)
        assert refused.value.code == 401
        with urllib.request.urlopen(f"{bare}?token={token}", timeout=10) as response:
            assert json.loads(response.read())[0]["id"] == ITEM


def test_commands_other_than_serve_do_not_import_the_web_stack() -> None:
    """Starlette and uvicorn are imported by `phasegate serve` only."""
    probe = (
        "import sys, phasegate.cli; "
        "print(sorted(m for m in ('starlette', 'uvicorn') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_serve_stops_at_once_on_ctrl_c_even_with_a_page_open(tmp_path: Path) -> None:
    """An open live page (a never-ending event stream) does not keep the server running."""
    root = new_repo(tmp_path / "repo")
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "serve", "--port", "0"],
        cwd=root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        found = re.search(r"(http://\S+)", proc.stdout.readline())
        assert found is not None
        stream = urllib.request.urlopen(f"{found.group(1)}items/{ITEM}/events", timeout=10)
        assert stream.readline() == b"retry: 1000\n"
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=10) == 0
        assert time.monotonic() - started < 5
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
        stream.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_item_page_shows_spend_against_each_cap_and_the_budget_gate_raises_it(
    tmp_path: Path,
) -> None:
    """With ``budget:`` the item page lists each cap with its spend; a run stopped at the cap
    offers the ``budget`` decision, and raising it from the page lets the next run finish."""
    from dashboard_helpers import approving_script, write_script

    script = approving_script()
    for replies in script["executor"].values():
        replies[0]["cost_usd"] = 0.3
    script["*"]["*"][0]["cost_usd"] = 0.1
    root = new_repo(tmp_path / "repo", script)
    config = root / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "budget:\n  item: {usd: 1}\n")
    write_script(root, script)
    assert phasegate(root, "run", ITEM).returncode == 3
    with TestClient(create_app(root), base_url=BASE) as client:
        page = client.get(f"/items/{ITEM}").text
        assert "<dt>budget, item</dt><dd>$0.80 of $1.00 (80%)</dd>" in page
        assert '<button type="submit" name="choice" value="raise">' in page
        url = f"/api/items/{ITEM}/decisions/budget"
        bad = client.post(url, json={"choice": "raise", "note": "a lot"})
        assert bad.status_code == 400 and "must be a positive amount" in bad.json()["error"]
        assert client.post(url, json={"choice": "raise", "note": "2"}).status_code == 200
        assert "$0.80 of $3.00 (27%, raised by $2.00)" in client.get(f"/items/{ITEM}").text
    finished = phasegate(root, "run", ITEM)
    assert finished.returncode == 0, finished.stderr
