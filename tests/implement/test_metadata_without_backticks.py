"""Task metadata written without its backticks, `[agent: the-security-engineer]`, is read as
`[`agent: ...`]` is: the task's agent implements it and `[review: false]` skips its review,
rather than the default agent silently implementing a task whose title now holds the
brackets. Only the keys the plan format knows are read so; other brackets stay text."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli, key
from test_implement_cli import scripted_repo

from phasegate.implement.plan import parse_plan

BARE = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [agent: the-security-engineer] [review: false]
  - HMAC over the raw body
"""


def test_bare_metadata_names_the_agent_and_skips_the_review(tmp_path: Path) -> None:
    script = {"*": {"*": [{"text": "done"}]}}
    root = scripted_repo(tmp_path, script, plan=BARE)
    result = cli(root, "implement", "006", "-q")
    assert result.returncode == 0, result.stderr
    log = root / ".phasegate" / "calls.jsonl"
    made = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert [(c["role"], c["stage"]) for c in made] == [("the-security-engineer", "execute")]
    assert (
        "- [x] **Sign outgoing payloads** [agent: the-security-engineer]"
        in (root / PLAN).read_text()
    )
    rows = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert [(r["key"], r["title"]) for r in rows] == [
        (key("Sign outgoing payloads"), "Sign outgoing payloads")
    ]


def test_other_bracketed_text_stays_part_of_the_title() -> None:
    plan = parse_plan(
        "## Phase 1\n\n- [ ] Support [note: keep] and [see: RFC 2104] headers\n", Path("PLAN.md")
    )
    (task,) = plan.tasks()
    assert task.title == "Support [note: keep] and [see: RFC 2104] headers"
    assert task.agent is None
