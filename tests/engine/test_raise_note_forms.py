"""A budget raise by an amount, in each form the advice gives it: ``raise: 2.5`` as the answer,
``2.5`` or ``raise: 2.5`` as the note (``--note``, the dashboard's note field)."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from engine_helpers import approving_script, init_repo
from ruamel.yaml import YAML
from starlette.testclient import TestClient

from cli_process import run_cli
from phasegate.dashboard.server import create_app

ITEM = "demo"


def _asked(tmp_path: Path) -> Path:
    """An item stopped at its budget question: every call costs $1, the item may spend $1."""
    root = init_repo(tmp_path / "repo")
    assert run_cli(root, "init", "--test-command", "true").returncode == 0
    script = approving_script()
    for replies in script["executor"].values():
        replies[0]["cost_usd"] = 1
    script["*"]["*"][0]["cost_usd"] = 1
    with open(root / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(script, handle)
    config = root / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "budget:\n  item: {usd: 1}\n")
    assert run_cli(root, "new", ITEM, "--description", "x").returncode == 0
    asked = run_cli(root, "run", ITEM)
    assert asked.returncode == 3, asked.stderr
    return root


def _raised(root: Path) -> str:
    """What status says of the item's cap once the next run took the answer."""
    ran = run_cli(root, "run", ITEM)
    assert ran.returncode == 3, ran.stderr
    status = json.loads(run_cli(root, "status", ITEM, "--json").stdout)
    cap = next(c for c in status["budget"]["caps"] if c["cap"] == "item.usd")
    return str(cap["raised"])


@pytest.mark.parametrize(
    "args",
    [
        ("raise: 2.5",),
        ("raise", "--note", "2.5"),
        ("raise", "--note", "raise: 2.5"),
        ("raise", "--note", "RAISE : 2.5"),
    ],
)
def test_every_form_of_a_raise_by_an_amount_is_taken(tmp_path: Path, args: tuple[str]) -> None:
    root = _asked(tmp_path)
    answered = run_cli(root, "answer", ITEM, "budget", *args)
    assert answered.returncode == 0, answered.stderr
    assert _raised(root) == "2.5"


def test_the_dashboard_note_field_takes_the_advice_it_shows(tmp_path: Path) -> None:
    root = _asked(tmp_path)
    with TestClient(create_app(root), base_url="http://127.0.0.1:8765") as client:
        listed = client.get(f"/api/items/{ITEM}/decisions").json()
        advice = next(d for d in listed if d["id"] == "budget")["descriptions"]["raise"]
        assert "'raise: AMOUNT'" in advice
        url = f"/items/{ITEM}/decisions/budget"
        bad = client.post(url, data={"choice": "raise", "note": "raise: lots"})
        assert bad.status_code == 400
        # The example the refusal gives is one the note field takes.
        shown = html.unescape(bad.text)
        assert "(e.g. '2.5' or 'raise: 2.5')" in shown and "not 'raise: lots'" in shown
        ok = client.post(
            url, data={"choice": "raise", "note": "raise: 2.5"}, follow_redirects=False
        )
        assert ok.status_code == 303, ok.text
    assert _raised(root) == "2.5"


def test_a_note_naming_another_choice_is_still_refused(tmp_path: Path) -> None:
    root = _asked(tmp_path)
    refused = run_cli(root, "answer", ITEM, "budget", "raise", "--note", "stop: 2.5")
    assert refused.returncode == 2
    assert "must be a positive amount" in refused.stderr and "'stop: 2.5'" in refused.stderr
