"""The ``change`` workflow's plug-ins: what seed 002 needs that is its own.

Parsers (the specs proposal.md lists, tasks.md's groups), context for the
agents' prompts (the living specs, the group of tasks at hand, the open
findings), actions (base snapshots, tasks.md's frontmatter, the challenge's
review block in proposal.md, the spec merge of ``archive``, in
:mod:`phasegate.change.archive`) and predicates
(whether only minor issues are left). The loop, its limits, verdict reading,
decisions and resume are the engine's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from phasegate.agents.base import PromptPart
from phasegate.change.archive import Archive
from phasegate.change.frontmatter import split_frontmatter
from phasegate.change.paths import paths_of
from phasegate.change.reader import RECORDED_EVENT, review_digest
from phasegate.change.specfiles import snapshot_bases, spec_entries
from phasegate.change.tasks import ensure_change_id, read_tasks
from phasegate.engine.nodes.agent_outcome import reviewer_words
from phasegate.engine.plugin_api import (
    Action,
    ContextProvider,
    ItemParser,
    Parsed,
    PluginContext,
    Predicate,
    Task,
)
from phasegate.engine.prompting import MAX_ARTIFACT_CHARS, clip, read_file
from phasegate.errors import BlockedError
from phasegate.state.atomic import atomic_write_text

# -- parsers ---------------------------------------------------------------------------


class SpecsParser(ItemParser):
    """The spec files proposal.md's frontmatter lists, each with its dependencies."""

    name = "change-specs"

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        text = read_file(path) if path is not None else None
        entries, warnings = spec_entries(text or "")
        if entries is None:
            notes = ("proposal.md lists no specs: no spec is written",)
            return Parsed((), "frontmatter", (*warnings, *notes))
        kept, cycles = _break_cycles(entries)
        items = tuple(Task(key=name, title=name, deps=tuple(deps)) for name, deps in kept)
        return Parsed(items, "frontmatter", (*warnings, *cycles))

    def count(self, path: Path) -> int:
        entries, _ = spec_entries(read_file(path) or "")
        return len(entries or ())

    def problems(self, ctx: PluginContext, path: Path) -> list[str]:
        # Unreadable frontmatter would read as "no specs": the plan would go on without them.
        _, _, problem = split_frontmatter(read_file(path) or "")
        return [f"{problem}; the specs list is read from it"] if problem else []


def _break_cycles(
    entries: Sequence[tuple[str, Sequence[str]]],
) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """``entries`` without the dependencies that close a cycle, and a note for each.

    The specs are visited in the listed order, each after what it depends on; a
    dependency on a spec still being visited would close a cycle: it is dropped, so the
    listed order decides which of the specs in the cycle is written first.
    """
    depends = {name: list(deps) for name, deps in entries}
    kept: dict[str, list[str]] = {name: [] for name, _ in entries}
    notes: list[str] = []
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in done:
            return
        trail = [*trail, name]
        for dep in depends[name]:
            if dep not in depends:
                continue
            if dep in trail:
                cycle = " -> ".join([*trail[trail.index(dep) :], dep])
                notes.append(
                    f"proposal.md: the specs depend on each other in a cycle: {cycle}; "
                    f"the cycle is broken at the listed order ({name}'s dependency on "
                    f"{dep} is ignored)"
                )
                continue
            kept[name].append(dep)
            visit(dep, trail)
        done.add(name)

    for name, _ in entries:
        visit(name, [])
    return [(name, kept[name]) for name, _ in entries], notes


class TaskGroupsParser(ItemParser):
    """tasks.md's groups of tasks (layers, or document sections); done when all their tasks are."""

    name = "change-task-groups"
    needs_file = True

    def parse(self, ctx: PluginContext, path: Path | None) -> Parsed:
        assert path is not None
        tasks = read_tasks(path)
        if tasks.task_count == 0:
            raise BlockedError(
                f"{paths_of(ctx).rel(path)} lists no tasks; add them "
                "(under headings such as '## 1. Data Layer') and run impl again"
            )
        ctx.record(
            "tasks.read",
            change_id=tasks.change_id,
            change_id_from=tasks.change_id_from,
            order=tasks.order,
            layers={layer.key: len(layer.tasks) for layer in tasks.layers},
        )
        items = tuple(
            Task(
                key=layer.key,
                title=layer.title,
                done=not layer.open_tasks,
                data={
                    "headings": list(layer.headings),
                    "tasks": [{"text": t.text, "line": t.line} for t in layer.open_tasks],
                },
            )
            for layer in tasks.layers
        )
        return Parsed(items, tasks.order)

    def count(self, path: Path) -> int:
        return read_tasks(path).task_count


class TasksParser(TaskGroupsParser):
    """tasks.md as a whole: how many tasks it lists (the tasks step's postcondition)."""

    name = "change-tasks"


# -- prompt context ------------------------------------------------------------------------


class LivingIndex(ContextProvider):
    """The living specs there are (an agent reads those the change touches)."""

    name = "change-living-index"

    def parts(self, ctx: PluginContext, role: str) -> Sequence[PromptPart]:
        change = paths_of(ctx)
        root = change.living_specs_dir
        names = (
            sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
            if root.is_dir()
            else []
        )
        body = "\n".join(f"- {change.rel(root / n)}" for n in names) or "(none yet)"
        return [PromptPart("Living specs (read those this change touches)", body)]


class LivingSpec(ContextProvider):
    """The living version of the spec being written (its requirements are kept word for word)."""

    name = "change-living-spec"

    def parts(self, ctx: PluginContext, role: str) -> Sequence[PromptPart]:
        if ctx.task is None:
            return []
        change = paths_of(ctx)
        path = change.living_specs_dir / ctx.task.key
        text = read_file(path)
        body = clip(text, MAX_ARTIFACT_CHARS) if text is not None else "(does not exist yet)"
        return [PromptPart(f"Living spec now: {change.rel(path)}", body)]


class GroupTasks(ContextProvider):
    """The open tasks of the group (layer) being implemented, and the groups already done."""

    name = "change-group-tasks"

    def parts(self, ctx: PluginContext, role: str) -> Sequence[PromptPart]:
        if ctx.task is None:
            return []
        data = ctx.task.data
        tasks = "\n".join(
            f"- [ ] {t['text']} (tasks.md line {t['line']})" for t in data.get("tasks") or []
        )
        headings = ", ".join(data.get("headings") or []) or ctx.task.title
        foreach = ctx.state.peek(ctx.path.split("[", 1)[0])
        done: list[str] = []
        if foreach is not None:
            items = foreach.get("items") or {}
            done = [
                k
                for k in foreach.get("order") or []
                if items.get(k, {}).get("status") in ("done", "skipped")
            ]
        return [
            PromptPart(
                f"Your layer now: {ctx.task.title}",
                f"Work only on these tasks of tasks.md ({headings}):\n\n{tasks}\n\n"
                f"Layers already done: {', '.join(done) or 'none'}.",
            )
        ]


class OpenFindings(ContextProvider):
    """The findings of the last review, when implementing again after one."""

    name = "change-open-findings"

    def parts(self, ctx: PluginContext, role: str) -> Sequence[PromptPart]:
        review = ctx.state.peek("review")
        findings = list(review.get("findings") or []) if review is not None else []
        if not findings:
            return []
        lines = [_finding_line(f) for f in findings]
        return [PromptPart("Open findings of the last review (fix them too)", "\n".join(lines))]


def _finding_line(finding: dict[str, Any]) -> str:
    return (
        f"- [{finding.get('severity')}] {finding.get('file')}:{finding.get('line')}: "
        f"{finding.get('description')}"
    )


# -- actions -------------------------------------------------------------------------------


class SnapshotBases(Action):
    """Copy aside the living version of each spec the change newly writes (the merge base)."""

    name = "change-snapshot-bases"

    def run(self, ctx: PluginContext) -> str:
        bases = ctx.state.data.setdefault("spec_bases", {})
        for name in snapshot_bases(paths_of(ctx), bases):
            ctx.record("spec.base", spec=name, existed=bases[name])
        return "done"


class TasksFrontmatter(Action):
    """WF-R3 step 3: tasks.md's frontmatter carries ``change_id`` (code makes sure)."""

    name = "change-tasks-frontmatter"

    def run(self, ctx: PluginContext) -> str:
        path = paths_of(ctx).tasks_path
        if path.is_file():
            fixed = ensure_change_id(path, ctx.item.name)
            if fixed is not None:
                ctx.record("tasks.frontmatter_fixed", reason=fixed, change_id=ctx.item.name)
        return "done"


#: The heading's verdict of a challenge whose answer could not be read.
UNREAD_HEADING = "could not be read (not approved)"


def block_marker(round_id: str) -> str:
    return f"<!-- phasegate:challenge {round_id} -->"


class ChallengeBlock(Action):
    """WF-R2's note: the challenge's verdict is appended to proposal.md as a review block.

    A NEEDS_REVISION verdict also records the seed's ``proposed -> proposed`` move.
    """

    name = "change-challenge-block"

    def run(self, ctx: PluginContext) -> str:
        verdict = ctx.verdict
        if verdict is None:
            return "done"
        node = ctx.state.node(ctx.path)
        iteration = node.iteration
        word = verdict.word if verdict.word in ("APPROVED", "REJECTED") else "NEEDS_REVISION"
        heading = UNREAD_HEADING if verdict.unclear else word
        lines = [
            block_marker(ctx.round),
            f"## Challenge review {iteration}: {heading}",
            "",
            f"*challenger, {_now()}*",
            "",
            verdict.summary.strip() or "(no summary)",
        ]
        if verdict.unclear:
            # Why it could not be read is phasegate's, not an issue the challenger named:
            # only what the challenger wrote is kept, as its words.
            found = [{"description": i.description} for i in verdict.issues]
            for said in reviewer_words(found, verdict.summary):
                text = " ".join(str(said["description"]).split())
                lines += ["", f"The challenger wrote: {text}"]
        elif verdict.issues:
            lines.append("")
            for issue in verdict.issues:
                where = f" (at {issue.location})" if issue.location else ""
                text = " ".join(issue.description.split())
                severity = issue.severity if issue.severity in ("high", "medium", "low") else "high"
                lines.append(f"- **{severity}**: {text}{where}")
        lines.append("<!-- /phasegate:challenge -->")
        path = paths_of(ctx).proposal_path
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        if block_marker(ctx.round) not in text:  # a resumed run already wrote it
            sep = (
                ""
                if not text or text.endswith("\n\n")
                else ("\n" if text.endswith("\n") else "\n\n")
            )
            block = ctx.item.redactor.text("\n".join(lines) + "\n")
            atomic_write_text(path, text + sep + block)
        if verdict.unclear:
            _self_move(ctx, "proposed", f"challenge {iteration} could not be read")
        elif word == "NEEDS_REVISION":
            _self_move(ctx, "proposed", f"challenge {iteration} NEEDS_REVISION")
        return "done"


class ReviewVerdictAction(Action):
    """The implementation review's findings kept for the view, the review journaled with
    its round and content (so an earlier REVIEW.md is filed under the round phasegate
    recorded); NEEDS_FIX records ``implementing -> implementing``."""

    name = "change-review-verdict"

    def run(self, ctx: PluginContext) -> str:
        verdict = ctx.verdict
        if verdict is None:
            return "done"
        node = ctx.state.node(ctx.path)
        node["findings"] = list(verdict.data.get("findings") or [])
        path = paths_of(ctx).review_path
        if path.is_file():
            ctx.record(
                RECORDED_EVENT,
                round=str(verdict.data.get("round") or ctx.round),
                verdict=verdict.word,
                sha256=review_digest(path.read_bytes()),
            )
        if verdict.word == "NEEDS_FIX":
            _self_move(ctx, "implementing", f"review {node.iteration} NEEDS_FIX")
        return "done"


def _self_move(ctx: PluginContext, phase: str, cause: str) -> None:
    key = f"{ctx.path}#{ctx.round}"
    history = ctx.state.d.setdefault("history", [])
    if any(h.get("key") == key for h in history):
        return
    history.append({"at": _now(), "from": phase, "to": phase, "cause": cause, "key": key})


def _now() -> str:
    from phasegate.state.journal import utc_now

    return utc_now()


# -- predicates ----------------------------------------------------------------------------


def _last_challenge(ctx: PluginContext) -> dict[str, Any] | None:
    tasks = ctx.state.peek("tasks")
    records = list(tasks.get("iterations") or []) if tasks is not None else []
    return records[-1] if records else None


class MinorIssuesOnly(Predicate):
    """Seed 002: at the planning limit only a plan with minor issues left may be implemented."""

    name = "change-minor-issues"

    def __call__(self, ctx: PluginContext) -> bool:
        last = _last_challenge(ctx)
        if last is None:
            return False
        return not any(
            str(i.get("severity")).lower() in ("high", "blocker") for i in last.get("issues") or []
        )


class LimitDetail(Predicate):
    """The planning-limit question: rounds used, which issues are left, the choices."""

    name = "change-limit-detail"

    def __call__(self, ctx: PluginContext) -> str:
        tasks = ctx.state.peek("tasks")
        used = tasks.iteration if tasks is not None else 0
        extra = int(tasks.get("extra_budget", 0)) if tasks is not None else 0
        limit = int(ctx.state.data.get("planning_iterations") or used) + extra
        head = (
            f"{ctx.item.name}: {used} challenge round(s) used (limit {limit}) and the plan "
            "still NEEDS_REVISION with"
        )
        if MinorIssuesOnly()(ctx):
            return (
                f"{head} only minor issues. Implement it as it is, view the review, or "
                "continue revising?"
            )
        return f"{head} high-severity issues. View the review, or continue revising?"


SPECS = SpecsParser()
TASK_GROUPS = TaskGroupsParser()
TASKS = TasksParser()
LIVING_INDEX = LivingIndex()
LIVING_SPEC = LivingSpec()
GROUP_TASKS = GroupTasks()
OPEN_FINDINGS = OpenFindings()
SNAPSHOT_BASES = SnapshotBases()
TASKS_FRONTMATTER = TasksFrontmatter()
CHALLENGE_BLOCK = ChallengeBlock()
REVIEW_VERDICT = ReviewVerdictAction()
ARCHIVE = Archive()
MINOR_ISSUES = MinorIssuesOnly()
LIMIT_DETAIL = LimitDetail()
