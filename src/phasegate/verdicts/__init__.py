"""One verdict model and the readers that turn agents' answers into it.

The names below are imported from their modules when first used: a command that
only reads verdicts already recorded (``phasegate status NAME``) does not build
the readers' patterns.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from phasegate.verdicts.model import UNCLEAR, Issue, Verdict, unclear
    from phasegate.verdicts.readers import ReadContext, ToolCall, VerdictReader

_HOMES = {
    "UNCLEAR": "phasegate.verdicts.model",
    "Issue": "phasegate.verdicts.model",
    "Verdict": "phasegate.verdicts.model",
    "unclear": "phasegate.verdicts.model",
    "ReadContext": "phasegate.verdicts.readers",
    "ToolCall": "phasegate.verdicts.readers",
    "VerdictReader": "phasegate.verdicts.readers",
}

__all__ = ["UNCLEAR", "Issue", "ReadContext", "ToolCall", "Verdict", "VerdictReader", "unclear"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value
