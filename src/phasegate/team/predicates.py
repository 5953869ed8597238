"""The ``team`` workflow's predicates: when optional agents run, what gates say and advise.

- ``team-research-needed``, ``team-ui-involved``: whether Researcher and
  Designer run in DESIGN (rules in :mod:`phasegate.team.rules`);
- ``team-behaviour-task``, ``team-risky-task``: whether QA and Security
  apply to the current task;
- ``team-review-applies``, ``team-qa-applies``, ``team-security-applies``
  and their ``team-final-*`` forms: asked before every Reviewer, QA and
  Security dispatch; each first re-reads the review strategy from
  status.json on disk (never from memory) and refuses to go on without a
  canonical answer;
- ``team-recommend-strategy``, ``team-strategy-detail``,
  ``team-design-summary``, ``team-repair-detail``, ``team-dod-detail``:
  what the gates recommend and say;
- ``team-approval-answer``, ``team-strategy-answer``: classify answers.
"""

from __future__ import annotations

from typing import Any

from phasegate.engine.node_state import NodeState
from phasegate.engine.plugin_api import PluginContext, Predicate
from phasegate.engine.prompting import read_file
from phasegate.engine.walk import definition_path
from phasegate.errors import BlockedError
from phasegate.team import rules
from phasegate.team.documents import sections, spec_criteria
from phasegate.team.session import CORRECTIONS, REVIEW_STRATEGY, team_data
from phasegate.team.status_file import STATUS_FILE, STRATEGIES, read_status
from phasegate.team.tasks import TeamTask, read_tasks


def session_tasks(ctx: PluginContext) -> list[TeamTask]:
    """The tasks of the session's tasks.yaml (those that could be read)."""
    tasks, _ = read_tasks(ctx.item_dir / "tasks.yaml")
    return tasks


def current_task(ctx: PluginContext) -> TeamTask | None:
    """The task of tasks.yaml the run is in (``None`` outside a task: the meta passes)."""
    if ctx.task is None:
        return None
    return next((t for t in session_tasks(ctx) if t.id == ctx.task.key), None)


def _texts(ctx: PluginContext) -> tuple[str, str]:
    spec = read_file(ctx.item_dir / "spec.md") or ""
    return str(ctx.state.get("description") or ""), spec


def strategy_on_disk(ctx: PluginContext) -> str:
    """UD-REVIEW-STRATEGY as status.json on disk holds it (lean mode: always per-batch).

    Raises BlockedError when the file lacks an answered, canonical strategy:
    no Reviewer, QA or Security call is made on a strategy kept only in memory.
    """
    if ctx.state.mode == "lean":
        return "per-batch"
    path = ctx.item_dir / STATUS_FILE
    status = read_status(path)
    entry = status.decision(REVIEW_STRATEGY) if status is not None else None
    if entry is None or entry.status != "answered" or entry.answer not in STRATEGIES:
        raise BlockedError(
            f"{ctx.item.name}: {path} holds no answered per-batch or single-final "
            f"{REVIEW_STRATEGY}, so no review is dispatched; restore the file and run "
            f"phasegate run {ctx.item.name}"
        )
    return entry.answer


def _per_task_strategy(ctx: PluginContext) -> None:
    strategy = strategy_on_disk(ctx)
    if strategy != "per-batch":
        raise BlockedError(
            f"{ctx.item.name}: status.json says {strategy}, but a per-task review was about "
            "to run; the state and status.json disagree (was status.json edited?)"
        )


class _Rule(Predicate):
    def __init__(self, name: str, rule: Any) -> None:
        self.name = name
        self._rule = rule

    def __call__(self, ctx: PluginContext) -> bool | str | None:
        result: bool | str | None = self._rule(ctx)
        return result


def _research(ctx: PluginContext) -> bool:
    return rules.research_needed(*_texts(ctx))


def _ui(ctx: PluginContext) -> bool:
    return rules.ui_involved(*_texts(ctx))


def _behaviour(ctx: PluginContext) -> bool:
    task = current_task(ctx)
    return task is not None and rules.behaviour_task(task)


def _risky(ctx: PluginContext) -> bool:
    task = current_task(ctx)
    return task is not None and rules.risky_task(task)


def _review_applies(ctx: PluginContext) -> bool:
    _per_task_strategy(ctx)
    return True


def _qa_applies(ctx: PluginContext) -> bool:
    _per_task_strategy(ctx)
    return _behaviour(ctx)


def _security_applies(ctx: PluginContext) -> bool:
    _per_task_strategy(ctx)
    return _risky(ctx)


def _ran(ctx: PluginContext, role: str) -> bool:
    usage = (ctx.state.get("usage_by_role") or {}).get(role) or {}
    return int(usage.get("calls", 0)) > 0


def _final_review_applies(ctx: PluginContext) -> bool:
    strategy_on_disk(ctx)
    return True


def _final_applies(role: str, rule: Any) -> Any:
    """The combined pass runs QA/Security when a task needs it (single-final), and in any
    full run whose per-task passes never ran it: every core agent runs at least once."""

    def applies(ctx: PluginContext) -> bool:
        strategy = strategy_on_disk(ctx)
        if not _ran(ctx, role):
            return True
        return strategy == "single-final" and any(rule(t) for t in session_tasks(ctx))

    return applies


def _recommend(ctx: PluginContext) -> str:
    return rules.recommend_strategy(session_tasks(ctx))[0]


def _strategy_detail(ctx: PluginContext) -> str:
    tasks = session_tasks(ctx)
    choice, reason = rules.recommend_strategy(tasks)
    listed = "; ".join(f"{t.id} {t.title}" for t in tasks)
    files = sorted({f for t in tasks for f in t.files})
    flags = sorted({f for t in tasks for f in t.risk_flags} - {"none"})
    deps = sum(len(t.dependencies) for t in tasks)
    return (
        f"{len(tasks)} task(s) planned: {listed}. Scope: {len(files)} file(s) named, "
        f"{deps} dependenc{'y' if deps == 1 else 'ies'}, risk flags: "
        f"{', '.join(flags) or 'none'}. per-batch: Reviewer, QA and Security run after each "
        "task (more thorough, slower, issues caught early). single-final: they run once "
        "after every task is coded (faster; issues found late may need more rework). "
        f"Recommended: {choice} ({reason})."
    )


def _design_summary(ctx: PluginContext) -> str:
    _, spec = _texts(ctx)
    criteria = [cid for cid, _ in spec_criteria(spec)]
    architecture = read_file(ctx.item_dir / "architecture.md") or ""
    headings = [s.title for s in sections(architecture) if s.level <= 2][:8]
    designs = sorted(
        p.relative_to(ctx.item_dir).as_posix()
        for p in (ctx.item_dir / "design-specs").rglob("*")
        if p.is_file()
    )
    parts = [
        f"spec.md states {len(criteria)} acceptance criteria ({', '.join(criteria) or 'none'})",
        f"architecture.md covers {', '.join(headings) or '(no sections)'}",
        f"design specs: {', '.join(designs) if designs else 'none (no user interface)'}",
    ]
    text = "; ".join(parts) + "."
    track = team_data(ctx.state).get("approve_design") or {}
    agent = (track.get("last") or {}).get("agent")
    node_id = next((n for n, a in CORRECTIONS.items() if a == agent), None)
    found = ctx.state.peek(node_id) if node_id else None
    if found is not None and found.get("outcome") == "interrupted":
        text += (
            f" The correction by {agent} was interrupted before it returned and is not "
            "dispatched again: check its files before you answer."
        )
    return text


def _source(ctx: PluginContext) -> tuple[NodeState | None, list[dict[str, Any]]]:
    """The node whose outcome led to this gate, and the issues it passed on."""
    gate = ctx.state.peek(ctx.path)
    incoming = (gate.get("incoming") if gate is not None else None) or {}
    issues = list(incoming.get("issues") or [])
    if incoming.get("from"):
        return ctx.state.peek(str(incoming["from"])), issues
    prefix = ctx.path.rpartition("/")[0]
    own = ctx.node.id if ctx.node is not None else ""
    for node in ctx.item.workflow.scope_of(definition_path(ctx.path)):
        found = ctx.state.peek(f"{prefix}/{node.id}" if prefix else node.id)
        if found is not None and node.on.get(str(found.get("outcome"))) == own:
            return found, issues
    return None, issues


def _issue_lines(issues: list[dict[str, Any]]) -> str:
    lines = []
    for i in issues:
        first = (str(i.get("description") or "").splitlines() or [""])[0].rstrip(".")
        where = str(i.get("location") or "")
        # A failed check's description already quotes its command (its location).
        at = f" (at {where})" if where and where not in first else ""
        lines.append(f"[{i.get('severity')}] {first}{at}")
    return "; ".join(lines)


def _findings_detail(ctx: PluginContext) -> str:
    found, issues = _source(ctx)
    records = list(found.get("iterations") or []) if found is not None else []
    last = records[-1] if records else {}
    issues = issues or list(last.get("issues") or [])
    summary = str(last.get("summary") or "").strip() or "(no summary)"
    return f"{summary} Findings: {_issue_lines(issues) or 'none listed'}."


#: The gate asked when FIX_BUILD is exhausted.
BUILD_GATE = "build-exhausted"


def _repair_detail(ctx: PluginContext) -> str:
    found, issues = _source(ctx)
    records = list(found.get("iterations") or []) if found is not None else []
    where = ctx.task.key if ctx.task is not None else "The session"
    # Repair round n is review iteration n + 1 (the first iteration is the first review);
    # FIX_BUILD has no first review: each of its iterations is a repair round.
    first = 0 if definition_path(ctx.path) == BUILD_GATE else 1
    tried = [
        f"round {int(r.get('iteration') or 1) - first}: "
        f"{(str(r.get('changes') or '').strip() or 'no summary')[:200]}"
        for r in records[first:]
    ]
    last = records[-1] if records else {}
    why = _issue_lines(issues or list(last.get("issues") or [])) or str(
        last.get("summary") or "not recorded"
    )
    return (
        f"{where}: {len(tried)} repair round(s) did not get past {last.get('reviewer', 'the gate')}"
        f" ({last.get('word', 'not approved')}). Tried: {' | '.join(tried) or 'nothing recorded'}."
        f" Still failing: {why}."
    )


def _dod_detail(ctx: PluginContext) -> str:
    from phasegate.team.done import unmet

    missing = unmet(ctx, status=False)
    return "; ".join(missing) if missing else "every part of the Definition of Done holds"


def _approval_answer(ctx: PluginContext) -> str:
    return rules.classify_approval(str(ctx.settings.get("answer") or ""))


def _strategy_answer(ctx: PluginContext) -> str:
    return rules.classify_strategy(str(ctx.settings.get("answer") or ""))


RESEARCH_NEEDED = _Rule("team-research-needed", _research)
UI_INVOLVED = _Rule("team-ui-involved", _ui)
BEHAVIOUR_TASK = _Rule("team-behaviour-task", _behaviour)
RISKY_TASK = _Rule("team-risky-task", _risky)
REVIEW_APPLIES = _Rule("team-review-applies", _review_applies)
QA_APPLIES = _Rule("team-qa-applies", _qa_applies)
SECURITY_APPLIES = _Rule("team-security-applies", _security_applies)
FINAL_REVIEW_APPLIES = _Rule("team-final-review-applies", _final_review_applies)
FINAL_QA_APPLIES = _Rule("team-final-qa-applies", _final_applies("qa", rules.behaviour_task))
FINAL_SECURITY_APPLIES = _Rule(
    "team-final-security-applies", _final_applies("security", rules.risky_task)
)
RECOMMEND_STRATEGY = _Rule("team-recommend-strategy", _recommend)
STRATEGY_DETAIL = _Rule("team-strategy-detail", _strategy_detail)
DESIGN_SUMMARY = _Rule("team-design-summary", _design_summary)
REPAIR_DETAIL = _Rule("team-repair-detail", _repair_detail)
DOD_DETAIL = _Rule("team-dod-detail", _dod_detail)
FINDINGS_DETAIL = _Rule("team-findings-detail", _findings_detail)
APPROVAL_ANSWER = _Rule("team-approval-answer", _approval_answer)
STRATEGY_ANSWER = _Rule("team-strategy-answer", _strategy_answer)
