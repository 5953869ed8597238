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

__all__ = [
    "Access",
    "AgentRequest",
    "AgentResult",
    "Availability",
    "Backend",
    "McpServer",
    "PromptPart",
    "ScriptedBackend",
    "ScriptedReply",
    "TokenUsage",
]
