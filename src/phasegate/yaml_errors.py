"""One-line descriptions of YAML parse errors, for messages naming a file and a line.

ruamel's own text spans several lines, names the text it parsed
``"<unicode string>"``, quotes the offending lines and, for a duplicate key,
adds advice on suppressing the check with a link; none of that helps someone
fixing their file. These helpers keep the problem, its line and the construct
it was found in.
"""

from __future__ import annotations

import re
from pathlib import Path

#: Where ruamel names the parsed text (``in "<unicode string>", position 3``).
_NO_NAME = re.compile(r'\s*in "<unicode string>",?\s*')


def yaml_error_detail(exc: Exception, first_line: int = 1) -> tuple[int | None, str]:
    """``(line, problem)`` of a YAML error, the line 1-based counting from ``first_line``
    (the line of the file the parsed text started on), ``None`` when ruamel gives none."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if not problem or mark is None:
        return None, " ".join(_NO_NAME.sub(" at ", str(exc)).split())
    detail = " ".join(str(problem).split())
    if type(exc).__name__ == "DuplicateKeyError":
        # ruamel adds both values (empty mappings, for the safe loader): the key is enough
        detail = detail.split(' with value "', 1)[0]
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        detail += f" ({context} started on line {context_mark.line + first_line})"
    if detail.startswith("found character '\\t'"):
        detail = "found a tab, where YAML takes spaces: indent and separate with spaces"
    elif detail.startswith("found character '@'"):
        detail += ": a value that starts with '@' is written in quotes (\"@blocked\")"
    return mark.line + first_line, detail + _quoting_hint(exc)


#: A value that starts with ``{{`` (a placeholder): YAML reads ``{`` as a mapping's start.
_BRACES_FIRST = re.compile(r"(?:^|[:\[{,-])\s*\{\{")
#: A value that starts with a quote and goes on after the quote closes (``"a" b``).
_QUOTED_FIRST = re.compile(r"""(?:^|[:\[{,-])\s*(["'])(?:(?!\1).)*\1[ \t]*[^\s,}\]#]""")


def _quoting_hint(exc: Exception) -> str:
    """How to write the value the error is on, when it is a text written as YAML reads
    something else: one starting with ``{{`` (a placeholder), or with a quote it goes on
    after (``"{{ item }}" is ready?``)."""
    lines: list[str] = []
    for mark in (getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)):
        buffer = getattr(mark, "buffer", None)
        if mark is not None and isinstance(buffer, str):
            text = buffer.split("\n")
            if 0 <= mark.line < len(text) and text[mark.line] not in lines:
                lines.append(text[mark.line])
    if any(_BRACES_FIRST.search(line) for line in lines):
        return (
            "; a text that starts with '{{' is read as a YAML mapping: put the whole text "
            'in quotes (e.g. "{{ item }} is ready?")'
        )
    if any(_QUOTED_FIRST.search(line) for line in lines):
        return (
            "; a text that starts with a quote ends where the quote closes: put the whole "
            "text in quotes, or start it without one"
        )
    return ""


def yaml_problem(path: Path | str, exc: Exception) -> str:
    """``file:line: invalid YAML: problem`` (``file: invalid YAML: ...`` without a line)."""
    line, detail = yaml_error_detail(exc)
    where = f"{path}:{line}" if line is not None else str(path)
    return f"{where}: invalid YAML: {detail}"
