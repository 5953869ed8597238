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

import sys
from typing import TYPE_CHECKING, Any

from phasegate.agents.base import Access, AgentResult, McpServer
from phasegate.engine.calls import CallSpec, usage_of
from phasegate.engine.checks import CheckRound, resolve
from phasegate.engine.nodes.roles import executor_role, plays, review_timeout, timed_out
from phasegate.engine.plugin_api import Action, ItemParser, PluginContext, Task, plugin
from phasegate.engine.prompting import PromptFor, read_file
from phasegate.errors import AgentError
from phasegate.state.journal import utc_now
from phasegate.verdicts.model import Issue, Verdict
from phasegate.verdicts.readers import ReadContext, ToolCall, VerdictReader, schema_text
from phasegate.workflow.model import COMPLETE, PASS, REVISE, AgentNode, Reviewer

if TYPE_CHECKING:
    from phasegate.engine.run import Outcome, Run, Steps

CHANGES_LIMIT = 1500


def run_agent(run: Run, path: str, node: AgentNode, task: Task | None) -> Steps:
    from phasegate.engine.run import Outcome

    ns = run.state.node(path)
    if node.max_visits is not None and ns.visit > node.max_visits:
        return Outcome("exhausted")
    ctx = run.context(path, node, task, {})
    prompts = PromptFor(run, path, node, ctx)
    reviewers = node.all_reviewers()
    if node.on_enter and not ns.get("entered_hooks"):
        _hooks(run, node.on_enter, path, node, task)
        run.state.node(path)["entered_hooks"] = True
        run.save(lazy=True)
    while True:
        ns = run.state.node(path)
        stage = ns.stage
        if stage == "execute":
            executed: Outcome = yield from _execute(run, path, node, task, prompts)
            if executed.name == "interrupted":
                return executed
            continue
        if stage == "checks":
            verdict = yield from _checks(run, path, node, task)
            if verdict is not None:
                outcome = _conclude(run, path, node, verdict, REVISE, "checks", -1)
                if outcome is not None:
                    return outcome
            else:
                ns.stage = f"review:{int(ns.get('resume_review', 0))}"
                run.save(lazy=True)
            continue
        if stage.startswith("review:"):
            index = int(stage.removeprefix("review:"))
            if index >= len(reviewers) or run.options.no_review or ns.get("no_review"):
                outcome = _no_more_reviewers(run, path, node, task, reviewers, index)
                if outcome is not None:
                    return outcome
                continue
            reviewed: Outcome | None = yield from _review(
                run, path, node, task, prompts, reviewers, index
            )
            if reviewed is not None:
                return reviewed
            continue
        done: Outcome = Outcome(str(ns.get("outcome") or "pass"))
        return done


# -- execute -------------------------------------------------------------------------------


def _execute(run: Run, path: str, node: AgentNode, task: Task | None, prompts: PromptFor) -> Steps:
    from phasegate.engine.run import Call, Outcome

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
            "outputs": [run.rel(path, run.item.item_dir / o) for o in outputs],
            "examples": _examples(run, node, prompts),
        },
        workdir=run.workspace_dir(path),
        plays=plays(role, workflow_role),
    )
    if node.at_most_once:
        if ns.get("dispatching") == spec.key and run.item.recorded().result(spec.key) is None:
            # The run stopped after this call was dispatched and before its result was
            # journaled: the work may be half done, so it is never dispatched again.
            run.item.record(
                "agent.not_redispatched", node=path, key=spec.key, role=role, sync_now=True
            )
            _complete(run, path, "none", [], "the call was interrupted before it returned")
            run.save(lazy=True)
            return Outcome("interrupted")
        if ns.get("dispatching") != spec.key:
            ns["dispatching"] = spec.key
            run.save(durable=True)  # the intent is on disk before the call is made
    result: AgentResult = yield Call(spec)
    ns = run.state.node(path)
    run.state.add_usage(path, role, usage_of(result))
    ns["changes"] = _summary_of(result, run)
    _hooks(run, node.after_execute, path, node, task)
    missing = _missing(run, node, prompts, "retry")
    if missing:
        tries += 1
        limit = run.backends.config.retries.agent + 1
        run.item.record(
            "step.output_missing",
            node=path,
            role=role,
            missing=missing,
            attempt=tries,
            of=limit,
            sync_now=True,
        )
        if tries >= limit:
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
    has_checks = bool(node.checks) or node.checks_from is not None
    ns.stage = "checks" if has_checks else f"review:{int(ns.get('resume_review', 0))}"
    run.save(lazy=True)
    return Outcome("executed")


def _missing(run: Run, node: AgentNode, prompts: PromptFor, policy: str) -> list[str]:
    """The outputs with ``policy`` that are absent, empty, hold too few items or are invalid."""
    return [
        f"{rel}: {problem}" if problem else rel
        for rel, problem in _output_problems(run, node, prompts, policy)
    ]


def _output_problems(
    run: Run, node: AgentNode, prompts: PromptFor, policy: str
) -> list[tuple[str, str | None]]:
    """``(output, problem)`` per output that is wrong; ``problem`` is ``None`` when it is
    absent or empty, else what its parser found wrong with it."""
    found: list[tuple[str, str | None]] = []
    node_path = prompts.path
    for output, name in zip(node.outputs, prompts.outputs(), strict=True):
        if output.missing != policy:
            continue
        path = run.item.item_dir / name
        rel = run.rel(node_path, path)
        if name.endswith("/"):
            if not path.is_dir() or not any(p.is_file() for p in path.rglob("*")):
                found.append((rel, None))
            continue
        text = read_file(path)
        if text is None or not text.strip():
            found.append((rel, None))
            continue
        if output.parser is not None:
            parser: ItemParser = plugin("parsers", output.parser)
            problems = parser.problems(prompts.ctx, path)
            if not problems and parser.count(path) < output.min_items:
                problems = ["it lists no items"]
            found += [(rel, problem) for problem in problems]
    return found


def _examples(run: Run, node: AgentNode, prompts: PromptFor) -> dict[str, str]:
    """Valid examples of the outputs whose parsers offer one (the ``auto`` backend writes them)."""
    examples: dict[str, str] = {}
    for output, name in zip(node.outputs, prompts.outputs(), strict=True):
        if output.parser is None:
            continue
        path = run.item.item_dir / name
        text = plugin("parsers", output.parser).example(prompts.ctx, path)
        if text is not None:
            examples[run.item.relative(path, run.state)] = text
    return examples


def _hooks(
    run: Run,
    refs: Any,
    path: str,
    node: AgentNode,
    task: Task | None,
    verdict: Verdict | None = None,
) -> None:
    for ref in refs:
        action: Action = plugin("actions", ref.plugin)
        ctx = run.context(path, node, task, ref.with_)
        ctx.verdict, ctx.round = verdict, _round(run, path)
        action.run(ctx)


def _round(run: Run, path: str) -> str:
    ns = run.state.node(path)
    return f"{ns.visit}.{ns.iteration}"


def _summary_of(result: AgentResult, run: Run) -> str:
    text = result.text.strip()
    if len(text) <= CHANGES_LIMIT:
        return run.item.redactor.text(text)
    return run.item.redactor.clip(text, CHANGES_LIMIT) + " [...]"


def mcp_servers(run: Run, role: str) -> tuple[McpServer, ...]:
    """phasegate's MCP server with the tools the role may call, if it is given any."""
    tools = run.workflow.roles[role].mcp if role in run.workflow.roles else ()
    if not tools:
        return ()
    return (
        McpServer(
            name="phasegate",
            # The running interpreter, so the agent's stripped-down PATH cannot miss it.
            command=sys.executable,
            args=(
                "-m",
                "phasegate",
                "mcp",
                "--repo",
                str(run.item.repo),
                "--change",
                run.item.name,
                "--tools",
                ",".join(tools),
            ),
            tools=tools,
        ),
    )


# -- checks -------------------------------------------------------------------------------


def _checks(run: Run, path: str, node: AgentNode, task: Task | None) -> Any:
    from phasegate.engine.nodes.check import listed_commands
    from phasegate.engine.run import Checks

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


# -- reviewers -----------------------------------------------------------------------------


def _no_more_reviewers(
    run: Run,
    path: str,
    node: AgentNode,
    task: Task | None,
    reviewers: tuple[Reviewer, ...],
    index: int,
) -> Outcome | None:
    """Past the last reviewer (or reviews skipped): engine checks, then the node passes."""
    from phasegate.engine.run import Outcome

    skipped = run.options.no_review or bool(run.state.node(path).get("no_review"))
    if index == 0 or skipped:
        verdict = precheck(
            run, path, node, PromptFor(run, path, node, run.context(path, node, task, {}))
        )
        if verdict is not None and not skipped:
            return _conclude(
                run, path, node, verdict, REVISE, "engine", -1, final=_previous_missing(run, node)
            )
    if reviewers and skipped:
        review = "skipped"
    elif reviewers:
        review = "approved"
    else:
        review = "none"
    records = run.state.node(path).records("iterations")
    last = records[-1] if records and review == "approved" else {}
    _complete(run, path, review, [], str(last.get("summary") or ""))
    cause = f"{last.get('reviewer')} {last.get('iteration')} {last.get('word')}" if last else None
    return Outcome(PASS, cause=cause)


def _review(
    run: Run,
    path: str,
    node: AgentNode,
    task: Task | None,
    prompts: PromptFor,
    reviewers: tuple[Reviewer, ...],
    index: int,
) -> Any:
    from phasegate.engine.run import Call

    ns = run.state.node(path)
    reviewer = reviewers[index]
    # Only a predicate or a selector looks at the context: built for them alone.
    ctx = (
        run.context(path, node, task, {})
        if reviewer.when is not None or reviewer.selector is not None
        else None
    )
    if reviewer.when is not None and not plugin("predicates", reviewer.when)(ctx):
        run.item.record("reviewer.skipped", node=path, reviewer=reviewer.key, when=reviewer.when)
        ns.stage = f"review:{index + 1}"
        run.save(lazy=True)
        return None
    if index == 0:
        verdict = precheck(run, path, node, prompts)
        if verdict is not None:
            # Revising this node cannot produce an earlier node's output: stop now.
            return _conclude(
                run,
                path,
                node,
                verdict,
                REVISE,
                reviewer.key,
                index,
                final=_previous_missing(run, node),
            )
    role, focus = _reviewer_role(run, path, reviewer, ctx)
    if role is None:
        ns.stage = f"review:{index + 1}"
        run.save(lazy=True)
        return None
    reader: VerdictReader = plugin("readers", reviewer.reader)
    backend = run.backends.for_role(role, plays(role, reviewer.role))
    words = _words(reviewer, reader)
    fields: dict[str, Any] = {
        "words": words,
        "pass_words": frozenset(w for w, a in reviewer.on.items() if a == PASS),
        "revise_word": next(
            (w for w, a in reviewer.on.items() if a == REVISE and w != "UNCLEAR"), None
        ),
        "item": run.item.name,
        "item_dir": run.item.item_dir,
        "workdir": run.workdir(path),
        "round": _round(run, path),
    }
    schema = reader.schema(ReadContext(structured_enforced=False, **fields))
    enforced = schema is not None and bool(backend.structured_output)
    rctx = ReadContext(structured_enforced=enforced, **fields)
    answer = None
    if schema is not None and not enforced:
        from phasegate.agents.base import PromptPart

        answer = PromptPart("Your answer", schema_text(schema))
    elif reader.channel == "file":
        answer = reader_part(reader, rctx)
    iteration, tries = ns.iteration, int(ns.get("review_tries", 0))
    key = f"{path}#{ns.visit}/{iteration}/review:{reviewer.key}/{tries}"
    if reader.channel == "file" and run.item.recorded().result(key) is None:
        # The verdict will be read from a file a tool writes during the call: whatever
        # is there now is set aside, and the state the tool checks is on disk. (A call
        # whose result was recorded before a crash is not made again: its file stays.)
        prepare = getattr(reader, "prepare", None)
        if callable(prepare):
            prepare(rctx)
        run.save()
    previous = _previous_issues(run, path, reviewer.key)
    expectations = reviewer.expectations or node.expectations
    template = (
        reviewer.prompt
        or (node.reviewer_prompt if reviewer is reviewers[0] and node.reviewer else None)
        or f"{role}.md"
    )
    pass_word = next((w for w, a in reviewer.on.items() if a == PASS), words[0] if words else "")
    approving = reader.approving(pass_word, rctx)
    spec = CallSpec(
        key=key,
        role=role,
        path=path,
        label=run.label(path),
        iteration=iteration,
        stage="review",
        access=Access.READ_ONLY,
        output_schema=schema if enforced else None,
        build_prompt=lambda: prompts.reviewer(
            role, template, iteration, expectations, previous, answer, focus
        ),
        mcp_servers=mcp_servers(run, reviewer.role or role),
        task=task.key if task else None,
        timeout=review_timeout(run, reviewer),
        hints={"answer": _hint(approving)},
        workdir=run.workspace_dir(path),
        plays=plays(role, reviewer.role),
        timeout_ends=reviewer.on_timeout is not None,
    )
    result: AgentResult = yield Call(spec)
    ns = run.state.node(path)
    run.state.add_usage(path, role, usage_of(result))
    if result.timed_out and reviewer.on_timeout is not None:
        return timed_out(run, path, node, reviewer, index, role, result)
    verdict = reader.read(result, rctx)
    if verdict is None:
        return _no_verdict(run, path, reviewer, reader, rctx, result, tries)
    ns["review_tries"] = 0
    _hooks(run, node.after_verdict, path, node, task, verdict)
    action = reviewer.on.get(verdict.word) or reviewer.on["UNCLEAR"]
    return _conclude(run, path, node, verdict, action, reviewer.key, index, role=role)


def reader_part(reader: VerdictReader, rctx: ReadContext) -> Any:
    part = getattr(reader, "prompt_part", None)
    return part(rctx) if callable(part) else None


def _hint(approving: Any) -> dict[str, Any]:
    if isinstance(approving, ToolCall):
        return {"tool": approving.tool, "arguments": dict(approving.arguments)}
    return {"structured": dict(approving)}


def _words(reviewer: Reviewer, reader: VerdictReader) -> tuple[str, ...]:
    if reader.words is not None:
        return tuple(reader.words)
    return tuple(w for w in reviewer.on if w != "UNCLEAR")


def _reviewer_role(
    run: Run, path: str, reviewer: Reviewer, ctx: PluginContext | None
) -> tuple[str | None, tuple[str, ...]]:
    if reviewer.selector is None or ctx is None:
        return reviewer.role, ()
    ns = run.state.node(path)
    chosen = ns.mapping("selected").get(f"{ns.iteration}:{reviewer.key}")
    if chosen is not None:
        return chosen.get("role"), tuple(chosen.get("focus") or ())
    selector = plugin("selectors", reviewer.selector.plugin)
    ctx.settings = reviewer.selector.with_
    selection = selector.select(ctx, reviewer.selector.with_)
    if selection is None:
        run.item.record(
            "reviewer.skipped",
            node=path,
            reviewer=reviewer.key,
            reason="the selector chose no reviewer",
        )
        return None, ()
    record = {
        "role": selection.role,
        "reason": selection.reason,
        "focus": list(selection.focus),
        **dict(selection.data),
    }
    ns.mapping("selected")[f"{ns.iteration}:{reviewer.key}"] = record
    run.item.record("reviewer.selected", node=path, iteration=ns.iteration, **record)
    run.save(lazy=True)
    return selection.role, selection.focus


def _no_verdict(
    run: Run,
    path: str,
    reviewer: Reviewer,
    reader: VerdictReader,
    rctx: ReadContext,
    result: AgentResult,
    tries: int,
) -> None:
    """The reviewer recorded no verdict at all (a tool it had to call was not called)."""
    ns = run.state.node(path)
    tries += 1
    limit = run.backends.config.retries.agent + 1
    run.item.record(
        "review.missing",
        node=path,
        reviewer=reviewer.key,
        round=rctx.round,
        attempt=tries,
        of=limit,
        sync_now=True,
    )
    if tries >= limit:
        explain = getattr(reader, "missing_message", None)
        detail = explain(rctx, result) if callable(explain) else "no verdict was recorded"
        raise AgentError(
            f"the reviewer ({run.backends.describe(reviewer.role or reviewer.key)}) of "
            f"{run.item.name} answered {limit} time{'s' if limit > 1 else ''} but {detail}, "
            f"so it is not approved; run phasegate again once that is fixed"
        )
    ns["review_tries"] = tries
    run.save()


def _previous_missing(run: Run, node: AgentNode) -> bool:
    if not (node.previous and node.previous_required):
        return False
    return not (read_file(run.item.item_dir / node.previous) or "").strip()


def precheck(run: Run, path: str, node: AgentNode, prompts: PromptFor) -> Verdict | None:
    """Seed 000 interface 2's error cases, decided in code without asking a reviewer."""
    from phasegate.engine.prompting import implementation_changes
    from phasegate.workflow.transitions import producers

    problems: list[str] = []
    if _previous_missing(run, node):
        made_by = producers(run.workflow, str(node.previous))
        hint = f" (run the {made_by[0]} phase first)" if made_by else ""
        problems.append(f"The previous artifact {node.previous} is missing or empty{hint}.")
    for name, problem in _output_problems(run, node, prompts, "revise"):
        if problem is None:
            problems.append(f"The artifact {name} is missing or empty.")
        else:
            problems.append(f"The artifact {name} is not valid: {problem}.")
    if node.reviews_code and not node.outputs and not implementation_changes(run, path).strip():
        problems.append("No implementation changes were found in the work tree.")
    if not problems:
        return None
    return Verdict(
        word="REJECTED",
        issues=tuple(Issue(severity="blocker", description=p) for p in problems),
        summary=" ".join(problems),
        source="engine",
    )


def _previous_issues(run: Run, path: str, reviewer: str) -> list[dict[str, Any]]:
    records = [r for r in run.state.node(path).records("iterations") if not r.get("approved")]
    mine = [r for r in records if r.get("reviewer") in (reviewer, "checks", "engine")]
    return list(mine[-1].get("issues") or []) if mine else []


# -- outcomes ------------------------------------------------------------------------------


def _conclude(
    run: Run,
    path: str,
    node: AgentNode,
    verdict: Verdict,
    action: str,
    reviewer: str,
    index: int,
    *,
    final: bool = False,
    role: str | None = None,
) -> Outcome | None:
    """Record the iteration; then pass on, loop with feedback, or end the node."""
    from phasegate.engine.run import Outcome

    ns = run.state.node(path)
    issues = [i.model_dump() for i in verdict.issues]
    approved = action == PASS
    if not approved and not issues and verdict.summary.strip():
        # A rejection that names no issue still says why: its summary is the feedback
        # (and the concern kept when the budget is spent), whatever reader read it.
        issues = [{"severity": "blocker", "description": verdict.summary.strip(), "location": None}]
    cause = f"{reviewer} {ns.iteration} {verdict.word}"
    record = {
        "phase": run.label(path),
        "iteration": ns.iteration,
        "timestamp": utc_now(),
        "approved": approved,
        "unclear": verdict.unclear,
        "source": verdict.source,
        "word": verdict.word,
        "reviewer": reviewer,
        "summary": verdict.summary,
        "issues": issues,
        "changes": ns.get("changes", ""),
    }
    ns.records("iterations").append(record)
    run.item.record(
        "review.verdict",
        node=path,
        phase=run.label(path),
        iteration=ns.iteration,
        reviewer=reviewer,
        role=role,
        verdict=verdict.word,
        approved=approved,
        unclear=verdict.unclear,
        source=verdict.source,
        summary=verdict.summary,
        issues=issues,
    )
    if action == PASS:
        ns.stage = f"review:{index + 1}"
        ns["resume_review"] = 0
        run.save(lazy=True)
        return None
    notes = _notes(issues)
    if action == REVISE:
        used = ns.mapping("used")
        count = ns.iteration if node.budget.per == "node" else int(used.get(reviewer, 0)) + 1
        if count < run.limit(path, node) and not final:
            used[reviewer] = int(used.get(reviewer, 0)) + 1
            ns.iteration = ns.iteration + 1
            ns.stage = "execute"
            ns["feedback"] = issues or [
                {"severity": "blocker", "description": verdict.word, "location": None}
            ]
            ns["resume_review"] = max(index, 0)
            ns["changes"] = ""
            run.save(lazy=True)
            return None
        if verdict.source == "checks":
            # Checks still failing when the budget is spent: the node did not pass (by
            # default the run stops, blocked; a workflow may map the outcome elsewhere).
            _complete(run, path, "checks-failed", notes, verdict.summary, announce=False)
            return Outcome("checks-failed", issues=issues, cause=cause)
        _complete(run, path, "concerns", notes, verdict.summary)
        policy = node.budget.on_exhausted
        run.item.record(
            "node.budget_spent",
            node=path,
            reviewer=reviewer,
            iterations=ns.iteration,
            policy=policy,
        )
        return Outcome(PASS if policy == COMPLETE else policy, issues=issues, cause=cause)
    _complete(run, path, "concerns", notes, verdict.summary)
    return Outcome(action, issues=issues, cause=cause)


def _notes(issues: list[dict[str, Any]]) -> list[str]:
    def note(issue: dict[str, Any]) -> str:
        where = f" (at {issue['location']})" if issue.get("location") else ""
        return f"[{issue['severity']}] {issue['description']}{where}"

    serious = [note(i) for i in issues if i.get("severity") != "note"]
    return serious or [note(i) for i in issues]


def _complete(
    run: Run,
    path: str,
    review: str,
    notes: list[str],
    summary: str,
    *,
    announce: bool = True,
) -> None:
    ns = run.state.node(path)
    ns["review"] = review
    ns["notes"] = notes
    ns["summary"] = summary or None
    verified = {"approved": True, "concerns": False, "checks-failed": False}
    ns["verified"] = verified.get(review)
    ns.stage = "done"
    if not announce:
        return
    run.item.record(
        "phase.completed",
        node=path,
        phase=run.label(path),
        iterations=ns.iteration,
        review=review,
        reviewer_notes=notes,
    )
