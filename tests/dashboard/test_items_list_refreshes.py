"""The list of items, open in a real browser, follows the repository without a reload: an
item created meanwhile appears, and one whose gate waits says so, linking to its decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dashboard_helpers import GATED, new_repo, pending_decision, served
from test_dashboard_browser import browser  # noqa: F401  (the fixture)

pytestmark = pytest.mark.browser


def test_the_open_list_shows_new_items_and_waiting_decisions(
    browser: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    root = new_repo(tmp_path / "repo")
    with served(root) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url)
        page.locator("table.items").wait_for(timeout=15_000)
        page.evaluate("window.__sameDocument = true")
        assert GATED not in page.locator("#items").inner_text()

        pending_decision(root)  # a new item, run until its gate waits for a person

        row = page.locator("table.items tbody tr", has_text=GATED)
        row.wait_for(timeout=20_000)
        waiting = row.locator("a.badge.waiting")
        waiting.wait_for(timeout=20_000)
        assert waiting.inner_text() == "1 decision waiting"
        assert page.evaluate("window.__sameDocument") is True  # no reload happened
        waiting.click()
        page.locator("#decisions .decision.pending").wait_for(timeout=15_000)
        assert "ship it" in page.locator("#decisions").inner_text()
        page.close()
