"""Build what each agent is shown: its instructions plus only the inputs its node needs."""

from __future__ import annotations

import glob
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phasegate.agents.base import PromptPart
from phasegate.engine.plugin_api import ContextProvider, PluginContext, plugin
from phasegate.engine.template_text import inside_any, plainly_inside_any, template_text
from phasegate.workflow.model import AgentNode
from phasegate.workflow.parts import PluginRef
from phasegate.workflow.prompts import CALL_VARIABLES, render

if TYPE_CHECKING:
    from phasegate.engine.run import Run

MAX_ARTIFACT_CHARS = 60_000
MAX_DIFF_CHARS = 120_000
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#: The ``kind`` of a feedback entry saying the last review could not be read (its
#: description: the reader's reason). It is no issue for the executor to address.
UNREADABLE = "unreadable-review"
#: The ``kind`` of a feedback entry holding what the reviewer wrote in that answer.
SAID = "said-in-unreadable-review"
#: The ``kind`` of an issue of the last review that could be read, fed back after it.
READABLE = "last-readable-review"


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n\n[... {len(text) - limit} more characters not shown ...]\n"


def read_file(path: Path | str) -> str | None:
    """The text of ``path``, or ``None`` if it is absent (or a folder).

    Read as a text file is read (UTF-8, undecodable bytes replaced, universal newlines),
    without the text layer's set-up, which costs more than reading a small file.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    chunks: list[bytes] = []
    try:
        while chunk := os.read(fd, _READ_CHUNK):
            chunks.append(chunk)
    except IsADirectoryError:
        return None
    finally:
        os.close(fd)
    text = b"".join(chunks).decode("utf-8", "replace")
    if "\r" in text:  # "\r\n" and a lone "\r" end a line, as in a file opened as text
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


_READ_CHUNK = 1 << 20


def read_inside(path: Path, roots: Sequence[Path]) -> str | None:
    """:func:`read_file`, unless ``path`` leads out of ``roots`` (a symlink): then a note
    saying so, never the outside file's content."""
    name = os.fspath(path)
    if plainly_inside_any(name, roots):  # the common case, without a stat or realpath
        return read_file(name)
    if os.path.exists(name) and not inside_any(name, roots):
        return f"(not shown: {path.name} leads outside the repository through a symlink)"
    return read_file(name)


class PromptFor:
    """The prompts of one agent node for one call (its values, parts, templates)."""

    def __init__(self, run: Run, path: str, node: AgentNode, ctx: PluginContext) -> None:
        self.run = run
        self.path = path
        self.node = node
        self.ctx = ctx
        self.item = run.item
        self.state = run.state
        self.roots = (run.item.repo, run.item.item_dir)
        #: The output names when none holds a placeholder (the same on every call).
        files = [o.file for o in node.outputs]
        self._plain_outputs = None if any("{{" in f for f in files) else files
        #: name -> ``item_dir / name``, for the item folder ``_paths_of``.
        self._paths: dict[str, Path] = {}
        self._paths_of: Path | None = None

    # -- shared ----------------------------------------------------------------------

    def fill(self, text: str) -> str:
        """``text`` with the node's placeholders filled (paths of outputs, the task...)."""
        if "{{" not in text:  # nothing to fill (a placeholder always starts so)
            return text
        return self._render(text, self.state.node(self.path).iteration, "")

    def item_path(self, name: str) -> Path:
        """``item_dir / name``: one path per name (asked several times a call; a path made
        once keeps its hash), made again should the item's folder move."""
        item_dir = self.item.item_dir
        if self._paths_of is not item_dir:
            self._paths_of, self._paths = item_dir, {}
        found = self._paths.get(name)
        if found is None:
            found = self._paths[name] = item_dir / name
        return found

    def outputs(self) -> list[str]:
        if self._plain_outputs is not None:
            return list(self._plain_outputs)
        return [self.fill(o.file) for o in self.node.outputs]

    def values(self, iteration: int, role: str) -> dict[str, object]:
        """Every placeholder's value for a call in ``iteration`` by ``role``."""
        found = _Values(self._value_of(iteration, role))
        return {name: found[name] for name in _VALUE_NAMES}

    def _render(self, text: str, iteration: int, role: str) -> str:
        """``text`` filled from :meth:`values`, computing only the values it names."""
        if "{{" not in text:
            return text
        return render(text, _Values(self._value_of(iteration, role)))

    def _value_of(self, iteration: int, role: str) -> Callable[[str], object]:
        def value(name: str) -> object:
            task = self.ctx.task
            if name == "item":
                return self.item.name
            if name == "description":
                return self.state.get("description", "")
            if name == "workflow":
                return self.item.workflow.name
            if name in ("phase", "label"):
                return self.run.label(self.path)
            if name == "next":
                from phasegate.engine.status import next_for_label

                return next_for_label(self.item.workflow, self.state, self.run.label(self.path))
            if name == "command":
                return self.run.options.command or ""
            if name == "node":
                return self.node.id
            if name == "mode":
                return self.state.mode
            if name == "artifact":
                return self._artifact()
            if name == "artifact_path":
                artifact = self._artifact()
                return self.run.rel(self.path, self.item_path(artifact)) if artifact else ""
            if name == "item_dir":
                return self.run.rel(self.path, self.item.item_dir)
            if name == "iteration":
                return iteration
            if name == "max_iterations":
                return self.run.limit(self.path, self.node)
            if name == "role":
                return role
            if name == "task":
                return task.key if task else ""
            if name == "task_title":
                return task.title if task else ""
            raise KeyError(name)

        return value

    def _artifact(self) -> str:
        """The first output's name (its ``{{ task }}`` filled), or ``""``."""
        if not self.node.outputs:
            return ""
        name = self.node.outputs[0].file
        if "{{" not in name:  # nothing to fill (a placeholder always starts so)
            return name
        task = self.ctx.task
        return render(name, {"task": task.key if task else ""})

    def _instructions(self, template: str, iteration: int, role: str) -> str:
        text = template_text(self.item.loaded.template(template))
        return self._render(text, iteration, role)

    def _work_item_part(self, iteration: int) -> PromptPart:
        node = self.node
        lines = [
            f"- Work item: {self.item.name} (workflow {self.item.workflow.name}, "
            f"mode {self.state.mode})",
            f"- Request: {self.state.get('description') or '(none given)'}",
            f"- Phase: {self.run.label(self.path)} - {node.description}".rstrip(" -"),
            f"- Item folder: {self.run.rel(self.path, self.item.item_dir)}",
            f"- Review iteration: {iteration} of at most {self.run.limit(self.path, node)}",
        ]
        for name in self.outputs():
            where = self.run.rel(self.path, self.item_path(name))
            lines.append(f"- Artifact to produce: {where}")
        task = self.ctx.task
        if task is not None:
            lines.append(f"- Task: {task.key}" + (f": {task.title}" if task.title else ""))
        return PromptPart("Work item", "\n".join(lines))

    def _inputs(self, skip: Sequence[str] = ()) -> list[PromptPart]:
        parts: list[PromptPart] = []
        for spec in self.node.inputs:
            pattern = self.fill(spec.file)
            for path in _expand(self.item.item_dir, pattern):
                rel = path.relative_to(self.item.item_dir).as_posix()
                if rel in skip:
                    continue
                text = read_inside(path, self.roots)
                if text is None:
                    continue
                if spec.title:
                    title = f"{spec.title}: {self.run.rel(self.path, path)}"
                else:
                    title = f"Input: {rel}"
                parts.append(PromptPart(title, clip(text, MAX_ARTIFACT_CHARS)))
        return parts

    def _context(self, refs: Sequence[PluginRef], role: str) -> list[PromptPart]:
        parts: list[PromptPart] = []
        for ref in refs:
            provider: ContextProvider = plugin("context", ref.plugin)
            ctx = self.run.context(self.path, self.node, self.ctx.task, ref.with_)
            parts.extend(provider.parts(ctx, role))
        return parts

    def _incoming(self) -> list[PromptPart]:
        incoming = self.state.node(self.path).get("incoming") or {}
        issues = incoming.get("issues") or []
        if not issues:
            return []
        lines = [f"{incoming.get('from', 'The previous step')} reported:", ""]
        lines += [f"- {_issue_line(i)}" for i in issues]
        return [PromptPart("Feedback to address", "\n".join(lines))]

    def _finish(
        self, instructions: str, parts: list[PromptPart]
    ) -> tuple[str, tuple[PromptPart, ...]]:
        redact = self.item.redactor.text
        return redact(instructions), tuple(PromptPart(p.title, redact(p.body)) for p in parts)

    # -- executor ----------------------------------------------------------------------

    def executor(
        self, iteration: int, feedback: list[dict[str, Any]], role: str | None = None
    ) -> tuple[str, tuple[PromptPart, ...]]:
        """The executor's prompt (``role``: the agent chosen to play ``executor``)."""
        node = self.node
        assert node.executor is not None
        role = role or node.executor
        revising = bool(feedback) or iteration > 1 or node.start_with == "review"
        template = (
            node.revise_prompt
            if revising and node.revise_prompt
            else node.prompt or f"{node.id}.md"
        )
        instructions = self._instructions(template, iteration, role)
        parts = [self._work_item_part(iteration), *self._inputs()]
        parts += self._context(node.context, role)
        if iteration == 1 or not feedback:
            parts += self._incoming()
        if feedback:
            if any(i.get("kind") == UNREADABLE for i in feedback):
                lines = _unreadable_feedback(feedback)
            else:
                lines = ["The previous iteration was not approved. Address every issue below:", ""]
                lines += [f"- {_issue_line(i)}" for i in feedback]
            parts.append(PromptPart("Feedback to address", "\n".join(lines)))
            for name in self.outputs():
                current = read_inside(self.item_path(name), self.roots)
                if current is not None:
                    parts.append(
                        PromptPart(f"Current {name} (revise it)", clip(current, MAX_ARTIFACT_CHARS))
                    )
        return self._finish(instructions, parts)

    # -- reviewer ----------------------------------------------------------------------

    def reviewer(
        self,
        role: str,
        template: str,
        iteration: int,
        expectations: str,
        previous_issues: list[dict[str, Any]],
        answer: PromptPart | None,
        focus: Sequence[str] = (),
        unreadable: str | None = None,
    ) -> tuple[str, tuple[PromptPart, ...]]:
        """The reviewer's prompt (``unreadable``: why its previous answer could not be read;
        ``previous_issues`` are then those of its last review that could be read)."""
        node = self.node
        instructions = self._instructions(template, iteration, role)
        parts = [self._work_item_part(iteration)]
        if node.previous:
            previous = read_inside(self.item_path(node.previous), self.roots)
            parts.append(
                PromptPart(
                    f"Previous artifact: {node.previous}",
                    clip(previous, MAX_ARTIFACT_CHARS) if previous is not None else "(none)",
                )
            )
        outputs = self.outputs()
        for name in outputs:
            current = read_inside(self.item_path(name), self.roots) or ""
            parts.append(PromptPart(f"Current artifact: {name}", clip(current, MAX_ARTIFACT_CHARS)))
        parts += self._inputs(skip=[*outputs, *([node.previous] if node.previous else [])])
        parts += self._context(node.context, role)
        if node.reviews_code:
            changes = implementation_changes(self.run, self.path)
            parts.append(PromptPart("Implementation changes", changes or "(no changes found)"))
        if unreadable is not None:
            parts.append(
                PromptPart(
                    "Your previous answer",
                    f"Your previous answer could not be read, so it did not count: {unreadable} "
                    "Answer this time exactly in the form asked for.",
                )
            )
        if previous_issues:
            title, said = (
                ("an earlier iteration", "The last review that could be read did not approve")
                if unreadable is not None
                else ("the previous iteration", "The previous iteration was not approved")
            )
            lines = [
                f"{said} for these issues; check that each was addressed:",
                "",
                *[f"- {_issue_line(i)}" for i in previous_issues],
            ]
            parts.append(PromptPart(f"Issues raised in {title}", "\n".join(lines)))
        if focus:
            parts.append(PromptPart("Focus areas", ", ".join(focus)))
        parts.append(PromptPart("What the next phase needs", expectations or "(not stated)"))
        if answer is not None:
            parts.append(answer)
        return self._finish(instructions, parts)


#: The names :meth:`PromptFor.values` fills, in the order it lists them.
#: The names a call's values are computed for: a template may use the node's ``label``,
#: its ``next`` command and the ``command`` being run too (not the names of outputs).
_VALUE_NAMES = (*CALL_VARIABLES, "label", "next", "command")


class _Values(Mapping[str, object]):
    """The values of one render, each computed when a placeholder first names it."""

    def __init__(self, compute: Callable[[str], object]) -> None:
        self._compute = compute
        self._known: dict[str, object] = {}

    def __getitem__(self, name: str) -> object:
        if name in self._known:
            return self._known[name]
        if name not in _VALUE_NAMES:
            raise KeyError(name)
        found = self._known[name] = self._compute(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_VALUE_NAMES)

    def __len__(self) -> int:
        return len(_VALUE_NAMES)


def _unreadable_feedback(feedback: list[dict[str, Any]]) -> list[str]:
    """The feedback after a review that could not be read: said so, not as an issue (the
    executor cannot mend the reviewer's answer), then the issues that still stand."""
    other = [i for i in feedback if not i.get("kind")]
    readable = [i for i in feedback if i.get("kind") == READABLE]
    said = [i for i in feedback if i.get("kind") == SAID]
    lines: list[str] = []
    if other:
        lines += ["Address every issue below:", "", *[f"- {_issue_line(i)}" for i in other], ""]
    lines.append(
        "The last review could not be read as a verdict, so the work was not approved. "
        "That is a fault of the reviewer's answer, not an issue in your work for you to fix."
    )
    if readable:
        lines += [
            "",
            "The last review that could be read raised these issues; address every one "
            "not yet addressed:",
            "",
            *[f"- {_issue_line(i)}" for i in readable],
        ]
    if said:
        lines += [
            "",
            "What the reviewer wrote in the answer that could not be read (address any "
            "problem it names):",
            "",
            *[f"- {_issue_line(i)}" for i in said],
        ]
    if not other and not readable and not said:
        lines += [
            "",
            "No issue was raised that could be read: check your work against the request "
            "and the inputs, and improve it where it falls short.",
        ]
    return lines


def _issue_line(issue: dict[str, Any]) -> str:
    where = f" (at {issue['location']})" if issue.get("location") else ""
    return f"[{issue.get('severity', 'blocker')}] {issue.get('description', '')}{where}"


def _expand(root: Path, pattern: str) -> list[Path]:
    if not any(c in pattern for c in "*?["):
        return [root / pattern]
    found = sorted(Path(p) for p in glob.glob(str(root / pattern), recursive=True))
    return [p for p in found if p.is_file()]


def implementation_changes(run: Run, path: str = "") -> str:
    """The work tree's changes since the item began (diff plus new files), item folder excluded.

    Inside a parallel item, its worktree's changes since the item started.
    """
    item, state = run.item, run.state
    workdir = run.workdir(path)
    excludes = [":(exclude).phasegate"]
    item_dir = run.rel(path, item.item_dir)
    if not Path(item_dir).is_absolute():  # a pathspec outside the worktree fails the diff
        excludes.append(f":(exclude){item_dir}")
    space = run.workspace(path)
    base = (space.base if space is not None else None) or state.base_commit or EMPTY_TREE
    # Files already changed before the implementation began (a workflow's action recorded
    # them with their digests) and unchanged since are no implementation change.
    before = state.data.get(PREEXISTING_KEY) if space is None else None
    for name, digest in sorted((before or {}).items()):
        if file_digest(workdir / name) == digest:
            excludes.append(f":(exclude,literal){name}")
    diff = _git(workdir, ["diff", "--no-color", "--no-ext-diff", base, "--", ".", *excludes])
    untracked = _git(workdir, ["ls-files", "--others", "--exclude-standard", "--", ".", *excludes])
    sections: list[str] = []
    if diff.strip():
        sections.append("```diff\n" + diff.rstrip() + "\n```")
    for name in [n for n in untracked.splitlines() if n.strip()]:
        content = read_inside(workdir / name, [workdir])
        if content is not None:
            sections.append(f"New file `{name}`:\n\n```\n{content.rstrip()}\n```")
    return item.redactor.text(clip("\n\n".join(sections), MAX_DIFF_CHARS))


#: The state ``data`` key of the files changed in the work tree before the implementation
#: began: ``{path relative to the repository: file_digest() then}``.
PREEXISTING_KEY = "preexisting_changes"


def file_digest(path: Path) -> str | None:
    """The SHA-256 of a file's bytes, ``None`` when it is absent or unreadable."""
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _git(workdir: Path, args: list[str]) -> str:
    out = subprocess.run(
        ["git", "-C", str(workdir), *args],
        capture_output=True,
        text=True,
        check=False,
        errors="replace",
    )
    return out.stdout if out.returncode == 0 else ""
