"""One verdict model and the readers that turn agents' answers into it."""

from phasegate.verdicts.model import UNCLEAR, Issue, Verdict, unclear
from phasegate.verdicts.readers import ReadContext, ToolCall, VerdictReader

__all__ = ["UNCLEAR", "Issue", "ReadContext", "ToolCall", "Verdict", "VerdictReader", "unclear"]
