"""The usage of a loop over tasks (a foreach, like the review-loop example's
``implementing``) counts the calls its items made: ``status --json`` phases sum to the
item's usage and the text table shows the loop's tokens, one task at a time or in
parallel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from review_loop_helpers import ITEM, make_repo, script, words

from cli_process import run_cli as _cli
from phasegate.workflow.example_files import copy_example


def _priced(agents: dict[str, Any]) -> dict[str, Any]:
    """Every reply costs $0.25 and 1000 + 100 tokens."""
    for by_node in agents.values():
        for replies in by_node.values():
            for reply in replies:
                reply["cost_usd"] = 0.25
                reply["usage"] = {"input_tokens": 1000, "output_tokens": 100}
    return agents


@pytest.mark.parametrize("parallel", [1, 2], ids=["one-at-a-time", "parallel"])
def test_a_loops_usage_counts_its_items_calls(tmp_path: Path, parallel: int) -> None:
    root = tmp_path / "repo"
    if parallel > 1:
        # The repository's own copy of the example, its loop running two tasks at once.
        root.mkdir()
        copy_example("review-loop", root)
        path = root / ".phasegate" / "workflows" / "review-loop.yaml"
        text = path.read_text()
        text = text.replace(
            "    kind: foreach\n", f"    kind: foreach\n    parallel: {parallel}\n", 1
        )
        path.write_text(text)
    make_repo(root, _priced(script([words("APPROVED")])))
    done = _cli(root, "run", ITEM)
    assert done.returncode == 0, done.stderr
    assert ("at once in git worktrees" in done.stderr) == (parallel > 1), done.stderr

    status = json.loads(_cli(root, "status", ITEM, "--json").stdout)
    phases = {p["name"]: p for p in status["phases"]}
    loop = phases["implementing"]["usage"]
    # Two tasks, each one developer call and one reviewer call.
    assert loop["calls"] == 4, phases["implementing"]
    assert loop["inputTokens"] == 4000 and loop["outputTokens"] == 400
    assert loop["costUsd"] == pytest.approx(1.0)
    total = status["usage"]
    assert total["calls"] == 6
    counted = [p["usage"] for p in status["phases"] if p["usage"] is not None]
    for key in ("calls", "inputTokens", "outputTokens"):
        assert sum(u[key] for u in counted) == total[key], key
    assert sum(u["costUsd"] for u in counted) == pytest.approx(total["costUsd"])

    table = _cli(root, "status", ITEM).stdout
    row = next(line for line in table.splitlines() if "implementing" in line and "tasks" in line)
    assert row.split()[-1] == "4400", table
