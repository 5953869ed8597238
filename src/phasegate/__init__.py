"""phasegate: drive AI coding agents through spec-driven workflows, enforced in code.

The public API (imported lazily, so ``import phasegate`` stays cheap)::

    from phasegate import ScriptedBackend, open_repo

    repo = open_repo(".")
    repo.new("rate-limit", description="Add rate limiting")
    outcome = repo.run("rate-limit", backends={"default": ScriptedBackend(script={...})})
"""

from __future__ import annotations

from importlib import import_module

# Not imported from typing: the hooks import this package, and typing costs them 8 ms.
TYPE_CHECKING = False

__version__ = "0.1.0"

_EXPORTS = {
    "Access": "phasegate.agents.base",
    "AgentRequest": "phasegate.agents.base",
    "AgentResult": "phasegate.agents.base",
    "Backend": "phasegate.agents.base",
    "PromptPart": "phasegate.agents.base",
    "TokenUsage": "phasegate.agents.base",
    "ScriptedBackend": "phasegate.agents.scripted",
    "ScriptedReply": "phasegate.agents.scripted",
    "Issue": "phasegate.verdicts.model",
    "Verdict": "phasegate.verdicts.model",
    "Repo": "phasegate.api",
    "open_repo": "phasegate.api",
    "RunOptions": "phasegate.engine.runner",
    "RunOutcome": "phasegate.engine.runner",
    "ExitCode": "phasegate.errors",
    "PhasegateError": "phasegate.errors",
    "TransitionResult": "phasegate.workflow.transitions",
    "validate_transition": "phasegate.workflow.transitions",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from typing import Any

    from phasegate.agents.base import (
        Access,
        AgentRequest,
        AgentResult,
        Backend,
        PromptPart,
        TokenUsage,
    )
    from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
    from phasegate.api import Repo, open_repo
    from phasegate.engine.runner import RunOptions, RunOutcome
    from phasegate.errors import ExitCode, PhasegateError
    from phasegate.verdicts.model import Issue, Verdict
    from phasegate.workflow.transitions import TransitionResult, validate_transition


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'phasegate' has no attribute {name!r}")
