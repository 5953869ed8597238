"""Agent backends behind one small interface.

The names below are imported from their modules when first used, so importing
:mod:`phasegate.agents.base` (as the engine does) loads no backend.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    home = "scripted" if name.startswith("Scripted") else "base"
    value = getattr(import_module(f"phasegate.agents.{home}"), name)
    globals()[name] = value
    return value
