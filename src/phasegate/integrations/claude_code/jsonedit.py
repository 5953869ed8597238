"""Edit a JSON document as text, so that everything not edited keeps its exact bytes.

``phasegate install`` adds entries to files people write by hand
(``.claude/settings.json``, ``.mcp.json``). Re-serialising them would
reformat the user's entries; instead the document is parsed into spans
(the offsets of every value) and entries are inserted or cut out as text.
An insertion copies the separator its container already uses, and a removal
cuts exactly what the matching insertion added, so install followed by
uninstall gives back the original bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

WHITESPACE = " \t\r\n"


@dataclass
class Node:
    """A JSON value at ``text[start:end]``; containers keep their children's spans.

    ``heads`` are where each child begins: its key for an object member,
    the value itself in an array.
    """

    start: int
    end: int
    kind: str  # "object", "array" or "scalar"
    keys: list[str] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        """The value of member ``key`` (the last one, as ``json.loads`` keeps it)."""
        for name, child in reversed(list(zip(self.keys, self.children, strict=True))):
            if name == key:
                return child
        return None

    def index(self, key: str) -> int:
        """The position of member ``key`` among the children (the last one wins)."""
        return len(self.keys) - 1 - self.keys[::-1].index(key)


class _Parser:
    """A span parser for text already known to be valid JSON."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in WHITESPACE:
            self.pos += 1

    def string_end(self, start: int) -> int:
        index = start + 1
        while self.text[index] != '"':
            index += 2 if self.text[index] == "\\" else 1
        return index + 1

    def value(self) -> Node:
        self.skip()
        start = self.pos
        char = self.text[start]
        if char not in "{[":
            if char == '"':
                self.pos = self.string_end(start)
            else:
                while self.pos < len(self.text) and self.text[self.pos] not in WHITESPACE + ",]}":
                    self.pos += 1
            return Node(start, self.pos, "scalar")
        node = Node(start, start, "object" if char == "{" else "array")
        closing = "}" if char == "{" else "]"
        self.pos += 1
        self.skip()
        while self.text[self.pos] != closing:
            node.heads.append(self.pos)
            if node.kind == "object":
                key_end = self.string_end(self.pos)
                node.keys.append(json.loads(self.text[self.pos : key_end]))
                self.pos = key_end
                self.skip()
                self.pos += 1  # the colon
            node.children.append(self.value())
            self.skip()
            if self.text[self.pos] == ",":
                self.pos += 1
                self.skip()
        self.pos += 1
        node.end = self.pos
        return node


def parse(text: str) -> Node:
    """The span tree of ``text``, which must be valid JSON (check with ``json.loads`` first)."""
    return _Parser(text).value()


def _line_indent(text: str, pos: int) -> str:
    line = text[text.rfind("\n", 0, pos) + 1 : pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def indent_unit(text: str) -> str:
    """The indentation step the document uses (two spaces when it shows none)."""
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def _render(value: Any, before: str, multiline: bool) -> str:
    """``value`` as JSON to be inserted after ``before``, in the document's style."""
    if not multiline:
        return json.dumps(value)
    body = json.dumps(value, indent=indent_unit(before))
    return body.replace("\n", "\n" + _line_indent(before, len(before)))


def add_child(text: str, container: Node, value: Any, key: str | None = None) -> str:
    """``text`` with ``value`` appended to ``container`` (as member ``key`` of an object)."""
    label = "" if key is None else json.dumps(key)
    if not container.children:
        # An empty container: the new child goes on its own line, one step in.
        outer = _line_indent(text, container.start)
        before = text[: container.start + 1] + "\n" + outer + indent_unit(text)
        body = (label + ": " if key is not None else "") + _render(value, before, True)
        return before + body + "\n" + outer + text[container.end - 1 :]
    last = container.children[-1]
    if len(container.children) > 1:
        previous = container.children[-2]
        gap = text[text.index(",", previous.end) + 1 : container.heads[-1]]
    else:
        gap = text[container.start + 1 : container.heads[0]]
    before = text[: last.end] + "," + gap
    body = _render(value, before, "\n" in gap)
    if key is not None:
        # Copy the key/value separator the object already uses (": " or ":").
        key_end = _Parser(text).string_end(container.heads[-1])
        body = label + text[key_end : last.start] + body
    return before + body + text[last.end :]


def remove_child(text: str, container: Node, index: int) -> str:
    """``text`` without child ``index`` of ``container`` and the separator it came with."""
    if len(container.children) == 1:
        return text[: container.start + 1] + text[container.end - 1 :]
    if index > 0:
        # An appended child brought the comma and gap before it: cut those with it.
        return text[: container.children[index - 1].end] + text[container.children[index].end :]
    return text[: container.heads[0]] + text[container.heads[1] :]
