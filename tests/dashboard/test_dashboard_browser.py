"""The dashboard in a real browser: Debian's Chromium, headless, driven by Playwright.

A run goes on in another process while the page is open: its verdicts appear
without a reload, and a decision it waits on is answered from the page, after
which the run goes on. On failure, screenshots of the main pages are written
under the test's temporary folder. With ``PHASEGATE_UPDATE_SCREENSHOT=1`` the
item page at 1280 px is saved as docs/dashboard.png (the README's picture).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from dashboard_helpers import (
    GATED,
    ITEM,
    gated_run,
    journal_text,
    new_gated_item,
    new_repo,
    pending_decision,
    phasegate,
    served,
    wait_until,
)

from phasegate.dashboard import data

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "dashboard.png"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium from Debian's package (``make test`` installs it)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; "
            "`make test` does it) to run the dashboard's browser tests"
        )
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def screenshots_on_failure(browser: Any, urls: dict[str, str], folder: Path) -> Iterator[None]:
    """On failure, a screenshot of each main page at 1280 and 390 px, under ``folder``."""
    try:
        yield
    except BaseException:
        folder.mkdir(parents=True, exist_ok=True)
        for width in (1280, 390):
            page = browser.new_page(viewport={"width": width, "height": 900})
            for name, url in urls.items():
                try:
                    page.goto(url, wait_until="domcontentloaded", timeout=10_000)
                    page.screenshot(path=str(folder / f"{name}-{width}.png"), full_page=True)
                except Exception as exc:  # a screenshot must not hide the real failure
                    (folder / f"{name}-{width}.txt").write_text(repr(exc))
            page.close()
        print(f"screenshots of the dashboard: {folder}")
        raise


def test_a_running_item_is_watched_live_and_its_decision_answered_from_the_page(
    browser: Any, tmp_path: Path
) -> None:
    """Seen in the browser: the item list; the timeline of a run going on in another process,
    a new verdict appearing without a reload; the workflow's gate answered from the page,
    recorded once, and the run going on after it to its end."""
    root = new_repo(tmp_path / "repo")
    new_gated_item(root)
    control = tmp_path / "control"
    with gated_run(root, control) as run, served(root) as url:
        item_url = f"{url}items/{GATED}"
        urls = {"items": url, "item": item_url, "artifact": f"{item_url}/artifacts/draft.md"}
        with screenshots_on_failure(browser, urls, tmp_path / "screenshots"):
            wait_until(
                lambda: '"role": "reviewer"' in journal_text(root, GATED, "work/gated"),
                what="the run to reach its reviewer",
            )
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)
            row = page.locator("table.items tbody tr", has_text=GATED)
            assert "gated" in row.inner_text() and "draft" in row.inner_text()
            row.get_by_role("link", name=GATED).click()
            page.wait_for_url(item_url)
            page.locator("#live.on").wait_for(timeout=15_000)
            verdicts = page.locator('#timeline [data-event="review.verdict"]')
            assert verdicts.count() == 0
            page.evaluate("window.__sameDocument = true")

            (control / "release-verdict").touch()  # the reviewer answers now
            verdicts.first.wait_for(timeout=20_000)
            assert "not approved (1 blocker(s)): The problem is not stated" in (
                verdicts.first.inner_text()
            )
            assert "No problem statement" in verdicts.first.inner_text()
            assert page.evaluate("window.__sameDocument") is True  # no reload happened
            done = page.locator('#timeline [data-event="phase.completed"]')
            done.wait_for(timeout=20_000)
            assert "completed after 2 iterations" in done.inner_text()

            # The run stops at the gate; its question appears on the open page by itself.
            pending = page.locator("#decisions .decision.pending")
            pending.wait_for(timeout=20_000)
            assert f"Go on with {GATED}?" in pending.inner_text()
            if os.environ.get("PHASEGATE_UPDATE_SCREENSHOT") == "1":
                page.wait_for_timeout(2500)  # new entries' highlight fades first
                page.screenshot(path=str(DOCS_SCREENSHOT))
            pending.get_by_role("textbox").fill("clear enough")
            pending.get_by_role("button", name="yes").click()
            answered = page.locator("#decisions .decision.answered")
            answered.wait_for(timeout=10_000)
            assert "Answered yes by dashboard" in answered.inner_text()
            (recorded,) = data.decisions(root, GATED)
            assert recorded["answer"]["choice"] == "yes"
            assert recorded["answer"]["note"] == "clear enough"

            # The run (waiting with --wait) takes the answer and goes on to its end.
            assert run.wait(timeout=30) == 0, run.stderr.read() if run.stderr else ""
            finished = page.locator('#timeline [data-event="item.completed"]')
            finished.wait_for(timeout=20_000)
            timeline = page.locator("#timeline").inner_text()
            assert "decision go answered: yes (by dashboard): clear enough" in timeline
            # The summary and the phases followed the run without a reload.
            page.wait_for_function(
                "document.querySelector('#phases tr.phase-completed') !== null", timeout=10_000
            )
            assert "approved" in page.locator("#phases tr", has_text="draft").inner_text()
            assert "4" in page.locator("#summary dt:text('agent calls') + dd").inner_text()
            assert page.evaluate("window.__sameDocument") is True
            page.close()
        answers = [
            line
            for line in journal_text(root, GATED, "work/gated").splitlines()
            if '"decision.answered"' in line
        ]
        assert len(answers) == 1


def test_every_page_fits_a_phone_and_a_laptop_screen(browser: Any, tmp_path: Path) -> None:
    """At 390 and 1280 px wide nothing overflows sideways and the decision buttons show."""
    root = new_repo(tmp_path / "repo")
    assert phasegate(root, "run", ITEM, "--until", "specify").returncode == 0
    pending_decision(root)
    with served(root) as url:
        item_url = f"{url}items/{ITEM}"
        urls = {
            "items": url,
            "item": item_url,
            "artifact": f"{item_url}/artifacts/spec.md",
            "history": f"{item_url}/artifacts/.review-history.md",
            "gated": f"{url}items/{GATED}",
        }
        with screenshots_on_failure(browser, urls, tmp_path / "screenshots"):
            for width in (390, 1280):
                page = browser.new_page(viewport={"width": width, "height": 844})
                for name, address in urls.items():
                    page.goto(address)
                    overflow = page.evaluate(
                        "document.documentElement.scrollWidth - window.innerWidth"
                    )
                    assert overflow <= 0, f"{name} at {width}px overflows by {overflow}px"
                page.goto(f"{url}items/{GATED}")
                button = page.get_by_role("button", name="yes")
                assert button.is_visible()
                box = button.bounding_box()
                assert box is not None and box["x"] + box["width"] <= width
                page.close()


def test_chromium_is_the_debian_package() -> None:
    """The browser tests use the system Chromium, never a browser build Playwright downloads."""
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed here (`make test` installs it)")
    assert Path(shutil.which("chromium") or "").resolve() == Path(CHROMIUM).resolve()


def test_a_failure_leaves_screenshots_of_the_main_pages(browser: Any, tmp_path: Path) -> None:
    """When a browser test fails, each main page is saved as a PNG under its temp folder."""
    root = new_repo(tmp_path / "repo")
    with served(root) as url:
        urls = {"items": url, "item": f"{url}items/{ITEM}"}
        with (
            pytest.raises(AssertionError, match="a failing check"),
            screenshots_on_failure(browser, urls, tmp_path / "shots"),
        ):
            raise AssertionError("a failing check")
    saved = sorted(p.name for p in (tmp_path / "shots").iterdir())
    assert saved == ["item-1280.png", "item-390.png", "items-1280.png", "items-390.png"]
    for name in saved:
        assert (tmp_path / "shots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
