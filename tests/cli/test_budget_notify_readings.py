"""How budget caps and notifications read to a user: ``notify.on`` naming one event, and
``phasegate logs`` saying a cap raised or a run stopped at a cap in words."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from test_budget_cli import priced_script
from test_cli import phasegate, write_script

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo


def new_repo(root: Path, extra_config: str) -> Path:
    init_repo(root)
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    config = root / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + extra_config)
    write_script(root, priced_script())
    assert phasegate(root, "new", "item", "-d", "Add rate limiting").returncode == 0
    return root


def test_notify_on_may_name_one_event_without_a_list(tmp_path: Path) -> None:
    """``on: waiting`` is the list ``[waiting]``, not a config error."""
    heard = tmp_path / "heard.jsonl"
    repo = new_repo(
        tmp_path / "repo",
        f"\nbudget:\n  item: {{usd: 1}}\nnotify:\n  command: 'cat >> {heard}'\n  on: waiting\n",
    )
    first = phasegate(repo, "run", "item")
    assert first.returncode == 3, first.stderr
    (event,) = [json.loads(line) for line in heard.read_text().splitlines()]
    assert event["event"] == "waiting"
    assert "phasegate answer item budget raise" in event["message"]
    assert phasegate(repo, "run", "item", "--answer", "budget=stop").returncode == 4
    assert len(heard.read_text().splitlines()) == 1  # `failed` is not listed


def test_logs_say_a_raise_and_a_stop_at_the_cap_in_words(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "repo", "\nbudget:\n  item: {usd: 1}\n")
    assert phasegate(repo, "run", "item").returncode == 3
    assert phasegate(repo, "run", "item", "--answer", "budget=stop").returncode == 4
    assert phasegate(repo, "run", "item", "--answer", "budget=raise: 0.5").returncode == 3
    logs = phasegate(repo, "logs", "item")
    assert logs.returncode == 0, logs.stderr
    assert "stopped by the budget cap item.usd before calling an agent" in logs.stdout
    assert "budget: item.usd raised by $0.50 for this item" in logs.stdout
    assert "budget.raised:" not in logs.stdout and "budget.stopped:" not in logs.stdout


def test_answering_a_budget_stop_a_run_acted_on_says_how_to_raise_it(tmp_path: Path) -> None:
    """After a run stopped at the cap as answered, ``answer ... raise`` is refused (the
    question is asked again by the next run), and the refusal says the command that raises
    it; a ``stop`` no run acted on yet is refused without it (the next run stops)."""
    repo = new_repo(tmp_path / "repo", "\nbudget:\n  item: {usd: 1}\n")
    assert phasegate(repo, "run", "item").returncode == 3
    assert phasegate(repo, "answer", "item", "budget", "stop").returncode == 0
    early = phasegate(repo, "answer", "item", "budget", "raise")
    assert early.returncode == 2
    assert early.stderr.strip().endswith("'stop' by command; nothing changed"), early.stderr
    assert phasegate(repo, "run", "item").returncode == 4
    late = phasegate(repo, "answer", "item", "budget", "raise")
    assert late.returncode == 2
    assert late.stderr.strip().endswith(
        "nothing changed; a run stopped on it, and the next one asks again: "
        "phasegate run item --answer budget=raise"
    ), late.stderr
    assert phasegate(repo, "run", "item", "--answer", "budget=raise").returncode == 3
    assert "raised by $1.00" in phasegate(repo, "logs", "item").stdout


def test_a_call_killed_at_its_timeout_counts_as_the_roles_mean_call(tmp_path: Path) -> None:
    """A call phasegate's timeout killed reported no spend, yet spent: the caps count it as
    the role's mean call (as one cut off by a killed run), so its retry is held at the cap
    rather than made for free."""
    repo = new_repo(tmp_path / "repo", "\nbudget:\n  item: {usd: 0.8}\n")
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(
        config.read_text()
        .replace("  agent: 900", "  agent: 1  #")
        .replace(
            "    script: .phasegate/agents.yaml\n",
            "    script: .phasegate/agents.yaml\n    calls_log: .phasegate/calls.jsonl\n",
        )
    )
    script = priced_script()
    script["executor"]["specify"][0]["sleep"] = 30
    write_script(repo, script)
    ran = phasegate(repo, "run", "item")
    assert ran.returncode == 3, ran.stderr
    assert "the budget cap of the item (item.usd) is $0.80 and $0.70 is spent" in ran.stderr
    calls = [
        json.loads(line) for line in (repo / ".phasegate" / "calls.jsonl").read_text().splitlines()
    ]
    assert [(c["role"], c["phase"]) for c in calls].count(("executor", "specify")) == 1
    status = json.loads(phasegate(repo, "status", "item", "--json").stdout)
    assert status["budget"]["spent"]["unreported"] == 1
    assert status["budget"]["spent"]["failed"] == 1


def test_doctor_warns_of_a_notify_command_whose_program_is_missing(tmp_path: Path) -> None:
    """A notify program that is not installed is said by ``doctor`` (a warning, exit 0),
    not first at the end of a run; a shell built-in or an installed program is not."""
    missing = 'no-such-notifier-x2 "$PHASEGATE_ITEM"'
    repo = new_repo(tmp_path / "repo", f"\nnotify:\n  command: '{missing}'\n")
    doctor = phasegate(repo, "doctor")
    assert doctor.returncode == 0, doctor.stderr
    assert (
        "warning: notify.command: 'no-such-notifier-x2' is not found here (not on PATH nor a "
        "shell command), so every notification would fail"
    ) in doctor.stderr
    config = repo / ".phasegate" / "config.yaml"
    for fine in ('echo "$PHASEGATE_EVENT" >> heard.txt', "FOO=1 cat > /dev/null"):
        config.write_text(config.read_text().replace(missing, fine))
        assert "notify" not in phasegate(repo, "doctor").stderr
        missing = fine


def test_a_raise_lifts_every_cap_that_holds_the_call(tmp_path: Path) -> None:
    """A call held by the USD and the tokens cap at once: the question names both, and one
    ``raise`` raises each by its own amount, so the next run makes the call instead of
    asking again about the second cap; ``raise: AMOUNT`` raises the named cap alone."""
    script = priced_script()
    for replies in script["executor"].values():
        replies[0]["usage"] = {"input_tokens": 900, "output_tokens": 100}
    script["*"]["*"][0]["usage"] = {"input_tokens": 150, "output_tokens": 50}
    repo = new_repo(tmp_path / "repo", "\nbudget:\n  item: {usd: 0.5, tokens: 1500}\n")
    write_script(repo, script)
    first = phasegate(repo, "run", "item")
    assert first.returncode == 3, first.stderr
    assert "$0.40 is spent; the next call is estimated at $0.30 (item.tokens holds it too)" in (
        first.stderr
    )
    assert phasegate(repo, "answer", "item", "budget", "raise").returncode == 0
    second = phasegate(repo, "run", "item")
    assert second.returncode == 3, second.stderr
    assert "The executor call of design was not started" in second.stderr  # specify ran
    status = json.loads(phasegate(repo, "status", "item", "--json").stdout)
    raised = {cap["cap"]: cap["raised"] for cap in status["budget"]["caps"]}
    assert raised == {"item.usd": 0.5, "item.tokens": 1500}
    logs = phasegate(repo, "logs", "item").stdout
    assert "item.tokens raised by 1,500 tokens" in logs

    assert phasegate(repo, "answer", "item", "budget", "raise: 0.25").returncode == 0
    assert phasegate(repo, "run", "item").returncode == 3
    status = json.loads(phasegate(repo, "status", "item", "--json").stdout)
    raised = {cap["cap"]: cap["raised"] for cap in status["budget"]["caps"]}
    assert raised == {"item.usd": 0.75, "item.tokens": 1500}
