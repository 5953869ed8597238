"""Budget caps enforced before each dispatch (README "Budget caps"), run with scripted agents
that report what each call cost."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import approving_script, make_repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.budget import settings_for
from phasegate.engine.runner import RunOptions
from phasegate.errors import BadInputError, BlockedError, WaitingForHuman

EXECUTOR_USD = 0.3
REVIEWER_USD = 0.1


def priced_script(executor: float = EXECUTOR_USD, reviewer: float = REVIEWER_USD) -> Any:
    """The approving feature script, every executor call costing ``executor`` USD and every
    review ``reviewer`` USD."""
    script = approving_script()
    for replies in script["executor"].values():
        for reply in replies:
            reply["cost_usd"] = executor
    script["*"]["*"][0]["cost_usd"] = reviewer
    return script


def dispatched(item_dir: Path) -> list[tuple[str, str]]:
    """(role, phase) of every ``agent.dispatched`` event of the item's journal."""
    import json

    lines = (item_dir / ".journal.jsonl").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    return [(e["role"], e["phase"]) for e in events if e["event"] == "agent.dispatched"]


def new_item(root: Path, **budget: Any) -> Repo:
    repo = make_repo(root, budget=budget)
    repo.new("item", description="Add rate limiting")
    return repo


class Person:
    """Someone at a terminal answering the budget gate from a list."""

    interactive = True

    def __init__(self, answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    def choose(self, question: str, choices: Sequence[str], default: str | None) -> str:
        self.asked.append(question)
        return self.answers.pop(0)

    def confirm(self, question: str, default: bool) -> bool:
        raise AssertionError(f"not asked here: {question}")


def test_item_cap_stops_before_the_call_that_would_pass_it(git_repo: Path) -> None:
    """$0.80 spent, the next executor call estimated at $0.30 (its mean so far): with a $1 cap
    it is never dispatched; the run stops at the pending ``budget`` decision (exit 3)."""
    repo = new_item(git_repo, item={"usd": 1})
    agents = ScriptedBackend(script=priced_script())
    with pytest.raises(WaitingForHuman) as stopped:
        repo.run("item", backends={"default": agents})
    assert "phasegate answer item budget raise" in str(stopped.value)
    assert [(r.role, r.labels["phase"]) for r in agents.requests][-1] == (
        "chain-reviewer",
        "specify",
    )
    assert ("executor", "design") not in dispatched(repo.item("item").item_dir)
    (decision,) = repo.decisions("item")
    assert decision["id"] == "budget" and list(decision["choices"]) == ["raise", "stop"]
    assert "$0.80 is spent" in decision["question"]


def test_answered_raise_adds_the_configured_amount_once_and_the_run_continues(
    git_repo: Path,
) -> None:
    """``raise`` takes a $1 cap to $2 for this item (recorded in its engine state, not in
    config): the next run calls the executor it had refused, and is stopped again at $2."""
    repo = new_item(git_repo, item={"usd": 1})
    with pytest.raises(WaitingForHuman):
        repo.run("item", backends={"default": ScriptedBackend(script=priced_script())})
    repo.answer("item", "budget", "raise")
    agents = ScriptedBackend(script=priced_script())
    with pytest.raises(WaitingForHuman):
        repo.run("item", backends={"default": agents})
    assert (agents.requests[0].role, agents.requests[0].labels["phase"]) == ("executor", "design")
    state = repo.state("item")
    assert state["budget"]["raises"] == {"item.usd": 1.0}
    (cap,) = repo.status("item")["budget"]["caps"]
    assert (cap["limit"], cap["spent"], cap["reached"]) == (2.0, 2.0, True)
    assert "implement" not in {r.labels["phase"] for r in agents.requests}


def test_raise_with_an_amount_note_raises_by_that_amount(git_repo: Path) -> None:
    """``raise: 5`` adds $5 instead of the configured amount; the run then completes."""
    repo = new_item(git_repo, item={"usd": 1})
    with pytest.raises(WaitingForHuman):
        repo.run("item", backends={"default": ScriptedBackend(script=priced_script())})
    repo.answer("item", "budget", "raise: 5")
    outcome = repo.run("item", backends={"default": ScriptedBackend(script=priced_script())})
    assert outcome.status == "completed"
    (cap,) = repo.status("item")["budget"]["caps"]
    assert (cap["raised"], cap["limit"]) == (5.0, 6.0)


def test_stop_ends_the_run_without_dispatching_and_the_next_run_asks_again(
    git_repo: Path,
) -> None:
    """``stop``: exit 4 and no call; running again asks the gate again (a new visit)."""
    repo = new_item(git_repo, item={"usd": 1})
    with pytest.raises(WaitingForHuman):
        repo.run("item", backends={"default": ScriptedBackend(script=priced_script())})
    repo.answer("item", "budget", "stop")
    agents = ScriptedBackend(script=priced_script())
    with pytest.raises(BlockedError, match="Stopped at the budget cap"):
        repo.run("item", backends={"default": agents})
    assert agents.requests == []
    with pytest.raises(WaitingForHuman, match="phasegate answer item budget raise"):
        repo.run("item", backends={"default": agents})
    assert agents.requests == []
    assert repo.decisions("item")[0]["visit"] == 2


def test_a_person_at_a_terminal_raises_the_cap_and_the_same_run_goes_on(git_repo: Path) -> None:
    """At a terminal the gate is a prompt; ``raise: 3`` lets the run finish without exiting."""
    repo = new_item(git_repo, item={"usd": 1})
    person = Person(["raise: 3"])
    outcome = repo.run(
        "item", backends={"default": ScriptedBackend(script=priced_script())}, asker=person
    )
    assert outcome.status == "completed"
    assert len(person.asked) == 1 and "budget cap of the item" in person.asked[0]
    assert repo.state("item")["budget"]["raises"] == {"item.usd": 3.0}


def test_answer_flag_raises_the_cap_once(git_repo: Path) -> None:
    """``--answer budget=raise`` answers the first stop only: at the raised cap the run stops
    again (with $0.40 per pair of calls, $1 -> $2 is reached again before the end)."""
    repo = new_item(git_repo, item={"usd": 1})
    agents = ScriptedBackend(script=priced_script())
    with pytest.raises(WaitingForHuman):
        repo.run(
            "item",
            backends={"default": agents},
            options=RunOptions(answers={"budget": "raise"}),
        )
    assert repo.state("item")["budget"]["raises"] == {"item.usd": 1.0}
    assert {r.labels["phase"] for r in agents.requests} >= {"design", "create-tasks"}


def test_role_cap_stops_only_that_roles_calls(git_repo: Path) -> None:
    """A $0.25 cap on chain-reviewer: two reviews ($0.20) fit, the third would pass it; the
    executor's calls are not limited by it (the design executor still ran)."""
    repo = new_item(git_repo, roles={"chain-reviewer": {"usd": 0.25}})
    agents = ScriptedBackend(script=priced_script())
    with pytest.raises(WaitingForHuman, match="role chain-reviewer"):
        repo.run("item", backends={"default": agents})
    calls = [(r.role, r.labels["phase"]) for r in agents.requests]
    assert calls[-1] == ("executor", "design")
    assert ("chain-reviewer", "design") not in dispatched(repo.item("item").item_dir)
    (cap,) = repo.status("item")["budget"]["caps"]
    assert (cap["cap"], cap["spent"]) == ("roles.chain-reviewer.usd", 0.2)


def test_tokens_cap_counts_input_and_output_tokens(git_repo: Path) -> None:
    """1,000 tokens a call (800 in, 200 out; cache reads not counted) against 3,000: three
    calls fit exactly, the fourth is not dispatched."""
    script = approving_script()
    usage = {"input_tokens": 800, "output_tokens": 200, "cache_read_tokens": 50_000}
    for replies in script["executor"].values():
        replies[0]["usage"] = usage
    script["*"]["*"][0]["usage"] = usage
    repo = new_item(git_repo, item={"tokens": 3000})
    agents = ScriptedBackend(script=script)
    with pytest.raises(WaitingForHuman, match="3,000 tokens"):
        repo.run("item", backends={"default": agents})
    assert len(agents.requests) == 3
    (cap,) = repo.status("item")["budget"]["caps"]
    assert (cap["unit"], cap["spent"], cap["reached"]) == ("tokens", 3000, True)


def test_failed_attempts_count_and_the_retry_is_checked_too(git_repo: Path) -> None:
    """A failed attempt that cost $0.60 counts: its retry (a dispatch like any other,
    estimated at $0.60) would pass the $1 cap, so it is not made."""

    def fail_expensively(request: AgentRequest) -> ScriptedReply:
        return ScriptedReply(exit_status=1, error="provider overloaded", cost_usd=0.6)

    repo = new_item(git_repo, item={"usd": 1})
    agents = ScriptedBackend(handler=fail_expensively)
    with pytest.raises(WaitingForHuman):
        repo.run("item", backends={"default": agents})
    assert len(agents.requests) == 1
    spent = repo.status("item")["budget"]["spent"]
    assert (spent["usd"], spent["attempts"], spent["failed"]) == (0.6, 1, 1)


def test_an_attempt_cut_off_counts_as_the_roles_mean_call(git_repo: Path) -> None:
    """A call interrupted before it reported spent an unknown amount: it counts as the
    role's mean reported call: the executor's third call, cut off, adds its $0.30 mean to
    the $0.40 reported."""
    calls: list[str] = []

    def interrupted_third_call(request: AgentRequest) -> ScriptedReply:
        calls.append(request.role)
        if len(calls) == 3:
            raise KeyboardInterrupt
        if request.role == "executor":
            return ScriptedReply(write={"{item_dir}/brainstorm.md": "# B\n"}, cost_usd=0.3)
        return ScriptedReply(structured={"approved": True, "issues": []}, cost_usd=0.1)

    repo = new_item(git_repo, item={"usd": 10})
    with pytest.raises(KeyboardInterrupt):
        repo.run("item", backends={"default": ScriptedBackend(handler=interrupted_third_call)})
    spent = repo.status("item")["budget"]["spent"]
    assert (spent["usd"], spent["unreported"]) == (0.7, 1)


def test_calls_get_the_least_usd_their_caps_leave(git_repo: Path) -> None:
    """``max_budget_usd`` of each request is what the item's and the role's USD caps leave
    (Claude Code gets it as --max-budget-usd); a tokens-only budget sets none."""
    repo = new_item(git_repo, item={"usd": 5}, roles={"chain-reviewer": {"usd": 0.5}})
    agents = ScriptedBackend(script=priced_script())
    repo.run("item", backends={"default": agents}, options=RunOptions(until="specify"))
    limits = [(r.role, r.max_budget_usd) for r in agents.requests]
    assert limits == [
        ("executor", 5.0),
        ("chain-reviewer", 0.5),
        ("executor", 4.6),
        ("chain-reviewer", 0.4),
    ]
    other = new_item(git_repo / "tokens-only", item={"tokens": 10**6})
    agents = ScriptedBackend(script=priced_script())
    other.run("item", backends={"default": agents}, options=RunOptions(until="brainstorm"))
    assert {r.max_budget_usd for r in agents.requests} == {None}


def test_no_budget_means_no_caps_and_no_limit_on_calls(git_repo: Path) -> None:
    """Without ``budget:`` nothing is checked: status has ``budget: null``."""
    repo = make_repo(git_repo)
    repo.new("item", description="x")
    agents = ScriptedBackend(script=priced_script(executor=50.0))
    assert repo.run("item", backends={"default": agents}).status == "completed"
    assert repo.status("item")["budget"] is None
    assert {r.max_budget_usd for r in agents.requests} == {None}


def test_workflow_budget_overrides_the_top_level_one_cap_by_cap() -> None:
    """``workflows.NAME.budget`` replaces the caps it names (``null`` removes one) and keeps
    the others; roles merge the same way."""
    config = Config.model_validate(
        {
            "budget": {
                "item": {"usd": 5, "tokens": 1000},
                "roles": {"reviewer": {"usd": 1}, "executor": {"tokens": 500}},
            },
            "workflows": {
                "change": {
                    "budget": {
                        "item": {"usd": 10, "tokens": None},
                        "roles": {"reviewer": {"tokens": 50}},
                    }
                }
            },
        }
    )
    change = settings_for(config, "change")
    assert (change.item.usd, change.item.tokens) == (10, None)
    assert (change.roles["reviewer"].usd, change.roles["reviewer"].tokens) == (1, 50)
    assert change.roles["executor"].tokens == 500
    feature = settings_for(config, "feature")
    assert (feature.item.usd, feature.item.tokens) == (5, 1000)


def test_a_cap_raised_in_config_instead_withdraws_the_pending_decision(git_repo: Path) -> None:
    """Stopped at $1, the person raises the cap in config rather than answering: the next run
    goes on, and the budget decision no longer waits (status, ``phasegate answer``)."""
    repo = new_item(git_repo, item={"usd": 1})
    with pytest.raises(WaitingForHuman):
        repo.run("item", backends={"default": ScriptedBackend(script=priced_script())})
    raised = make_repo(git_repo, budget={"item": {"usd": 10}})
    outcome = raised.run("item", backends={"default": ScriptedBackend(script=priced_script())})
    assert outcome.status == "completed"
    assert raised.decisions("item") == []
    assert raised.status("item")["pendingDecisions"] == []
    with pytest.raises(BadInputError, match="came too late: the decision no longer waits"):
        raised.answer("item", "budget", "raise")


def test_spend_is_read_from_complete_journal_lines_as_they_are_added(tmp_path: Path) -> None:
    """The ledger reads a journal once and then only what was added; a line still being
    written counts when it is complete; a replaced journal is read again from its start."""
    from phasegate.engine.spend import read_spend
    from phasegate.state.journal import Journal

    path = tmp_path / ".journal.jsonl"
    journal = Journal(path)
    journal.append("agent.dispatched", key="k", attempt="a1", role="executor")
    assert read_spend(path).spent(None, "usd") == 0.0
    journal.append(
        "agent.finished",
        key="k",
        attempt="a1",
        role="executor",
        ok=True,
        usage={"input_tokens": 10, "output_tokens": 5},
        cost_usd=0.5,
    )
    assert (read_spend(path).spent(None, "usd"), read_spend(path).spent(None, "tokens")) == (
        0.5,
        15.0,
    )
    line = b'{"event": "agent.finished", "attempt": "a2", "role": "executor", "ok": false, '
    with open(path, "ab") as handle:
        handle.write(b'{"event": "agent.dispatched", "attempt": "a2", "role": "executor"}\n')
        handle.write(line)
    assert read_spend(path).summary()["unreported"] == 1
    with open(path, "ab") as handle:
        handle.write(b'"cost_usd": 0.25}\n')
    assert read_spend(path).summary() == {
        "usd": 0.75,
        "tokens": 15,
        "attempts": 2,
        "failed": 1,
        "unreported": 0,
    }
    path.unlink()
    Journal(path).append("agent.dispatched", key="k", attempt="b1", role="reviewer")
    assert read_spend(path).summary()["attempts"] == 1
