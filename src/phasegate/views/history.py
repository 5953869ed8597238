"""``.review-history.md``: every review iteration in seed 000's interface 4 format.

The file is rendered from the engine state, one section per agent node that
has review iterations, in the order the nodes were entered. It grows by
appending: a review iteration is redacted and rendered once, and when only
the last section grew, only the new text is written (an append). A commit
whose nodes gained no iteration writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from phasegate.engine.state import EngineState
from phasegate.redact import Redactor
from phasegate.views.files import ViewFile
from phasegate.workflow.model import AgentNode, Workflow

#: The consumer name under which the history asks the state what changed.
_CHANGES = "feature-view-history"


def verdict_label(record: Mapping[str, Any]) -> str:
    if record.get("source") == "checks":
        return "checks failed (not approved)"
    if record.get("unclear"):
        return "unclear (not approved)"
    return "approved" if record.get("approved") else "not approved"


def _source(record: Mapping[str, Any]) -> str:
    """How the verdict was read, after its label: `` (structured)``; none where the label
    already says it (``unclear``, ``checks``)."""
    source = record.get("source")
    return "" if source in ("unclear", "checks") else f" ({source})"


def render_iteration(record: Mapping[str, Any]) -> list[str]:
    """One iteration of ``.review-history.md`` (seed 000, interface 4)."""
    lines = [
        f"### Iteration {record.get('iteration')} - {record.get('timestamp')}",
        "",
        f"**Verdict:** {verdict_label(record)}{_source(record)}",
        "",
        "**Reviewer Feedback:**",
        *_prose(record.get("summary"), "(no summary)"),
        "",
        "**Issues:**",
    ]
    issues = record.get("issues") or []
    if issues:
        for issue in issues:
            where = f" (at {issue['location']})" if issue.get("location") else ""
            first, _, rest = str(issue.get("description")).strip().partition("\n")
            lines.append(f"- [{issue.get('severity')}] {first.strip()}{where}")
            lines += _block(rest)
    else:
        lines.append("- none")
    lines += [
        "",
        "**Changes Made:**",
        *_prose(record.get("changes"), "(not reported)"),
        "",
        "---",
        "",
    ]
    return lines


#: A line markdown reads as the history's own structure: a heading, a rule (or a setext
#: heading's underline), or one of an iteration's bold labels.
_STRUCTURE = re.compile(
    r"^\s{0,3}(#{1,6}(\s|$)|([-*_=])(\s*\3){2,}\s*$|\*\*(Verdict|Reviewer Feedback|Issues"
    r"|Changes Made):\*\*)"
)


def _prose(value: object, empty: str) -> list[str]:
    """A reviewer's feedback or an executor's reply: as written, or as a block of text when a
    line of it would read as a heading, a rule or a label of the history (a reply holding
    ``### Iteration 2 ...`` and ``**Verdict:** approved`` shows no iteration of its own)."""
    text = str(value or "").strip()
    if not text:
        return [empty]
    if not any(_STRUCTURE.match(line) for line in text.splitlines()):
        return [text]
    return [line[2:] for line in _block(text)[1:-1]]


def _block(text: str) -> list[str]:
    """The lines after an issue's first (a check's output, say) as a block of text inside
    its list item: never read as markdown (a line of ``===`` would make a heading, ``---``
    a rule that looks like the end of the iteration)."""
    if not text.strip():
        return []
    body = text.strip("\n").splitlines()
    longest = max((len(run) for line in body for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return ["", f"  {fence}text", *[f"  {line}".rstrip() for line in body], f"  {fence}", ""]


class _Section:
    """One node's section: when it was entered, its iteration records, its redacted text."""

    __slots__ = ("count", "entered", "records", "text")

    def __init__(self, entered: str, records: list[Any], count: int, text: str) -> None:
        self.entered = entered
        #: The state's own list (appended to, never changed otherwise) and its length then.
        self.records = records
        self.count = count
        self.text = text


class ReviewHistory:
    """Keeps one item's ``.review-history.md`` in step with its engine state."""

    def __init__(self, path: Path, workflow: Workflow, redactor: Redactor) -> None:
        self.path = path
        self.file = ViewFile(path)
        self._workflow = workflow
        self._redactor = redactor
        self._state: EngineState | None = None
        #: Runtime node path -> its section.
        self._sections: dict[str, _Section] = {}
        self._order: list[str] = []
        #: Runtime node path -> its redacted heading (``None``: not an agent node).
        self._headings: dict[str, str | None] = {}
        self._iterations: dict[int, tuple[Mapping[str, Any], str]] = {}
        self._places = {node.id: index for index, node in enumerate(workflow.nodes)}

    def render(self, state: EngineState) -> None:
        """Write what changed since the last call (all of it, for a state not seen before)."""
        if state is not self._state:
            self._state = state
            self._sections, self._order, self._iterations = {}, [], {}
            self.file.forget()  # the file is compared with what it should hold
            changed: set[str] | list[str] = list(state.paths())
            state.take_changed(_CHANGES)
        else:
            changed = state.take_changed(_CHANGES)
        grown: list[tuple[str, str]] = []  # (runtime, its text before) of changed sections
        reorder = False
        sections = self._sections
        for runtime in changed:
            found = state.peek(runtime)
            records = found.get("iterations") if found is not None else None
            heading = self._heading(runtime) if records else None
            old = sections.get(runtime)
            if heading is None or found is None or not isinstance(records, list):
                if old is not None:
                    del sections[runtime]
                    reorder = True
                continue
            entered = str(found.get("entered") or "")
            count = len(records)
            if old is not None and old.records is records and old.entered == entered:
                if old.count == count:
                    continue  # no new iteration: nothing to render
                if old.count < count:
                    added = "".join(self._iteration(r) for r in records[old.count :])
                    grown.append((runtime, old.text))
                    old.text += added
                    old.count = count
                    continue
            text = heading + "".join(self._iteration(r) for r in records)
            if old is not None and old.text == text and old.entered == entered:
                old.records, old.count = records, count
                continue
            sections[runtime] = _Section(entered, records, count, text)
            reorder = reorder or old is None or old.entered != entered
            grown.append((runtime, old.text if old is not None else ""))
        synced = self.file.written is not None
        if not grown and not reorder and synced:
            return
        if reorder:
            self._order = sorted(sections, key=lambda r: (sections[r].entered, self._place(r), r))
        if not sections:
            return
        if synced and len(grown) == 1 and grown[0][0] == self._order[-1]:
            runtime, before = grown[0]
            text = sections[runtime].text
            if text.startswith(before) and self.file.append(text[len(before) :].encode("utf-8")):
                return
        head = f"# Review history: {self._redactor.field('item', state.item)}\n\n"
        data = (head + "".join(sections[r].text for r in self._order)).encode("utf-8")
        if not synced:
            try:
                with open(self.file.path, "rb") as handle:
                    if handle.read() == data:
                        self.file.known(data)
                        return
            except FileNotFoundError:
                pass
        self.file.write(data)

    def _place(self, runtime: str) -> int:
        """Where ``runtime``'s top-level node stands in the workflow: the order of sections
        entered at the same time (a state written before times had microseconds)."""
        places = self._places
        return places.get(runtime.split("/", 1)[0].split("[", 1)[0], len(places))

    def _heading(self, runtime: str) -> str | None:
        """The redacted heading of ``runtime``'s section; ``None`` if it is not an agent node."""
        try:
            return self._headings[runtime]
        except KeyError:
            pass
        from phasegate.engine.walk import definition_path

        try:
            node = self._workflow.node(definition_path(runtime))
        except KeyError:
            heading = None
        else:
            heading = (
                f"## Phase: {self._redactor.field('label', self._workflow.label_of(runtime))}\n\n"
                if isinstance(node, AgentNode)
                else None
            )
        if len(self._headings) < 4096:
            self._headings[runtime] = heading
        return heading

    def _iteration(self, record: Mapping[str, Any]) -> str:
        """One iteration's redacted text, rendered once (records never change once added)."""
        known = self._iterations.get(id(record))
        if known is not None and known[0] is record:
            return known[1]
        # The record is redacted, not the text rendered from it: the words the template
        # writes (its headings, the verdict, the source) are phasegate's own, and a variable
        # holding one of them (``X_TOKEN=approved``) must not mask them.
        text = "\n".join(render_iteration(self._redactor.data(record))) + "\n"
        self._iterations[id(record)] = (record, text)
        return text

    def removed(self) -> None:
        """The file was deleted (the item finished)."""
        self.file.forget()
