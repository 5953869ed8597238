"""Where the CLI writes: the two consoles, the colour mode, and JSON.

``out`` (stdout) and ``err`` (stderr) are shared by every command module.
Colour follows ``--color auto|always|never``: ``auto`` colours a terminal
only, and not at all when ``NO_COLOR`` is set; ``always`` colours even a
file or a pipe; ``never`` writes no escape code at all.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Literal

from rich.console import Console

ColorMode = Literal["auto", "always", "never"]
COLOR_MODES: tuple[ColorMode, ...] = ("auto", "always", "never")


class OutputClosed(Exception):
    """The reader of phasegate's output went away (``phasegate status | head``): the
    command ends with exit code 141, as a command killed by SIGPIPE does."""


class _Console(Console):
    """A console whose reader going away is :class:`OutputClosed` (not an ``OSError``, which
    typer would turn into exit code 1; not rich's own exit 1)."""

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


def json_text(data: Any, *, pretty: bool) -> str:
    """What :func:`write_json` writes, newline included."""
    if pretty:
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if isinstance(data, list) and data:
        encode = json.JSONEncoder(ensure_ascii=False).encode
        return "[\n" + ",\n".join(encode(entry) for entry in data) + "\n]\n"
    return json.dumps(data, ensure_ascii=False) + "\n"


def write_json_error(message: str, exit_code: int) -> None:
    """An error as one JSON object on stderr (what ``--json`` commands report)."""
    sys.stderr.write(json.dumps({"error": message, "exit_code": exit_code}) + "\n")
    sys.stderr.flush()


def warn(message: str) -> None:
    """One warning line on stderr."""
    err.print(f"phasegate: warning: {message}", markup=False)
