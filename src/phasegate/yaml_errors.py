"""One-line descriptions of YAML parse errors, for messages naming a file and a line.

ruamel's own text spans several lines, names the text it parsed
``"<unicode string>"``, quotes the offending lines and, for a duplicate key,
adds advice on suppressing the check with a link; none of that helps someone
fixing their file. These helpers keep the problem, its line and the construct
it was found in.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

# An anchor written again (``&a`` twice) is valid YAML, an alias naming the latest one;
# ruamel's warning about it (a ReusedAnchorWarning) is several lines of its own text and
# source path on stderr. Matched by its text: importing ruamel here would load it for
# every command (``status`` reads no YAML).
warnings.filterwarnings("ignore", message=r"\s*found duplicate anchor")

#: Where ruamel names the parsed text (``in "<unicode string>", position 3``).
_NO_NAME = re.compile(r'\s*in "<unicode string>",?\s*')


def yaml_error_detail(exc: Exception, first_line: int = 1) -> tuple[int | None, str]:
    """``(line, problem)`` of a YAML error, the line 1-based counting from ``first_line``
    (the line of the file the parsed text started on), ``None`` when ruamel gives none."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    bad = _bad_character(exc)
    if bad is not None:
        return bad[0] + first_line, (
            f"found character U+{bad[2]:04X}, which YAML does not allow in a file: delete "
            "it (or write it as an escape in a double-quoted text)"
        )
    if not problem or mark is None:
        return None, " ".join(_NO_NAME.sub(" at ", str(exc)).split())
    detail = " ".join(str(problem).split())
    if type(exc).__name__ == "DuplicateKeyError":
        # ruamel adds both values (empty mappings, for the safe loader): the key is enough
        detail = detail.split(' with value "', 1)[0]
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if detail == "but found another document":
        # ruamel's sentence starts in its context ("expected a single document...")
        return mark.line + first_line, (
            "found a second YAML document, where the file holds one: delete the '---' "
            "or '...' line that ends the first"
        )
    if context and context_mark is not None:
        detail += f" ({context} started on line {context_mark.line + first_line})"
    if detail.startswith("found character '\\t'"):
        detail = "found a tab, where YAML takes spaces: indent and separate with spaces"
    elif detail.startswith("found character '@'"):
        detail += ": a value that starts with '@' is written in quotes (\"@blocked\")"
    elif detail.startswith(("found character '`'", "found character '%'")):
        detail += f": a value that starts with {detail[16:19]} is written in quotes"
    hint = _quoting_hint(exc)
    return mark.line + first_line, detail + (hint or _layout_hint(exc, first_line))


def _bad_character(exc: Exception) -> tuple[int, int, int] | None:
    """0-based ``(line, column, code)`` of a character the YAML reader refused (a control
    character), found in the text the reader checked; ``None`` for other errors or when
    that text cannot be found."""
    position, code = getattr(exc, "position", None), getattr(exc, "character", None)
    if type(exc).__name__ != "ReaderError" or not isinstance(position, int):
        return None
    if not isinstance(code, int):
        return None
    trace = exc.__traceback__
    while trace is not None:
        frame = trace.tb_frame
        data = frame.f_locals.get("data")
        if (
            frame.f_code.co_name == "check_printable"
            and isinstance(data, str)
            and 0 <= position < len(data)
            and ord(data[position]) == code
        ):
            line = data.count("\n", 0, position)
            return line, position - (data.rfind("\n", 0, position) + 1), code
        trace = trace.tb_next
    return None


#: A value that starts with ``{{`` (a placeholder) and is closed, just before the problem:
#: YAML read ``{`` as a mapping's start.
_BRACES_BEFORE = re.compile(r"(?:^|[:\[{,-])[ \t]*\{\{[^\n]*\}\}\s*$")
#: Where a flow mapping started: ``{{`` starting a value.
_BRACES_START = re.compile(r"(?:^|[:\[{,-])[ \t]*$")
#: A value that starts with a quote and closes, just before the problem (``"a" b``).
_QUOTED_BEFORE = re.compile(r"""(?:^|[:\[{,-])[ \t]*(["'])(?:(?!\1)[^\n])*\1\s*$""")


def _offset(mark: object, lines: list[str]) -> int | None:
    """Index in the buffer split into ``lines`` of a ruamel mark, ``None`` when outside."""
    line, column = getattr(mark, "line", None), getattr(mark, "column", None)
    if not isinstance(line, int) or not isinstance(column, int) or not 0 <= line < len(lines):
        return None
    return sum(len(text) + 1 for text in lines[:line]) + column


def _quoting_hint(exc: Exception) -> str:
    """How to write the value the error is on, when that value is the cause: a text
    written as YAML reads something else, one starting with ``{{`` (a placeholder), or
    with a quote it goes on after (``"{{ item }}" is ready?``)."""
    mark = getattr(exc, "problem_mark", None)
    buffer = getattr(mark, "buffer", None)
    if not isinstance(buffer, str):
        return ""
    lines = buffer.split("\n")
    at = _offset(mark, lines)
    if at is None:
        return ""
    before = buffer[:at]
    started = _offset(getattr(exc, "context_mark", None), lines)
    if started is not None and buffer[started - 1 : started] == "{":
        started -= 1  # the inner mapping of ``{{``: the text starts at the outer one
    flow_mapping = "flow mapping" in str(getattr(exc, "context", ""))
    if _BRACES_BEFORE.search(before) or (
        flow_mapping
        and started is not None
        and buffer.startswith("{{", started)
        and _BRACES_START.search(buffer[:started])
    ):
        return (
            "; a text that starts with '{{' is read as a YAML mapping: put the whole text "
            'in quotes (e.g. "{{ item }} is ready?")'
        )
    if _QUOTED_BEFORE.search(before):
        return (
            "; a text that starts with a quote ends where the quote closes: put the whole "
            "text in quotes, or start it without one"
        )
    return ""


def _layout_hint(exc: Exception, first_line: int) -> str:
    """What to write for the usual layout mistakes: a text holding ``: `` unquoted, a
    line indented unlike its neighbours, a quote or bracket left open."""
    problem = str(getattr(exc, "problem", ""))
    context = str(getattr(exc, "context", "") or "")
    mark = getattr(exc, "problem_mark", None)
    context_mark = getattr(exc, "context_mark", None)
    buffer = getattr(mark, "buffer", None)
    line = column = -1
    text = ""
    if mark is not None and isinstance(buffer, str):
        line, column = mark.line, mark.column
        lines = buffer.split("\n")
        text = lines[line] if 0 <= line < len(lines) else ""
    opened = context_mark.line + first_line if context_mark is not None else None
    if problem == "mapping values are not allowed here":
        if ": " in text[:column] or text[:column].rstrip().endswith(":"):
            return f"; a text holding ': ' is written in quotes{_quoted_example(text)}"
        return (
            f"; line {line + first_line} is indented as if it went on with the value "
            "above it: line its key up with the keys before it"
        )
    if problem.startswith("expected <block end>, but found"):
        return (
            f"; line {line + first_line} is indented unlike the lines before it: line each "
            "key up with the other keys of its mapping, each '-' with the others of its list"
        )
    if "quoted scalar" in context and "end of stream" in problem and opened is not None:
        return f"; the quote opened on line {opened} is not closed: end the text with it"
    flow = re.match(r"expected ',' or '([\]}])', but got '(.*)'$", problem)
    if flow and opened is not None:
        opener = "[" if flow.group(1) == "]" else "{"
        close = f"close the '{opener}' opened on line {opened} with '{flow.group(1)}'"
        if flow.group(2) == ":" and context_mark is not None and context_mark.line == line:
            return f"; a text holding ': ' is written in quotes, or {close}"
        return f"; {close}"
    return ""


def _quoted_example(text: str) -> str:
    """`` (key: "a: b")`` for a line ``key: a: b`` whose value can be quoted as it is."""
    key, sep, value = text.strip(" \x00").removeprefix("- ").partition(": ")
    value = value.strip()
    if not sep or not value or value[0] in "\"'{[&*!|>" or '"' in value or "\\" in value:
        return ""
    if " #" in value:
        return ""
    return f' ({key}: "{value}")'


def yaml_error_column(exc: Exception) -> int | None:
    """1-based column of a YAML error on its line, ``None`` when ruamel gives none."""
    bad = _bad_character(exc)
    if bad is not None:
        return bad[1] + 1
    column = getattr(getattr(exc, "problem_mark", None), "column", None)
    return column + 1 if isinstance(column, int) and getattr(exc, "problem", None) else None


def yaml_problem(path: Path | str, exc: Exception) -> str:
    """``file:line:column: invalid YAML: problem`` (``file: invalid YAML: ...`` without a
    line)."""
    line, detail = yaml_error_detail(exc)
    column = yaml_error_column(exc)
    where = str(path)
    if line is not None:
        where += f":{line}" if column is None else f":{line}:{column}"
    return f"{where}: invalid YAML: {detail}"


def flow_comma_hint(document: object, loc: tuple[str | int, ...], text: str) -> str:
    """``; the comma in ...`` for an unknown field at ``loc`` of the round-trip
    ``document`` (read from ``text``) that a comma split off a plain value before it in a
    ``{...}`` mapping (``{description: Ship it, now}`` holds a field ``now``), else ``""``."""
    parent = document
    for part in loc[:-1]:
        try:
            parent = parent[part]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return ""
    fa, lc = getattr(parent, "fa", None), getattr(parent, "lc", None)
    if not isinstance(parent, dict) or fa is None or lc is None or not fa.flow_style():
        return ""
    keys = list(parent)
    if not loc or loc[-1] not in keys:
        return ""
    lines = text.split("\n")
    position = keys.index(loc[-1])
    start = position
    while start > 0 and _bare_key(parent, keys[start], lines):
        start -= 1
    end = position
    while end + 1 < len(keys) and _bare_key(parent, keys[end + 1], lines):
        end += 1
    value = parent[keys[start]]
    if not _bare_key(parent, keys[position], lines) or not isinstance(value, str):
        return ""
    try:
        row, column = lc.value(keys[start])
    except (KeyError, TypeError):
        return ""
    if not 0 <= row < len(lines) or lines[row][column : column + 1] in ("'", '"', "|", ">"):
        return ""  # a quoted text ends at its quote: the comma is not in it
    whole = ", ".join([value, *(str(key) for key in keys[start + 1 : end + 1])])
    example = f' ({keys[start]}: "{whole}")' if '"' not in whole and "\\" not in whole else ""
    return (
        f"; a comma split the value of {str(keys[start])!r} ({whole!r}): put the whole "
        f"value in quotes{example}"
    )


def _bare_key(mapping: object, key: object, lines: list[str]) -> bool:
    """Whether ``key`` of the flow ``mapping`` is written alone, without ``:`` nor a
    value (``now`` of ``{description: Ship it, now}``)."""
    if mapping[key] is not None:  # type: ignore[index]
        return False
    try:
        row, column = mapping.lc.key(key)  # type: ignore[attr-defined]
    except (AttributeError, KeyError, TypeError):
        return False
    if not 0 <= row < len(lines):
        return False
    rest = lines[row][column + len(str(key)) :].lstrip(" ")
    return not rest.startswith(":")
