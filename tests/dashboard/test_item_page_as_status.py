"""An item's page says what ``phasegate status ITEM`` says: why a block holds it, what a
gate was answered, which node of a phase is which, an implement item's tasks and a loop's
items (each escaped)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dashboard_helpers import init_repo, phasegate
from engine_helpers import git
from starlette.testclient import TestClient

from phasegate.dashboard.server import create_app

BASE = "http://127.0.0.1:8765"
PLAN = """\
# Plan

## Phase 1: Core
**Execution: Parallel**

- [ ] **Add the <script>alert(1)</script> queue** [`review: false`]
- [ ] **Add the dispatcher** [`review: false`]
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every role answered by ``auto``: a team item blocked at its design approval (its
    person answered cancel) and an implement item whose two parallel tasks are done."""
    root = init_repo(tmp_path_factory.mktemp("as-status") / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    config = root / ".phasegate" / "config.yaml"
    config.write_text(
        config.read_text().replace("default: {backend: scripted}", "default: {backend: auto}")
    )
    plan = root / "docs" / "specs" / "001-web" / "PLAN.md"
    plan.parent.mkdir(parents=True)
    plan.write_text(PLAN)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plan")
    assert phasegate(root, "new", "login", "--workflow", "team").returncode == 0
    waiting = phasegate(root, "run", "login", timeout=180)
    assert waiting.returncode == 3, waiting.stderr
    answered = phasegate(root, "answer", "login", "UD-APPROVE-DESIGN", "cancel")
    assert answered.returncode == 0, answered.stderr
    blocked = phasegate(root, "run", "login", timeout=180)
    assert "BLOCKED" in blocked.stderr, blocked.stderr
    done = phasegate(root, "implement", "001", timeout=180)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def client(repo: Path) -> Iterator[TestClient]:
    with TestClient(create_app(repo), base_url=BASE) as test_client:
        yield test_client


def test_a_blocked_item_says_what_blocks_it(client: TestClient) -> None:
    page = client.get("/items/login").text
    reason = client.get("/api/items/login").json()["blocked"]
    assert "mandatory_user_decision_missing" in reason
    assert "<dt>blocked</dt><dd>" in page
    assert "mandatory_user_decision_missing" in page


def test_a_gates_answer_and_its_node_are_in_the_phases(client: TestClient) -> None:
    page = client.get("/items/login").text
    assert (
        '<td data-label="phase">APPROVE_DESIGN <span class="node-id">approve-design</span></td>'
        in page
    )
    assert '<td data-label="review">cancel</td>' in page


def test_an_implement_item_lists_its_tasks_escaped(client: TestClient) -> None:
    page = client.get("/items/001").text
    assert "<h3>Tasks</h3>" in page
    assert "Add the &lt;script&gt;alert(1)&lt;/script&gt; queue" in page
    assert "<script>alert(1)" not in page
    assert '<td data-label="state">done</td>' in page
    assert "<b>implementing</b> items: 1 done" in page
