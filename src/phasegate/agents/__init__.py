"""Agent backends behind one small interface."""

from phasegate.agents.base import (
    Access,
    AgentRequest,
    AgentResult,
    Availability,
    Backend,
    McpServer,
    PromptPart,
    TokenUsage,
)
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.agents.verdict import ReviewIssue, ReviewVerdict, Severity, read_verdict

__all__ = [
    "Access",
    "AgentRequest",
    "AgentResult",
    "Availability",
    "Backend",
    "McpServer",
    "PromptPart",
    "ReviewIssue",
    "ReviewVerdict",
    "ScriptedBackend",
    "ScriptedReply",
    "Severity",
    "TokenUsage",
    "read_verdict",
]
