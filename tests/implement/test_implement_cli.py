"""``phasegate implement SPEC-ID|PATH``, ``phasegate new --workflow implement --plan`` and
``phasegate status`` (the issue's "What a user does")."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from implement_helpers import PLAN, cli, key, make_repo

SCRIPTED = {
    "roles": {"default": {"backend": "scripted"}},
    "backends": {
        "scripted": {
            "script": ".phasegate/agents.yaml",
            "calls_log": ".phasegate/calls.jsonl",
            "structured_output": False,
        }
    },
}
ONE_TASK = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`] [`review_focus: security`]
  - HMAC over the raw body
"""
SIGN = key("Sign outgoing payloads")


def scripted_repo(
    tmp_path: Path, script: dict[str, Any], plan: str = ONE_TASK, **settings: Any
) -> Path:
    config: dict[str, Any] = {**SCRIPTED}
    if settings:
        config["workflows"] = {"implement": {"settings": settings}}
    root = make_repo(tmp_path / "repo", plan, config=config)
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    return root


APPROVING = {
    "the-developer": {"implement": [{"write": {"src/sign.py": "import hmac\n"}, "text": "done"}]},
    "*": {"*": [{"text": "APPROVED"}]},
}


def test_implement_creates_the_item_and_runs_the_plan(tmp_path: Path) -> None:
    """`phasegate implement 006` finds docs/specs/006*/PLAN.md, creates item 006, runs it."""
    root = scripted_repo(tmp_path, APPROVING)
    result = cli(root, "implement", "006")
    assert result.returncode == 0, result.stderr
    assert "Created 006 (implement) for docs/specs/006-webhooks/PLAN.md." in result.stdout
    assert (root / ".phasegate" / "implement" / "006" / ".engine.json").is_file()
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert status["status"] == "completed"
    assert [(t["title"], t["state"]) for t in status["tasks"]] == [
        ("Sign outgoing payloads", "done")
    ]


def test_implement_takes_the_path_of_a_plan_and_resumes_the_same_item(tmp_path: Path) -> None:
    """`phasegate implement path/to/PLAN.md` is the same item as its spec id."""
    root = scripted_repo(tmp_path, APPROVING)
    assert cli(root / "docs", "implement", "specs/006-webhooks/PLAN.md").returncode == 0
    again = cli(root, "implement", "006")
    assert again.returncode == 0 and again.stdout.strip() == "006 is already complete"


def test_a_spec_without_a_plan_is_an_error_naming_the_path(tmp_path: Path) -> None:
    """PLAN.md is required: a clear error naming the path (exit 2), nothing created."""
    root = scripted_repo(tmp_path, APPROVING)
    (root / PLAN).unlink()
    result = cli(root, "implement", "006")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "phasegate: error: docs/specs/006-webhooks/PLAN.md: no such file; "
        "the implement workflow needs a PLAN.md"
    )
    assert not (root / ".phasegate" / "implement").exists()


def test_an_unknown_spec_id_is_an_error(tmp_path: Path) -> None:
    """A spec id with no folder under docs/specs is bad input (exit 2)."""
    root = scripted_repo(tmp_path, APPROVING)
    result = cli(root, "implement", "042")
    assert result.returncode == 2 and "no spec folder docs/specs/042*/" in result.stderr
    assert result.stderr.rstrip().endswith("specs with a PLAN.md: 006-webhooks")
    assert len(result.stderr.strip().splitlines()) == 1


def test_implement_resumes_an_item_made_by_hand_by_its_name(tmp_path: Path) -> None:
    """An item made with `new NAME --workflow implement --plan PATH` is run by
    `phasegate implement NAME`, the command its pause messages give."""
    root = scripted_repo(tmp_path, APPROVING)
    made = cli(root, "new", "signing", "--workflow", "implement", "--plan", PLAN)
    assert made.returncode == 0, made.stderr
    result = cli(root, "implement", "signing")
    assert result.returncode == 0, result.stderr
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()
    assert not (root / ".phasegate" / "implement" / "006").exists()


def test_new_with_a_plan_creates_an_implement_item(tmp_path: Path) -> None:
    """`phasegate new ID --workflow implement --plan PATH`, then `phasegate run ID`."""
    root = scripted_repo(tmp_path, APPROVING)
    made = cli(root, "new", "signing", "--workflow", "implement", "--plan", PLAN)
    assert made.returncode == 0, made.stderr
    assert made.stdout.rstrip().endswith("Next: phasegate implement signing")
    status = json.loads(cli(root, "status", "signing", "--json").stdout)
    assert status["nextCommand"] == "phasegate implement signing"
    assert cli(root, "run", "signing").returncode == 0
    assert "- [x] **Sign outgoing payloads**" in (root / PLAN).read_text()


def test_a_plan_is_only_for_the_implement_workflow(tmp_path: Path) -> None:
    """--plan on another workflow is refused (exit 2)."""
    root = scripted_repo(tmp_path, APPROVING)
    result = cli(root, "new", "x", "--workflow", "feature", "--plan", PLAN)
    assert result.returncode == 2 and "--plan is for the implement workflow" in result.stderr


def test_a_task_naming_an_unknown_agent_stops_with_the_known_ones(tmp_path: Path) -> None:
    """An unknown agent stops the run before any work, naming the task's line and every
    agent that is known (exit 2)."""
    plan = ONE_TASK.replace("the-developer", "the-ml-wizard")
    root = scripted_repo(tmp_path, APPROVING, plan=plan)
    result = cli(root, "implement", "006")
    assert result.returncode == 2
    assert (
        "docs/specs/006-webhooks/PLAN.md:5:34: task 'Sign outgoing payloads' names agent "
        "'the-ml-wizard', which is not known here"
    ) in result.stderr
    assert "known agents: the-architect, the-data-engineer, the-developer" in result.stderr
    assert not (root / ".phasegate" / "calls.jsonl").exists()


def test_status_shows_an_escalated_task_and_how_to_answer(tmp_path: Path) -> None:
    """`phasegate status 006`: the escalated task and the decision that waits (exit 3 run)."""
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"text": "NEEDS_REVISION\nCompare the signature in constant time."}]},
    }
    root = scripted_repo(tmp_path, script, max_cycles=1)
    assert cli(root, "implement", "006").returncode == 3
    shown = cli(root, "status", "006", env={"COLUMNS": "200"}).stdout
    assert f"escalated (decision escalate-{SIGN})" in shown
    assert f"phasegate answer 006 escalate-{SIGN}" in shown
    rows = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert rows[0]["state"] == "escalated" and rows[0]["decision"] == f"escalate-{SIGN}"


def test_an_escalation_after_an_unclear_review_says_why_in_one_sentence(tmp_path: Path) -> None:
    """An unclear review escalated by a person asks the seed's options, saying which task
    (file:line) and why (seed 004: Review Cycle Limits, user options)."""
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"text": "Hmm. I wonder about this."}]},
    }
    root = scripted_repo(tmp_path, script)
    assert cli(root, "implement", "006").returncode == 3
    answered = cli(root, "answer", "006", f"unclear-{SIGN}", "escalate")
    assert answered.returncode == 0, answered.stderr
    again = cli(root, "implement", "006", "-q")
    assert again.returncode == 3
    assert again.stderr.startswith(
        "phasegate: waiting: Task 'Sign outgoing payloads' (docs/specs/006-webhooks/PLAN.md:5) "
        "is escalated: the review was unclear. Accept it as is, fix it by hand, skip it with "
        "a warning, or abort? Without an answer within 5 minutes: skip_with_warning."
    )


def test_status_shows_a_ticked_task_after_a_waiting_one_as_done(tmp_path: Path) -> None:
    """A task ticked in PLAN.md is done in `status` even while an earlier task of its
    phase waits for a decision (seed 004: completion status comes from the checkboxes)."""
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"text": "NEEDS_REVISION\nCompare the signature in constant time."}]},
    }
    plan = ONE_TASK + "- [x] **Rotate the secrets** [`agent: the-developer`]\n"
    root = scripted_repo(tmp_path, script, plan=plan, max_cycles=1)
    assert cli(root, "implement", "006").returncode == 3
    rows = json.loads(cli(root, "status", "006", "--json").stdout)["tasks"]
    assert [(r["title"], r["state"]) for r in rows] == [
        ("Sign outgoing payloads", "escalated"),
        ("Rotate the secrets", "done"),
    ]


def test_an_escalation_at_a_terminal_takes_the_default_when_unanswered(tmp_path: Path) -> None:
    """At a terminal the escalation waits escalation.timeout_minutes, then the default
    action applies (seed 004: apply default action if no response)."""
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"text": "NEEDS_REVISION\nCompare the signature in constant time."}]},
    }
    root = scripted_repo(tmp_path, script, max_cycles=1, escalation={"timeout_minutes": 0.05})
    leader, follower = pty.openpty()
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "implement", "006"],
        cwd=root,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "dumb", "COLUMNS": "200"},
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    assert proc.wait(timeout=60) == 0, shown.decode(errors="replace")
    os.close(leader)
    text = shown.decode(errors="replace")
    assert "within" in text and "default" in text
    assert time.monotonic() - started >= 2
    assert "  - ⚠️ Skipped with warning (phasegate)" in (root / PLAN).read_text()


def test_a_bad_setting_names_its_field(tmp_path: Path) -> None:
    """A wrong value in workflows.implement.settings stops with its field (exit 2)."""
    root = scripted_repo(tmp_path, APPROVING, escalation={"default_action": "explode"})
    result = cli(root, "implement", "006")
    assert result.returncode == 2
    assert "workflows.implement.settings.escalation.default_action: " in result.stderr


def test_a_check_naming_no_command_is_refused_before_any_agent(tmp_path: Path) -> None:
    """`checks: [tets]` with no `tets` in `commands:` is refused in one line naming the file
    and the field (exit 2): nothing is created, no agent runs, no checkpoint "passes"."""
    config = {
        **SCRIPTED,
        "commands": {"test": "true"},
        "workflows": {"implement": {"settings": {"checks": ["tets"]}}},
    }
    root = make_repo(tmp_path / "repo", ONE_TASK, config=config)
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(APPROVING))
    result = cli(root, "implement", "006")
    assert result.returncode == 2, result.stdout
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("phasegate: error: ") and line.endswith(
        ".phasegate/config.yaml: workflows.implement.settings.checks.0: no command 'tets' "
        "in commands (known: test)"
    )
    assert not (root / ".phasegate" / "calls.jsonl").exists()
    assert not (root / ".phasegate" / "implement").exists()


def dispatched_tasks(root: Path, role: str) -> list[str]:
    lines = (root / ".phasegate" / "calls.jsonl").read_text().splitlines()
    return [json.loads(x)["task"] for x in lines if json.loads(x)["role"] == role]


def test_a_task_added_after_completion_is_run_by_implementing_again(tmp_path: Path) -> None:
    """Seed 004's /s:implement works through the plan's open tasks: a completed item whose
    PLAN.md gained a task is reopened and runs that task alone (not "already complete")."""
    root = scripted_repo(tmp_path, APPROVING)
    assert cli(root, "implement", "006").returncode == 0
    plan = root / PLAN
    added = "Document the signature header"
    plan.write_text(
        plan.read_text() + f"\n## Phase 2: Docs\n\n- [ ] **{added}** [`agent: the-developer`]\n"
    )
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert status["status"] == "active"
    assert ("Document the signature header", "pending") in [
        (t["title"], t["state"]) for t in status["tasks"]
    ]
    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stderr
    assert "already complete" not in again.stdout
    assert f"has open tasks again after the item completed: {added}" in again.stderr
    assert f"- [x] **{added}**" in plan.read_text()
    assert dispatched_tasks(root, "the-developer") == [SIGN, key(added)]
    status = json.loads(cli(root, "status", "006", "--json").stdout)
    assert status["status"] == "completed"
    assert {t["state"] for t in status["tasks"]} == {"done"}
    third = cli(root, "implement", "006")
    assert third.returncode == 0 and third.stdout.strip() == "006 is already complete"


def test_a_task_unticked_after_completion_is_implemented_and_reviewed_afresh(
    tmp_path: Path,
) -> None:
    """A box unticked by hand reopens the item; the task's review sees only what the new
    run changed, not the first run's work again."""
    root = scripted_repo(tmp_path, APPROVING)
    assert cli(root, "implement", "006").returncode == 0
    script = {
        "the-developer": {"implement": [{"write": {"src/verify.py": "import hmac\n"}}]},
        "*": {"*": [{"text": "APPROVED"}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    plan = root / PLAN
    plan.write_text(plan.read_text().replace("- [x] **Sign", "- [ ] **Sign"))
    again = cli(root, "implement", "006")
    assert again.returncode == 0, again.stderr
    assert "- [x] **Sign outgoing payloads**" in plan.read_text()
    assert dispatched_tasks(root, "the-developer") == [SIGN, SIGN]
    selected = [e for e in implement_journal(root) if e["event"] == "reviewer.selected"]
    assert [e["files"] for e in selected] == [["src/sign.py"], ["src/verify.py"]]


def implement_journal(root: Path) -> list[dict[str, Any]]:
    path = root / ".phasegate" / "implement" / "006" / ".journal.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_a_notification_names_the_implement_command(tmp_path: Path) -> None:
    """config notify: the event of `phasegate implement` says `implement`, not `run`."""
    root = scripted_repo(tmp_path, APPROVING)
    heard = tmp_path / "heard.log"
    line = (
        f'echo "$PHASEGATE_EVENT|$PHASEGATE_ITEM|$PHASEGATE_COMMAND" >> {shlex.quote(str(heard))}'
    )
    config = root / ".phasegate" / "config.yaml"
    config.write_text(json.dumps({**json.loads(config.read_text()), "notify": {"command": line}}))
    assert cli(root, "implement", "006").returncode == 0
    assert heard.read_text().splitlines() == ["completed|006|implement"]
