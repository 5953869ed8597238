"""A markdown document as headings and list items, read with markdown-it-py.

Only what the document really holds counts: a list inside a fenced block, an
indented code block or an HTML comment is code or a comment, never an item.
Line numbers are 0-based here (markdown-it's); callers add 1 for people.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token

_md = MarkdownIt("commonmark")

#: A checkbox at the start of a list item's text (GitHub's task list syntax).
CHECKBOX = re.compile(r"^\[( |x|X)\](?:[ \t]+|$)")


@dataclass
class ListItem:
    """One list item: its first paragraph's text, where it is, and the items inside it."""

    line: int
    end: int
    text: str | None
    text_lines: tuple[int, int] | None
    depth: int
    children: list[ListItem] = field(default_factory=list)

    @property
    def checkbox(self) -> str | None:
        """``" "`` or ``"x"`` when the item is a task-list item, else ``None``."""
        if self.text is None:
            return None
        match = CHECKBOX.match(self.text)
        return match.group(1).lower() if match else None

    @property
    def label(self) -> str:
        """The text after the checkbox (or the whole text), one line."""
        text = self.text or ""
        match = CHECKBOX.match(text)
        return " ".join((text[match.end() :] if match else text).split())

    def checkbox_children(self) -> list[ListItem]:
        return [c for c in self.children if c.checkbox is not None]

    def has_nested_checkbox(self) -> bool:
        return any(c.checkbox is not None or c.has_nested_checkbox() for c in self.children)


@dataclass
class Heading:
    level: int
    text: str
    line: int


@dataclass
class Block:
    """A top-level piece of the document: a heading, a paragraph or a list's items."""

    kind: str  # "heading" | "paragraph" | "list"
    line: int
    heading: Heading | None = None
    text: str = ""
    items: list[ListItem] = field(default_factory=list)


def strip_bom(text: str) -> str:
    """``text`` without a leading byte-order mark (its lines are unchanged)."""
    return text[1:] if text.startswith("\ufeff") else text


def outline(text: str) -> list[Block]:
    """The document's top-level blocks in order, with each list's item tree."""
    tokens = _md.parse(strip_bom(text))
    blocks: list[Block] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open" and token.map is not None:
            inline = tokens[index + 1]
            heading = Heading(int(token.tag[1:]), inline.content.strip(), token.map[0])
            blocks.append(Block("heading", token.map[0], heading=heading))
            index += 3
        elif token.type == "paragraph_open" and token.map is not None and token.level == 0:
            blocks.append(Block("paragraph", token.map[0], text=tokens[index + 1].content))
            index += 3
        elif token.type in ("bullet_list_open", "ordered_list_open") and token.level == 0:
            items, index = _list(tokens, index, depth=1)
            line = token.map[0] if token.map else 0
            blocks.append(Block("list", line, items=items))
        else:
            index += 1
    return blocks


def _list(tokens: list[Token], index: int, depth: int) -> tuple[list[ListItem], int]:
    """The items of the list opening at ``tokens[index]``; the index after its close."""
    opening = tokens[index]
    closing = opening.type.replace("_open", "_close")
    items: list[ListItem] = []
    index += 1
    while index < len(tokens) and not (
        tokens[index].type == closing and tokens[index].level == opening.level
    ):
        token = tokens[index]
        if token.type == "list_item_open":
            item, index = _item(tokens, index, depth)
            items.append(item)
        else:
            index += 1
    return items, index + 1


def _item(tokens: list[Token], index: int, depth: int) -> tuple[ListItem, int]:
    opening = tokens[index]
    span = opening.map or [0, 0]
    item = ListItem(line=span[0], end=span[1], text=None, text_lines=None, depth=depth)
    index += 1
    first = True
    while index < len(tokens) and not (
        tokens[index].type == "list_item_close" and tokens[index].level == opening.level
    ):
        token = tokens[index]
        if token.type in ("bullet_list_open", "ordered_list_open"):
            children, index = _list(tokens, index, depth + 1)
            item.children.extend(children)
            first = False
            continue
        if token.type == "paragraph_open" and first and token.map is not None:
            item.text = tokens[index + 1].content
            item.text_lines = (token.map[0], token.map[1])
        if token.type.endswith("_open") or token.type in ("fence", "code_block", "html_block"):
            first = False
        index += 1
    return item, index + 1


def walk(items: list[ListItem]) -> list[ListItem]:
    """Every item of ``items`` and below, in document order."""
    found: list[ListItem] = []
    for item in items:
        found.append(item)
        found.extend(walk(item.children))
    return found
