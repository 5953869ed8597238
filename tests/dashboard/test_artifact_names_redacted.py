"""The dashboard shows artifact file names with secrets masked, and its links still work."""

from __future__ import annotations

import re
import sys
from html import unescape
from pathlib import Path

import pytest
from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parent.parent))
from phasegate.dashboard.server import create_app
from review_loop_cli_helpers import ITEM, review_loop_repo

BASE = "http://127.0.0.1:8765"
# Built by concatenation so the test file itself holds no token-shaped literal.
TOKEN = "ghp" + "_" + "abcdefghijklmnopqrstuvwxyz0123456789"
SECRET = "MYSECRETVALUE123"


def test_artifact_names_holding_secrets_are_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = review_loop_repo(tmp_path / "repo")
    folder = repo / "work" / ITEM
    (folder / f"notes-{TOKEN}.md").write_text("# Token notes\n")
    (folder / "keys").mkdir()
    (folder / "keys" / f"{SECRET}.md").write_text(f"# Env notes {SECRET}\n")
    (folder / "plain.md").write_text("# Plain\n")
    monkeypatch.setenv("MY_API_KEY", SECRET)
    with TestClient(create_app(repo), base_url=BASE) as client:
        page = client.get(f"/items/{ITEM}").text
        assert TOKEN not in page and SECRET not in page
        assert "notes-[REDACTED].md" in unescape(page)
        assert "keys/[REDACTED].md" in unescape(page)
        # Every artifact link opens its file, and no secret is in its page or title.
        links = re.findall(r'href="(/items/[^"]*/artifacts/[^"]*)"', page)
        assert len(links) == 3
        opened = {}
        for link in links:
            shown = client.get(unescape(link))
            assert shown.status_code == 200, link
            assert TOKEN not in shown.text and SECRET not in shown.text
            title = re.search(r"<title>(.*?)</title>", shown.text, re.S)
            assert title is not None
            opened[unescape(title.group(1)).split(" · ")[0].strip()] = shown.text
        assert "Token notes" in opened["notes-[REDACTED].md"]
        assert "Env notes [REDACTED]" in opened["keys/[REDACTED].md"]
        assert "Plain" in opened["plain.md"]
        # The API lists the same names and addresses.
        listed = client.get(f"/api/items/{ITEM}/artifacts")
        assert TOKEN not in listed.text and SECRET not in listed.text
        names = {entry["name"]: entry["url"] for entry in listed.json()}
        assert names["plain.md"] == f"/items/{ITEM}/artifacts/plain.md"
        api = client.get("/api" + names["notes-[REDACTED].md"])
        assert api.status_code == 200
        assert api.json()["name"] == "notes-[REDACTED].md"
        assert api.json()["markdown"] == "# Token notes\n"
