"""The ``agent`` node: executor, postconditions, checks, reviewers, a budgeted revise loop.

The node advances one stage per state commit, so a resumed run picks it up
exactly where it stopped (seed 000 section 5, seed 001)::

    execute -> checks -> review:0 -> review:1 ... -> pass
                      \\-> (failing) revise: execute (i + 1) with the failures
               review:k -> pass: next reviewer | revise: execute (i + 1) with the issues,
                           then back to reviewer k | another word: the node ends with it
    budget spent -> complete with the open issues as notes, or the ``on_exhausted`` outcome

A failing check counts as a revision whose blockers go back to the executor;
no reviewer is asked until the checks pass. When the budget is spent while
checks still fail, the node ends ``checks-failed`` (by default: the run stops).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate.agents.base import Access, AgentResult
from phasegate.engine.call_results import usage_of
from phasegate.engine.calls import CallSpec
from phasegate.engine.checks import CheckRound, resolve
from phasegate.engine.nodes.agent_context import mcp_servers, run_hooks, summary_of
from phasegate.engine.nodes.agent_outcome import complete, conclude
from phasegate.engine.nodes.agent_outputs import missing_outputs, output_examples
from phasegate.engine.nodes.agent_review import no_more_reviewers, review
from phasegate.engine.nodes.roles import executor_role, plays
from phasegate.engine.plugin_api import Task
from phasegate.engine.prompting import PromptFor
from phasegate.errors import AgentError
from phasegate.verdicts.model import Issue, Verdict
from phasegate.workflow.model import AgentNode
from phasegate.workflow.parts import REVISE
from phasegate.workflow.routing import BLOCKED, FAILED, REVIEW_FAILED

if TYPE_CHECKING:
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Outcome, Steps


def run_agent(run: Run, path: str, node: AgentNode, task: Task | None) -> Steps:
    from phasegate.engine.walk import Outcome

    ns = run.state.node(path)
    if run.over_visit_limit(path):
        return Outcome("exhausted")
    ctx = run.context(path, node, task, {})
    prompts = PromptFor(run, path, node, ctx)
    reviewers = node.all_reviewers()
    if node.on_enter and not ns.get("entered_hooks"):
        run_hooks(run, node.on_enter, path, node, task)
        run.state.node(path)["entered_hooks"] = True
        # Committed now, before the executor's call: a run resumed after a crash must not
        # run them again once the call changed the work tree (an implementation baseline
        # taken then would count the agent's own files as already there).
        run.save()
    while True:
        ns = run.state.node(path)
        stage = ns.stage
        if stage == "execute":
            executed: Outcome = yield from _execute(run, path, node, task, prompts)
            if executed.name in ("interrupted", FAILED, BLOCKED):
                return executed
            continue
        if stage == "checks":
            verdict = yield from _checks(run, path, node, task)
            if verdict is not None:
                outcome = conclude(run, path, node, verdict, REVISE, "checks", -1)
                if outcome is not None:
                    return outcome
            else:
                ns.stage = f"review:{int(ns.get('resume_review', 0))}"
                run.save(lazy=True)
            continue
        if stage.startswith("review:"):
            index = int(stage.removeprefix("review:"))
            if index >= len(reviewers) or run.options.no_review or ns.get("no_review"):
                outcome = no_more_reviewers(run, path, node, task, reviewers, index)
                if outcome is not None:
                    return outcome
                continue
            reviewed: Outcome | None = yield from review(
                run, path, node, task, prompts, reviewers, index
            )
            if reviewed is not None:
                return reviewed
            continue
        done: Outcome = Outcome(str(ns.get("outcome") or "pass"))
        return done


# -- execute -------------------------------------------------------------------------------


def _execute(run: Run, path: str, node: AgentNode, task: Task | None, prompts: PromptFor) -> Steps:
    from phasegate.engine.walk import Call, Outcome

    role = executor_role(run, path, node, task)
    workflow_role = str(node.executor)
    ns = run.state.node(path)
    iteration, tries = ns.iteration, int(ns.get("tries", 0))
    feedback = list(ns.get("feedback") or [])
    access = Access(run.workflow.roles[workflow_role].access)
    outputs = prompts.outputs()
    spec = CallSpec(
        key=f"{path}#{ns.visit}/{iteration}/execute/{tries}",
        role=role,
        path=path,
        label=run.label(path),
        iteration=iteration,
        stage="execute",
        access=access,
        output_schema=None,
        build_prompt=lambda: prompts.executor(iteration, feedback, role),
        mcp_servers=mcp_servers(run, workflow_role),
        task=task.key if task else None,
        hints={
            # A folder output keeps its trailing "/" (the auto backend writes a file in it).
            "outputs": [
                run.rel(path, prompts.item_path(o)) + ("/" if o.endswith("/") else "")
                for o in outputs
            ],
            "examples": output_examples(run, node, prompts),
        },
        workdir=run.workspace_dir(path),
        plays=plays(role, workflow_role),
        writes=_writes(run, path, node, outputs),
        failure_ends=FAILED in node.on,
    )
    if node.at_most_once:
        if (
            ns.get("dispatching") == spec.key
            and run.item.recorded().result(spec.key) is None
            and not _returned(run, spec.key)
        ):
            # The run stopped after this call was dispatched and before its result was
            # journaled: the work may be half done, so it is never dispatched again.
            run.item.record(
                "agent.not_redispatched", node=path, key=spec.key, role=role, sync_now=True
            )
            complete(run, path, "none", [], "the call was interrupted before it returned")
            run.save(lazy=True)
            return Outcome("interrupted")
        if ns.get("dispatching") != spec.key:
            ns["dispatching"] = spec.key
            run.save(durable=True)  # the intent is on disk before the call is made
    result: AgentResult = yield Call(spec)
    ns = run.state.node(path)
    run.state.add_usage(path, role, usage_of(result))
    if not result.ok:
        # Every attempt failed and ``on`` maps ``failed`` (else the call raised): the node
        # ends with it, the failure kept for the question that follows.
        return _failed(run, path, node, role, workflow_role, result)
    ns["changes"] = summary_of(result, run)
    reason = blocked_reason(result.text) if BLOCKED in node.on else None
    if reason is not None:
        reason = run.item.redactor.text(reason)
        # Seed 004: an agent reporting BLOCKED is not reviewed; a person is given the choice.
        run.item.record("agent.blocked", node=path, role=role, reason=reason, sync_now=True)
        return _ended(run, path, node, role, BLOCKED, f"{role} answered BLOCKED: {reason}", {})
    run_hooks(run, node.after_execute, path, node, task)
    missing = missing_outputs(run, node, prompts, "retry")
    if missing:
        tries += 1
        # Counted from the last run that gave up: a run after it makes new calls (those
        # given up on are recorded, and reusing them would only fail the same way).
        base = int(ns.get("tries_given_up", 0))
        limit = run.backends.config.retries.agent + 1
        run.item.record(
            "step.output_missing",
            node=path,
            role=role,
            missing=missing,
            attempt=tries - base,
            of=limit,
            sync_now=True,
        )
        if tries - base >= limit:
            ns["tries"] = ns["tries_given_up"] = tries
            run.save(durable=True)
            raise AgentError(
                f"{role} ({run.backends.describe(role, plays(role, workflow_role))}) finished "
                f"{run.label(path)} "
                f"({node.id}) of {run.item.name!r} {limit} time{'s' if limit > 1 else ''} "
                f"without writing {', '.join(missing)}; run the same command again to retry"
            )
        ns["tries"] = tries
        run.save()
        return Outcome("again")
    ns["tries"] = 0
    ns.d.pop("tries_given_up", None)
    has_checks = bool(node.checks) or node.checks_from is not None
    ns.stage = "checks" if has_checks else f"review:{int(ns.get('resume_review', 0))}"
    run.save(lazy=True)
    return Outcome("executed")


def _failed(
    run: Run,
    path: str,
    node: AgentNode,
    role: str,
    workflow_role: str | None,
    result: AgentResult,
    outcome: str = FAILED,
) -> Outcome:
    """The executor's call (or, ending ``review-failed``, a reviewer's) failed every
    attempt: the node ends ``outcome``, journaled with the error (``agent.gave_up``),
    which ``ns["failure"]`` keeps for a gate to show."""
    attempts = run.backends.config.retries.agent + 1
    # Redacted: it is shown in a question, kept in the state and may go into PLAN.md.
    error = run.item.redactor.text(
        " | ".join(line.strip() for line in (result.error or "").splitlines() if line.strip())
        or f"exit status {result.exit_status}"
    )
    who = f"{role} ({run.backends.describe(role, plays(role, workflow_role))})"
    said = f"{who} failed after {attempts} attempt{'s' if attempts > 1 else ''}: {error}"
    run.item.record(
        "agent.gave_up", node=path, role=role, attempts=attempts, error=error, sync_now=True
    )
    return _ended(run, path, node, role, outcome, said, {"error": error, "attempts": attempts})


def review_failed(
    run: Run, path: str, node: AgentNode, role: str, workflow_role: str | None, result: AgentResult
) -> Outcome:
    """A reviewer's call failed every attempt and ``on`` maps ``review-failed``."""
    return _failed(run, path, node, role, workflow_role, result, REVIEW_FAILED)


def _ended(
    run: Run, path: str, node: AgentNode, role: str, outcome: str, said: str, more: dict[str, Any]
) -> Outcome:
    """The node ends ``outcome`` (``failed``, ``blocked``) without a review; ``said`` is kept
    in ``ns["failure"]`` for the gate that follows to show."""
    from phasegate.engine.walk import Outcome

    run.state.node(path)["failure"] = {"role": role, "summary": said, **more}
    # Not saved here: the walk records the outcome with it (a crash before that reuses the
    # journaled result and ends here again).
    complete(run, path, outcome, [said], said, announce=False)
    issues = [{"severity": "blocker", "description": said, "location": None}]
    return Outcome(outcome, issues=issues, cause=f"{node.id} {outcome}")


def blocked_reason(text: str) -> str | None:
    """The reason of an answer whose first line starts ``BLOCKED:``, or is the word
    ``BLOCKED`` alone (any case, a full stop after it; markdown emphasis around the word
    allowed), on one line; ``None`` for any other answer."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    first = lines[0].lstrip("#*_> ").replace("**", "").replace("__", "")
    if first.startswith("BLOCKED:"):
        rest = first.removeprefix("BLOCKED:").strip()
    elif first.rstrip("*_. ").upper() == "BLOCKED":
        rest = ""
    else:
        return None
    reason = " ".join([rest, *lines[1:]]).strip()
    return " ".join(reason.split())[:500] or "no reason given"


def _writes(run: Run, path: str, node: AgentNode, outputs: list[str]) -> tuple[Path, ...] | None:
    """The only files the executor may change (``None``: any): its outputs, for a node
    with ``writes_only_outputs``. Not inside a parallel loop, whose items' calls overlap
    (and write to the same item folder)."""
    if not node.writes_only_outputs or run.workspace(path) is not None:
        return None
    return tuple(run.item.item_dir / name for name in outputs)


def _returned(run: Run, key: str) -> bool:
    """Whether the last call dispatched under ``key`` returned (and failed: its result is
    not recorded): nothing of it can still be running, so it is made again, not taken for
    a call that was interrupted."""
    last: str | None = None
    finished: set[str] = set()
    for event in run.item.journal.events():
        if event.get("key") != key:
            continue
        if event.get("event") == "agent.dispatched":
            last = str(event.get("attempt"))
        elif event.get("event") == "agent.finished":
            finished.add(str(event.get("attempt")))
    return last is not None and last in finished


# -- checks -------------------------------------------------------------------------------


def _checks(run: Run, path: str, node: AgentNode, task: Task | None) -> Any:
    from phasegate.engine.nodes.check import listed_commands
    from phasegate.engine.walk import Checks

    ns = run.state.node(path)
    commands = resolve(node.checks, run.item.config)
    if node.checks_from is not None:
        commands += listed_commands(run, path, node, task, node.checks_from)
    round_ = CheckRound(
        key=f"{path}#{ns.visit}/{ns.iteration}/checks",
        path=path,
        label=run.label(path),
        iteration=ns.iteration,
        commands=commands,
        workdir=run.workspace_dir(path),
    )
    outcomes = yield Checks(round_)
    failures = [o for o in outcomes if not o.passed]
    if not failures:
        return None
    issues = tuple(Issue(**o.issue()) for o in failures)
    return Verdict(
        word="CHECKS_FAILED",
        issues=issues,
        summary="; ".join(f.describe() for f in failures),
        source="checks",
    )
