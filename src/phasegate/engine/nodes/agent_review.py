"""An agent node's reviewers: who reviews, what they are told, and how their answer is read."""

from __future__ import annotations

import weakref
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from phasegate.agents.base import Access, AgentResult
from phasegate.engine.call_results import usage_of
from phasegate.engine.calls import CallSpec
from phasegate.engine.nodes.agent_context import mcp_servers, round_of, run_hooks
from phasegate.engine.nodes.agent_outcome import complete, conclude, readable_issues
from phasegate.engine.nodes.agent_outputs import precheck, previous_missing
from phasegate.engine.nodes.roles import plays, review_timeout, timed_out
from phasegate.engine.plugin_api import PluginContext, Task, plugin
from phasegate.engine.prompting import PromptFor
from phasegate.errors import AgentError
from phasegate.verdicts.readers import ReadContext, ToolCall, VerdictReader, schema_text
from phasegate.workflow.model import AgentNode
from phasegate.workflow.parts import PASS, REVISE, Reviewer
from phasegate.workflow.routing import REVIEW_FAILED

if TYPE_CHECKING:
    from phasegate.engine.run import Run
    from phasegate.engine.walk import Outcome


def no_more_reviewers(
    run: Run,
    path: str,
    node: AgentNode,
    task: Task | None,
    reviewers: tuple[Reviewer, ...],
    index: int,
) -> Outcome | None:
    """Past the last reviewer (or reviews skipped): engine checks, then the node passes."""
    from phasegate.engine.walk import Outcome

    skipped = run.options.no_review or bool(run.state.node(path).get("no_review"))
    if index == 0 or skipped:
        verdict = precheck(
            run, path, node, PromptFor(run, path, node, run.context(path, node, task, {}))
        )
        if verdict is not None:  # checked in code: --no-review does not skip it
            return conclude(
                run, path, node, verdict, REVISE, "engine", -1, final=previous_missing(run, node)
            )
    if reviewers and (skipped or not _any_reviewed(run, path, reviewers)):
        # No reviewer looked at the work (--no-review, or every reviewer's `when` or
        # selector skipped it): the node passes, but nobody approved it.
        review = "skipped"
    elif reviewers:
        review = "approved"
    else:
        review = "none"
    records = run.state.node(path).records("iterations")
    last = records[-1] if records and review == "approved" else {}
    complete(run, path, review, [], str(last.get("summary") or ""))
    cause = f"{last.get('reviewer')} {last.get('iteration')} {last.get('word')}" if last else None
    return Outcome(PASS, cause=cause)


def _mark_skipped(run: Run, path: str, reviewer: Reviewer) -> None:
    """Note that ``reviewer`` was skipped in the node's current iteration."""
    ns = run.state.node(path)
    ns.mapping("skipped_reviewers")[reviewer.key] = ns.iteration


def _any_reviewed(run: Run, path: str, reviewers: tuple[Reviewer, ...]) -> bool:
    """Whether any reviewer's latest say in this visit is a verdict, not a skip.

    A reviewer that was skipped after its last verdict (its ``when`` stopped holding)
    did not review the work as it is now; a reviewer never skipped nor asked did not
    review it either.
    """
    ns = run.state.node(path)
    skipped = ns.get("skipped_reviewers") or {}
    last: dict[str, int] = {}
    for record in ns.records("iterations"):
        key = str(record.get("reviewer"))
        last[key] = max(last.get(key, 0), int(record.get("iteration") or 0))
    for reviewer in reviewers:
        verdict_at = last.get(reviewer.key)
        skipped_at = skipped.get(reviewer.key)
        if verdict_at is not None and (skipped_at is None or verdict_at > int(skipped_at)):
            return True
    return False


def review(
    run: Run,
    path: str,
    node: AgentNode,
    task: Task | None,
    prompts: PromptFor,
    reviewers: tuple[Reviewer, ...],
    index: int,
) -> Any:
    """Ask reviewer ``index`` for a verdict and conclude the iteration with it."""
    from phasegate.engine.walk import Call

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
        _mark_skipped(run, path, reviewer)
        ns.stage = f"review:{index + 1}"
        run.save(lazy=True)
        return None
    if index == 0:
        verdict = precheck(run, path, node, prompts)
        if verdict is not None:
            # Revising this node cannot produce an earlier node's output: stop now.
            return conclude(
                run,
                path,
                node,
                verdict,
                REVISE,
                reviewer.key,
                index,
                final=previous_missing(run, node),
            )
    role, focus = _reviewer_role(run, path, reviewer, ctx)
    if role is None:
        _mark_skipped(run, path, reviewer)
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
        "round": round_of(run, path),
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
    recovered = False
    if reader.channel == "file" and run.item.recorded().result(key) is None:
        # A call a run died in whose tool had already written its review (the reader
        # says why it can be used): read it, not a second paid call.
        recovered = _recover_file_review(run, reader, rctx, path, key, role)
        if not recovered:
            # The verdict will be read from a file a tool writes during the call: whatever
            # is there now is set aside, and the state the tool checks is on disk. (A call
            # whose result was recorded before a crash is not made again: its file stays.)
            prepare = getattr(reader, "prepare", None)
            if callable(prepare):
                prepare(rctx)
        run.save()
    previous, unreadable = _previous_issues(run, path, reviewer.key)
    expectations = reviewer.expectations or node.expectations
    template = (
        reviewer.prompt
        or (node.reviewer_prompt if reviewer is reviewers[0] and node.reviewer else None)
        or f"{role}.md"
    )
    pass_word = next((w for w, a in reviewer.on.items() if a == PASS), words[0] if words else "")
    approving = reader.approving(pass_word, rctx)
    _warn_timeout_unset(run, node, reviewer, role)
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
            role, template, iteration, expectations, previous, answer, focus, unreadable
        ),
        mcp_servers=mcp_servers(run, reviewer.role or role),
        task=task.key if task else None,
        timeout=review_timeout(run, reviewer),
        hints={"answer": _hint(approving)},
        workdir=run.workspace_dir(path),
        plays=plays(role, reviewer.role),
        timeout_ends=reviewer.on_timeout is not None,
        failure_ends=REVIEW_FAILED in node.on,
    )
    result: AgentResult = AgentResult(text="") if recovered else (yield Call(spec))
    ns = run.state.node(path)
    run.state.add_usage(path, role, usage_of(result))
    if result.timed_out and reviewer.on_timeout is not None:
        return timed_out(run, path, node, reviewer, index, role, result)
    if not result.ok:
        # Every attempt failed and ``on`` maps ``review-failed`` (else the call raised):
        # the node ends with it, the failure kept for the question that follows.
        from phasegate.engine.nodes.agent import review_failed

        return review_failed(run, path, node, role, reviewer.role, result)
    verdict = reader.read(result, rctx)
    if verdict is None:
        return _no_verdict(run, path, reviewer, reader, rctx, result, tries)
    ns["review_tries"] = 0
    if ns.get("review_tries_from"):
        ns["review_tries_from"] = 0
    run_hooks(run, node.after_verdict, path, node, task, verdict)
    action = reviewer.on.get(verdict.word) or reviewer.on["UNCLEAR"]
    return conclude(run, path, node, verdict, action, reviewer.key, index, role=role)


#: The reviewers (node id, reviewer key) each run has warned of: one warning a run.
_timeout_warned: weakref.WeakKeyDictionary[Run, set[tuple[str, str]]] = weakref.WeakKeyDictionary()


def _recover_file_review(
    run: Run, reader: VerdictReader, rctx: ReadContext, path: str, key: str, role: str
) -> bool:
    """Whether the review file of call ``key``, which a run died in, is used as its answer
    (the reader's ``recover`` gives the reason, journaled; ``None``: ask again)."""
    recover = getattr(reader, "recover", None)
    attempt = run.item.recorded().abandoned(key)
    if attempt is None or not callable(recover):
        return False
    reason = recover(rctx)
    if not reason:
        return False
    run.item.record(
        "agent.recovered",
        key=key,
        attempt=attempt,
        role=role,
        phase=run.label(path),
        iteration=run.state.node(path).iteration,
        reason=str(reason),
    )
    return True


def _warn_timeout_unset(run: Run, node: AgentNode, reviewer: Reviewer, role: str) -> None:
    """Say, once a run, that a reviewer's timeout naming a value of the item's data takes
    the default limit: nothing set that value, or it is no number of seconds (0 asks for
    the default and is said nothing about). A gate's timeout is warned of the same way."""
    name, data = reviewer.timeout, run.state.data
    if not isinstance(name, str):
        return
    raw = data.get(name)
    if name in data and not isinstance(raw, bool) and isinstance(raw, int | float) and raw >= 0:
        return
    warned = _timeout_warned.setdefault(run, set())
    if (node.id, reviewer.key) in warned:
        return
    warned.add((node.id, reviewer.key))
    workflow = run.item.loaded.path
    with suppress(ValueError):
        workflow = workflow.relative_to(run.item.repo)
    held = "is not set" if name not in data else f"holds {raw!r}, not a number of seconds"
    limit = run.backends.timeout(role, plays(role, reviewer.role))
    message = (
        f"reviewer {reviewer.key!r} of node {node.id!r} ({workflow}): its timeout names the "
        f"item's data {name!r}, which {held}: the review takes the default limit, {limit:g}s "
        f"(write the seconds as a number, or give the item {name!r}, 0 for the default: "
        "Repo.new(data=...) or a plug-in sets it)"
    )
    run.item.record(
        "review.timeout_unset", node=node.id, reviewer=reviewer.key, data=name, message=message
    )


def reader_part(reader: VerdictReader, rctx: ReadContext) -> Any:
    """The prompt part a file-channel verdict reader adds, if it has one."""
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
    if tries - int(ns.get("review_tries_from", 0)) >= limit:
        # The next run starts a new series of attempts (new call keys): a recorded
        # attempt that recorded no verdict is never reused as the review.
        ns["review_tries"] = tries
        ns["review_tries_from"] = tries
        run.save()
        from phasegate.engine.status import again_command

        explain = getattr(reader, "missing_message", None)
        detail = (
            explain(rctx, result)
            if callable(explain)
            else "without recording a verdict (a tool it had to call was not called), so it "
            "is not approved; fix that"
        )
        again = again_command(run.workflow, run.item.name, run.label(path))
        raise AgentError(
            f"the reviewer ({run.backends.describe(reviewer.role or reviewer.key)}) of "
            f"{run.item.name} answered {limit} time{'s' if limit > 1 else ''} {detail}, "
            f"then run {again}"
        )
    ns["review_tries"] = tries
    run.save()


def _previous_issues(run: Run, path: str, reviewer: str) -> tuple[list[dict[str, Any]], str | None]:
    """The issues the reviewer is to check were addressed, and why its previous answer
    could not be read (``None``: it could, or there was none). After an answer that could
    not be read, the issues are those of its last review that could be."""
    every = run.state.node(path).records("iterations")
    records = [r for r in every if not r.get("approved")]
    mine = [r for r in records if r.get("reviewer") in (reviewer, "checks", "engine")]
    if not mine:
        return [], None
    last = mine[-1]
    if last.get("unclear") and last.get("reviewer") == reviewer:
        return readable_issues(every, reviewer), str(last.get("summary") or "")
    return list(last.get("issues") or []), None
