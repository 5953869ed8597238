"""Markdown structure of the change's files, read with markdown-it-py (CommonMark).

tasks.md and the spec files are parsed as Markdown, never with line regexes
alone: a fence (backticks or tildes), an indented code block or an HTML
comment is one block whose inside is never a heading, a task or a
requirement. Positions are 0-based line numbers of the source, the same
lines :func:`split_lines` returns, so callers can slice the original text
(and write back untouched parts byte for byte).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_BOM = "\ufeff"


def split_lines(text: str) -> list[str]:
    """``text`` as lines with their own endings, split where markdown-it splits them."""
    return _LINE.findall(text)


def line_ending(text: str) -> str:
    """The newline ``text`` mostly uses (``\\n`` when it has none)."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def content(line: str) -> str:
    """A line without its ending."""
    return line.rstrip("\r\n")


@cache
def _parser() -> MarkdownIt:
    # Block structure only: the inline rules (emphasis, links...) are not needed, and an
    # inline token's content is already the raw text of its paragraph or heading.
    return MarkdownIt("commonmark").disable(["inline", "text_join"])


def tokens(text: str) -> list[Token]:
    """The block tokens of ``text`` (a leading byte-order mark ignored, lines numbered alike)."""
    return _parser().parse(text.removeprefix(_BOM))


@dataclass(frozen=True)
class Heading:
    """A heading outside any container (list, quote): its level, text and first line."""

    level: int
    title: str
    line: int


@dataclass(frozen=True)
class ListItem:
    """One item of a list: its lines, whether it is outside any container, its first paragraph."""

    line: int
    end: int
    top: bool
    text: str
    list_end: int


@dataclass(frozen=True)
class Fence:
    """A fenced code block: its info string, its body, its first line and the line after it."""

    info: str
    body: str
    line: int
    end: int


@dataclass(frozen=True)
class Outline:
    """What the structural readers need of a Markdown text."""

    headings: list[Heading]
    items: list[ListItem]
    fences: list[Fence]


@lru_cache(maxsize=16)
def outline(text: str) -> Outline:
    """Headings at the top level, list items (any depth) and fences of ``text``."""
    stream = tokens(text)
    headings: list[Heading] = []
    items: list[ListItem] = []
    fences: list[Fence] = []
    lists: list[int] = []  # the end line of each open list
    for index, token in enumerate(stream):
        if token.type in ("bullet_list_open", "ordered_list_open"):
            lists.append(token.map[1] if token.map else 0)
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif token.type == "heading_open" and token.level == 0 and token.map:
            inline = stream[index + 1]
            headings.append(Heading(int(token.tag[1]), inline.content.strip(), token.map[0]))
        elif token.type == "list_item_open" and token.map:
            items.append(
                ListItem(
                    token.map[0],
                    token.map[1],
                    token.level == 1,
                    _first_paragraph(stream, index),
                    lists[-1],
                )
            )
        elif token.type == "fence" and token.map:
            fences.append(Fence(token.info.strip(), token.content, token.map[0], token.map[1]))
    return Outline(headings, items, fences)


def _first_paragraph(stream: list[Token], index: int) -> str:
    """The text of a list item's own first paragraph ("" when it starts with another block)."""
    if index + 2 < len(stream) and stream[index + 1].type == "paragraph_open":
        return stream[index + 2].content
    return ""
