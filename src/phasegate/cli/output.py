"""Where the CLI writes: the two consoles, the colour mode, and JSON.

``out`` (stdout) and ``err`` (stderr) are shared by every command module.
Colour follows ``--color auto|always|never``: ``auto`` colours a terminal
only, and not at all when ``NO_COLOR`` is set; ``always`` colours even a
file or a pipe; ``never`` writes no escape code at all.

Whatever the mode, the text itself never carries a control character to the
terminal: agents' words, descriptions and file contents may hold escape sequences
(clear the screen, set the window title), so each control character other than a
newline or a tab is printed visibly, as ``\\x1b`` (see :func:`printable`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any, Literal

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

ColorMode = Literal["auto", "always", "never"]
COLOR_MODES: tuple[ColorMode, ...] = ("auto", "always", "never")


class OutputClosed(Exception):
    """The reader of phasegate's output went away (``phasegate status | head``): the
    command ends with exit code 141, as a command killed by SIGPIPE does."""


#: The control characters a terminal acts on (C0 but newline and tab, DEL, C1), each
#: mapped to its visible form: ESC becomes the four characters ``\\x1b``.
_CONTROL = {
    code: f"\\x{code:02x}"
    for code in (*range(0x00, 0x20), *range(0x7F, 0xA0))
    if code not in (0x09, 0x0A)
}
_HAS_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with every control character a terminal would act on made visible
    (``\\x1b`` for ESC; a CRLF line end is a plain newline). Newlines and tabs stay."""
    if _HAS_CONTROL.search(text) is None:
        return text
    return text.replace("\r\n", "\n").translate(_CONTROL)


class _Console(Console):
    """A console whose reader going away is :class:`OutputClosed` (not an ``OSError``, which
    typer would turn into exit code 1; not rich's own exit 1), and whose text never
    carries a control character (:func:`printable`): only rich's own styles and cursor
    moves reach the terminal as escape codes."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        # Before the text is laid out, so a table's columns fit what is shown.
        return super().render_str(printable(text), **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Text built elsewhere (a rich Text, a prompt): made visible as it is written.
        # Control segments are rich's own (cursor moves of a live display): kept.
        return super()._render_buffer(
            Segment(printable(segment.text), segment.style)
            if not segment.control and _HAS_CONTROL.search(segment.text)
            else segment
            for segment in buffer
        )

    def on_broken_pipe(self) -> None:
        self.quiet = True
        try:  # later writes (a final message) go nowhere instead of failing again
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.file.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass
        raise OutputClosed("the reader of phasegate's output went away")


# emoji=False: ``file:100: problem`` must not print as ``file💯 problem``.
err: Console = _Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
out: Console = _Console(highlight=False, soft_wrap=True, emoji=False)


def _settings(mode: ColorMode) -> dict[str, Any]:
    if mode == "always":
        return {"force_terminal": True, "no_color": False}
    if mode == "never" or os.environ.get("NO_COLOR"):
        # No colour system: rich then writes no escape code at all (bold included).
        return {"color_system": None, "no_color": True}
    return {}


def set_color(mode: ColorMode) -> None:
    """Apply ``mode`` to both consoles.

    They are module-level objects imported by every command module, so they
    are set up again in place rather than replaced.
    """
    for console, stderr in ((out, False), (err, True)):
        Console.__init__(
            console, stderr=stderr, highlight=False, soft_wrap=True, emoji=False, **_settings(mode)
        )


def write_json(data: Any) -> None:
    """``data`` as JSON on stdout (no colour, no re-wrapping: safe for ``jq``).

    At a terminal it is indented for a person to read. Into a pipe or a file it
    is written by the C encoder, which is many times faster (Python's indenting
    encoder took most of ``status --json``'s time at a thousand items): a list
    one element per line (so ``grep`` finds an item's line), anything else on
    one line.
    """
    sys.stdout.write(json_text(data, pretty=sys.stdout.isatty()))
    sys.stdout.flush()


#: DEL and the C1 controls, which JSON leaves as they are: written as ``\\u009b`` instead.
_JSON_CONTROL = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}
_HAS_JSON_CONTROL = re.compile(r"[\x7f-\x9f]")


def _json_safe(text: str) -> str:
    return text if _HAS_JSON_CONTROL.search(text) is None else text.translate(_JSON_CONTROL)


def json_line(data: Any) -> str:
    """``data`` as one line of JSON (no newline) holding no control character a terminal
    acts on: JSON escapes C0 itself, and DEL and C1 (only ever inside a string) are
    escaped too, which reads back as the same value."""
    return _json_safe(json.dumps(data, ensure_ascii=False))


def json_text(data: Any, *, pretty: bool) -> str:
    """What :func:`write_json` writes, newline included (no raw control character either)."""
    if pretty:
        return _json_safe(json.dumps(data, ensure_ascii=False, indent=2)) + "\n"
    if isinstance(data, list) and data:
        encode = json.JSONEncoder(ensure_ascii=False).encode
        text = "[\n" + ",\n".join(encode(entry) for entry in data) + "\n]\n"
        return _json_safe(text)
    return json_line(data) + "\n"


def _redacted(message: str) -> str:
    """``message`` with every secret masked: an agent's error may quote a key."""
    from phasegate.redact import redact_message

    return redact_message(message)


def write_json_error(message: str, exit_code: int) -> None:
    """An error as one JSON object on stderr (what ``--json`` commands report), redacted."""
    error = {"error": _redacted(message), "exit_code": exit_code}
    sys.stderr.write(json.dumps(error) + "\n")
    sys.stderr.flush()


def print_error(kind: str, message: str) -> None:
    """One ``phasegate: KIND: MESSAGE`` line on stderr (error, waiting...), redacted."""
    err.print(f"phasegate: {kind}: {_redacted(message)}", markup=False)


def warn(message: str) -> None:
    """One warning line on stderr, redacted."""
    err.print(f"phasegate: warning: {_redacted(message)}", markup=False)
