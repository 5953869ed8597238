"""`make demo` shows a human decision (a skipped phase waits for a person's answer, exit 3,
then `decisions` and `answer`) and ends with what to do next."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_demo_shows_a_decision_and_what_to_do_next(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "-m", "phasegate.demo", str(target)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "$ phasegate run rate-limit --phase design\n" in out, out
    assert "(exit code 3, as expected)" in out, out
    assert "$ phasegate decisions\n" in out, out
    assert "answer: phasegate answer rate-limit transition-warning proceed" in out, out
    assert "rate-limit: transition-warning answered stop." in out, out
    journal = target / "docs/features/rate-limit/.journal.jsonl"
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    answered = [e for e in events if e["event"] == "decision.answered"]
    assert [(e["id"], e["choice"], e["by"]) for e in answered] == [
        ("transition-warning", "stop", "command")
    ]
    assert "rate-limit complete" in out, out
    next_steps = out[out.index("== Next") :]
    assert f"cd {target}" in next_steps, next_steps
    assert "logs rate-limit" in next_steps, next_steps
    assert "phasegate init" in next_steps, next_steps
