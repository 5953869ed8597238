"""``phasegate status`` lists a plan's tasks in PLAN.md's current order: a person who
moves tasks around in PLAN.md while a task waits sees them as the plan now has them."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import PLAN, cli
from test_implement_cli import scripted_repo

TWO_TASKS = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`]
  - HMAC over the raw body
- [ ] **Document the signature header** [`agent: the-developer`]
  - the header's name and format
- [ ] **Rotate signing keys** [`agent: the-developer`]
"""


def test_status_lists_tasks_in_the_plans_current_order(tmp_path: Path) -> None:
    script = {
        "the-developer": {"implement": [{"text": "BLOCKED: no key format"}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    root = scripted_repo(tmp_path, script, plan=TWO_TASKS)
    first = cli(root, "implement", "006")
    assert first.returncode == 3, first.stdout + first.stderr
    plan = root / PLAN
    text = plan.read_text()
    rotate = "- [ ] **Rotate signing keys** [`agent: the-developer`]\n"
    document = (
        "- [ ] **Document the signature header** [`agent: the-developer`]\n"
        "  - the header's name and format\n"
    )
    sign = "- [ ] **Sign outgoing payloads** [`agent: the-developer`]\n  - HMAC over the raw body\n"
    text = text.replace(sign + document + rotate, rotate + document + sign)
    assert text.index("Rotate") < text.index("Sign outgoing"), text
    plan.write_text(text)

    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert [t["title"] for t in status["tasks"]] == [
        "Rotate signing keys",
        "Document the signature header",
        "Sign outgoing payloads",
    ], status["tasks"]
    shown = cli(root, "status", "006").stdout
    assert shown.index("Rotate signing keys") < shown.index("Sign outgoing payloads"), shown
