"""A ``raise`` without an amount lets the held call go on (README "Budget caps") even when
one step of the cap's amount would not: the cap lowered in the config below the spend, or a
call estimated at more than the cap's amount. It adds the amount as many times as needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from test_cli import phasegate, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo


def priced_repo(tmp_path: Path, executor_usd: float) -> Path:
    """Executor calls cost ``executor_usd``, reviews $0.10; calls are logged."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    script = approving_script()
    for replies in script["executor"].values():
        for reply in replies:
            reply["cost_usd"] = executor_usd
    script["*"]["*"][0]["cost_usd"] = 0.1
    write_script(root, script)
    config = root / ".phasegate" / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "    script: .phasegate/agents.yaml\n",
            "    script: .phasegate/agents.yaml\n    calls_log: .phasegate/calls.jsonl\n",
        )
    )
    assert phasegate(root, "new", "item", "-d", "Add rate limiting").returncode == 0
    return root


def set_cap(root: Path, usd: float) -> None:
    config = root / ".phasegate" / "config.yaml"
    text = config.read_text().split("\nbudget:")[0]
    config.write_text(text + f"\nbudget:\n  item: {{usd: {usd}}}\n")


def called(root: Path) -> list[tuple[str, str]]:
    lines = (root / ".phasegate" / "calls.jsonl").read_text().splitlines()
    return [(c["role"], c["phase"]) for c in map(json.loads, lines)]


def test_a_raise_after_the_cap_was_lowered_below_the_spend_lets_the_call_go(
    tmp_path: Path,
) -> None:
    """$0.80 spent under a $1 cap; the cap lowered to $0.20: ``raise`` adds $0.20 five
    times ($1.20: the design call's $0.30 fits), and the next run calls design."""
    root = priced_repo(tmp_path, 0.3)
    set_cap(root, 1)
    assert phasegate(root, "run", "item").returncode == 3
    set_cap(root, 0.2)
    held = phasegate(root, "run", "item")
    assert held.returncode == 3, held.stderr
    decisions = phasegate(root, "decisions", "item").stdout
    assert "raise it by $1.00 for this item" in decisions, decisions
    assert phasegate(root, "answer", "item", "budget", "raise").returncode == 0
    again = phasegate(root, "run", "item")
    assert ("executor", "design") in called(root), again.stderr


def test_a_raise_covers_a_call_estimated_above_the_caps_amount(tmp_path: Path) -> None:
    """Executor calls of $1.50 under a $1 cap: $1.60 spent of $2, the specify call
    estimated at $1.50 is held; ``raise`` adds $1 twice ($4), and the next run calls it."""
    root = priced_repo(tmp_path, 1.5)
    set_cap(root, 1)
    assert phasegate(root, "run", "item").returncode == 3
    assert phasegate(root, "answer", "item", "budget", "raise").returncode == 0
    held = phasegate(root, "run", "item")
    assert held.returncode == 3, held.stderr
    assert called(root)[-1] == ("chain-reviewer", "brainstorm")
    assert "raise it by $2.00 for this item" in phasegate(root, "decisions", "item").stdout
    assert phasegate(root, "answer", "item", "budget", "raise").returncode == 0
    phasegate(root, "run", "item")
    assert ("executor", "specify") in called(root)
