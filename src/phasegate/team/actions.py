"""The ``team`` workflow's actions: read-after-write checks, routes, task promotion, DoD.

Actions never call agents and never move the workflow themselves: each
answers with one of its declared outcomes and the workflow's ``on`` map
decides. Their writes (tasks.yaml statuses, the approve-design history,
report.md) are idempotent, so an action run again after a crash writes the
same thing once.
"""

from __future__ import annotations

import json
import re
from typing import Any

from phasegate.engine.plugin_api import Action, PluginContext
from phasegate.engine.prompting import read_file
from phasegate.errors import StateCorruptError
from phasegate.state.atomic import atomic_write_text
from phasegate.state.journal import utc_now
from phasegate.team.done import open_tasks, unmet
from phasegate.team.parsers import usable_tasks
from phasegate.team.predicates import session_tasks, strategy_on_disk
from phasegate.team.session import APPROVE_DESIGN
from phasegate.team.status_file import (
    HISTORY_FILE,
    STATUS_FILE,
    TeamStatus,
    read_status,
    redacted,
)
from phasegate.team.tasks import set_statuses
from phasegate.team.view import TASK_LOOPS

VERIFY_ATTEMPTS = 3
SPEC_WORDS = re.compile(
    r"\b(spec|specification|requirements?|acceptance|criteri(?:on|a)|scope|user stor(?:y|ies)|"
    r"goals?|non-goals?)\b",
    re.IGNORECASE,
)
DESIGN_WORDS = re.compile(
    r"\b(ui|ux|layout|screens?|visual|design specs?|colou?rs?|fonts?|styles?|components?|"
    r"pages?|buttons?|forms?|icons?|spacing)\b",
    re.IGNORECASE,
)


def status_on_disk(ctx: PluginContext) -> TeamStatus | None:
    """status.json as written by the latest commit (a coalesced commit is written first)."""
    ctx.item.flush()
    return read_status(ctx.item_dir / STATUS_FILE)


class CheckStatus(Action):
    """INTAKE's last gate: status.json exists and fits its schema."""

    name = "team-check-status"
    outcomes = ("valid", "invalid")

    def run(self, ctx: PluginContext) -> str:
        try:
            found = status_on_disk(ctx)
        except StateCorruptError as exc:
            ctx.record("status.invalid", reason=str(exc))
            return "invalid"
        return "valid" if found is not None else "invalid"


class VerifyDecision(Action):
    """Read-after-write: status.json on disk holds the gate's answer before the workflow goes on.

    ``with: {decision: ID, answer_starts_with: TEXT}`` or ``{decision: ID, one_of: [...]}``.
    A mismatch is written again from the engine state and read again, up to 3 times.
    """

    name = "team-verify-decision"
    outcomes = ("verified", "unverified")

    def run(self, ctx: PluginContext) -> str:
        decision = str(ctx.settings["decision"])
        for attempt in range(1, VERIFY_ATTEMPTS + 1):
            try:
                status = status_on_disk(ctx)
            except StateCorruptError:
                status = None
            entry = status.decision(decision) if status is not None else None
            answer = entry.answer if entry is not None and entry.status == "answered" else None
            if answer is not None and self._fits(answer, ctx.settings):
                ctx.record("decision.verified", id=decision, answer=answer, attempt=attempt)
                return "verified"
            view = ctx.item.view
            rewrite = getattr(view, "rewrite", view.render)
            rewrite(ctx.state)  # write it again from the state, then read it again
        ctx.record("decision.unverified", id=decision, attempts=VERIFY_ATTEMPTS, sync_now=True)
        return "unverified"

    @staticmethod
    def _fits(answer: str, settings: Any) -> bool:
        prefix = settings.get("answer_starts_with")
        if prefix is not None and not answer.startswith(str(prefix)):
            return False
        allowed = settings.get("one_of")
        return allowed is None or answer in allowed


def route_correction(summary: str, has_design: bool) -> str:
    """Which agent a change request goes to: the spec's words -> SpecAgent; user-interface
    words (when a design spec exists) -> Designer; anything else -> Architect."""
    if SPEC_WORDS.search(summary):
        return "spec"
    if has_design and DESIGN_WORDS.search(summary):
        return "design"
    return "architecture"


def _visit_of(line: str) -> Any:
    try:
        found = json.loads(line)
    except ValueError:
        return None
    return found.get("visit") if isinstance(found, dict) else None


class CorrectionRoute(Action):
    """APPROVE_DESIGN's change request: appended to the history, then routed to one agent."""

    name = "team-correction-route"
    outcomes = ("spec", "architecture", "design")

    def run(self, ctx: PluginContext) -> str:
        record = ctx.state.decisions.get(APPROVE_DESIGN) or {}
        answer = record.get("answer") or {}
        summary = str(answer.get("note") or "")
        designs = ctx.item_dir / "design-specs"
        has_design = designs.is_dir() and any(p.is_file() for p in designs.rglob("*"))
        route = route_correction(summary, has_design)
        visit = int(record.get("visit") or 0)
        path = ctx.item_dir / HISTORY_FILE
        text = read_file(path) or ""
        rounds = {_visit_of(line) for line in text.splitlines() if line.strip()}
        if visit not in rounds:  # written once, even when this runs again after a crash
            entry = {
                "at": answer.get("answered_at") or utc_now(),
                "decision_id": APPROVE_DESIGN,
                "answer": f"changes-requested: {summary}",
                "state_context": "APPROVE_DESIGN",
                "visit": visit,
                "routed_to": {"spec": "SpecAgent", "design": "Designer"}.get(route, "Architect"),
            }
            line = json.dumps(redacted(entry, ctx.item.redactor), ensure_ascii=False)
            atomic_write_text(path, text + line + "\n")
        ctx.record("correction.routed", round=visit, to=route, summary=summary)
        return route


#: The outcome that sends tasks not ``completed`` back through IMPLEMENT_LOOP.
OPEN_TASKS = "open-tasks"


def _loop_ran_for(ctx: PluginContext, keys: list[str]) -> bool:
    """Whether the task loop already ran again for exactly these open tasks and left
    them open: sending them to it once more would go round for ever."""
    sent = False
    for event in ctx.item.journal.events():
        name = event.get("event")
        if name == "tasks.reopened":
            sent = list(event.get("tasks") or []) == keys
        elif name == "foreach.items" and event.get("node") in TASK_LOOPS and sent:
            return True
    return False


def reopened(ctx: PluginContext) -> bool:
    """Whether tasks.yaml has tasks that are not ``completed`` after IMPLEMENT_LOOP ended
    (added by a person since): seed 003 enters INTEGRATE only once every task is, so
    they go through the loop first (once: tasks the loop left open go on to the DoD)."""
    keys = [t.id for t in open_tasks(ctx)]
    if not keys or _loop_ran_for(ctx, keys):
        return False
    ctx.record("tasks.reopened", tasks=keys, sync_now=True)
    return True


class ModeRoute(Action):
    """``full`` or ``lean``: where the two modes' paths part; ``open-tasks`` when
    tasks.yaml has tasks not ``completed`` that the task loop has not run."""

    name = "team-mode-route"
    outcomes = ("full", "lean", OPEN_TASKS)

    def run(self, ctx: PluginContext) -> str:
        if reopened(ctx):
            return OPEN_TASKS
        return "lean" if ctx.state.mode == "lean" else "full"


class StrategyRoute(Action):
    """IMPLEMENT_LOOP's path, from the strategy status.json on disk records."""

    name = "team-strategy-route"
    outcomes = ("per-batch", "single-final")

    def run(self, ctx: PluginContext) -> str:
        return strategy_on_disk(ctx)


class PromoteTask(Action):
    """Every gate of the task passed: tasks.yaml marks it ``completed`` (only phasegate does)."""

    name = "team-promote-task"
    outcomes = ("done",)

    def run(self, ctx: PluginContext) -> str:
        assert ctx.task is not None
        usable_tasks(ctx)
        if set_statuses(ctx.item_dir / "tasks.yaml", {ctx.task.key: "completed"}):
            ctx.record("task.completed", task=ctx.task.key)
        return "done"


class PromoteAll(Action):
    """After the combined (single-final) pass: every implemented task becomes ``completed``;
    ``open-tasks`` when a task is still not completed (added after the loop ended)."""

    name = "team-promote-all"
    outcomes = ("done", OPEN_TASKS)

    def run(self, ctx: PluginContext) -> str:
        usable_tasks(ctx)
        done = {t.id: "completed" for t in session_tasks(ctx) if t.status == "implemented"}
        if done and set_statuses(ctx.item_dir / "tasks.yaml", done):
            ctx.record("task.completed", tasks=sorted(done))
        return OPEN_TASKS if reopened(ctx) else "done"


class LeanReport(Action):
    """Lean mode has no Docs agent: phasegate writes report.md from the session's files."""

    name = "team-lean-report"
    outcomes = ("done",)

    def run(self, ctx: PluginContext) -> str:
        from phasegate.team.documents import read_acceptance

        tasks = session_tasks(ctx)
        criteria, _ = read_acceptance(ctx.item_dir / "acceptance.json")
        status = status_on_disk(ctx)
        issues = list(status.known_issues) if status is not None else []
        done = [f"- {t.id} {t.title}: {t.status}" for t in tasks] or ["- (no tasks)"]
        checks = [f"- {c.id} ({c.description}): `{c.check}`" for c in criteria]
        checks += [f"- {t.id}: `{cmd}`" for t in tasks for cmd in t.commands()]
        lines = [
            f"# Report: {ctx.item.name}",
            "",
            "## What was done",
            "",
            str(ctx.state.get("description") or "(no description)"),
            "",
            *done,
            "",
            "## How to run",
            "",
            "The change is in the repository's own files; run the project as before. "
            "See spec.md for what it does.",
            "",
            "## How to test",
            "",
            *(checks or ["- (no acceptance checks)"]),
            "",
            "## Known issues",
            "",
            *([f"- {i}" for i in issues] or ["None known."]),
            "",
        ]
        atomic_write_text(ctx.item_dir / "report.md", ctx.item.redactor.text("\n".join(lines)))
        return "done"


class DefinitionOfDone(Action):
    """The Definition of Done, checked in code (see :mod:`phasegate.team.done`)."""

    name = "team-definition-of-done"
    outcomes = ("met", "unmet")

    def run(self, ctx: PluginContext) -> str:
        ctx.item.flush()  # status.json on disk shows this very state before it is read
        missing = unmet(ctx)
        ctx.record("definition_of_done", met=not missing, missing=missing, sync_now=True)
        return "unmet" if missing else "met"


CHECK_STATUS = CheckStatus()
VERIFY_DECISION = VerifyDecision()
CORRECTION_ROUTE = CorrectionRoute()
MODE_ROUTE = ModeRoute()
STRATEGY_ROUTE = StrategyRoute()
PROMOTE_TASK = PromoteTask()
PROMOTE_ALL = PromoteAll()
LEAN_REPORT = LeanReport()
DEFINITION_OF_DONE = DefinitionOfDone()
