"""The agent interface: one request in, one result out, one abstract method.

Every backend (the scripted one, the Claude Code, Codex and Gemini CLIs, an
OpenAI-compatible HTTP model, or a third party's) subclasses :class:`Backend`
and implements :meth:`Backend.run`. Capability flags are class attributes so
the engine can decide, without calling anything, whether a backend can return
schema-validated output or edit files itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from phasegate.errors import TIMEOUT_EXIT as TIMEOUT_EXIT


class Access(StrEnum):
    """What an agent may do in its working directory."""

    READ_ONLY = "read-only"
    WRITE = "write"


@dataclass(frozen=True)
class PromptPart:
    """One titled section of a prompt (instructions, an input artifact, feedback...)."""

    title: str
    body: str


@dataclass(frozen=True)
class McpServer:
    """An MCP server (stdio) an agent is given, and the only tools it may call on it."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentRequest:
    """Everything a backend needs for one agent call.

    ``labels`` carry context that is not part of the prompt (work item, phase,
    iteration, attempt id); the scripted backend keys its answers on them and
    the journal records them.
    """

    role: str
    prompt: tuple[PromptPart, ...]
    workdir: Path
    access: Access = Access.READ_ONLY
    timeout: float = 900.0
    output_schema: Mapping[str, Any] | None = None
    session: str | None = None
    instructions: str = ""
    model: str | None = None
    extra_dirs: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    mcp_servers: tuple[McpServer, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    #: What the engine expects of this call (the files to write, an approving answer),
    #: for backends that answer without a model; real agents never see it.
    hints: Mapping[str, Any] = field(default_factory=dict)
    #: The most this call may spend in USD (what the item's budget caps leave), if capped;
    #: backends that can enforce it do (Claude Code's ``--max-budget-usd``).
    max_budget_usd: float | None = None

    def prompt_text(self) -> str:
        """The prompt as one markdown document (instructions first, then each part)."""
        known: str | None = self.__dict__.get("_prompt_text")
        if known is not None:  # the request is frozen: its text is worked out once
            return known
        sections: list[str] = []
        if self.instructions:
            sections.append(self.instructions.strip())
        for part in self.prompt:
            sections.append(f"## {part.title}\n\n{part.body.rstrip()}")
        text = "\n\n".join(sections) + "\n"
        object.__setattr__(self, "_prompt_text", text)
        return text


@dataclass(frozen=True)
class TokenUsage:
    """Tokens one call consumed, as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True)
class AgentResult:
    """What one agent call produced.

    ``error`` is set (and ``exit_status`` is usually non-zero) when the call
    failed: the engine records it as a failed attempt and applies its retry
    policy. ``structured`` holds schema output when the backend supports it.
    """

    text: str
    structured: Mapping[str, Any] | None = None
    exit_status: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float | None = None
    duration_s: float = 0.0
    session_id: str | None = None
    error: str | None = None
    stderr: str = ""
    #: The call failed on a setting of the person's (a wrong value in a scripted agent's
    #: script): retrying cannot help, so the run stops as on bad input (exit 2).
    bad_setting: bool = False
    #: The call failed in a way another attempt would only repeat (the server refused the
    #: API key, or knows no such model): the engine does not retry it, and the run stops
    #: on the agent (exit 6) with this error.
    permanent: bool = False
    #: The answer stopped before it was complete (the server's token limit): what cut it
    #: off and which setting asks for more. A reviewer's cut-off answer never approves.
    cut_off: str | None = None
    #: The server asked to be called again no sooner than this many seconds from now (its
    #: ``Retry-After``): the engine's next attempt waits that long, or is not made.
    retry_after: float | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_status == 0

    @property
    def timed_out(self) -> bool:
        """Whether phasegate stopped the call at its timeout."""
        return self.exit_status == TIMEOUT_EXIT and self.error is not None


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run on this machine, and why not."""

    usable: bool
    detail: str


class Backend(ABC):
    """An agent backend. Subclasses set ``name`` and implement :meth:`run`.

    ``settings`` is the backend's section of ``.phasegate/config.yaml``
    (``backends.<name>``), already merged with the role's own settings.
    """

    name: ClassVar[str]
    #: The backend can enforce a JSON schema on its answer (``structured`` is filled).
    structured_output: bool = False
    #: The backend edits files in ``workdir`` itself (otherwise the engine applies them).
    writes_files: ClassVar[bool] = True

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.settings: Mapping[str, Any] = dict(settings or {})

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        """Raise ConfigError when ``settings`` cannot configure this backend.

        Cheap (no binary is run, no server asked): a run checks the settings of every
        role's backend with it before its first call.
        """
        return None

    @abstractmethod
    def run(self, request: AgentRequest) -> AgentResult:
        """Carry out one agent call; never raise for an agent's own failure."""

    def own_files(self) -> tuple[Path, ...]:
        """Files the backend itself (not its agent) writes during a call, such as a log
        kept under ``.phasegate/``: never counted as an agent changing phasegate's files."""
        return ()

    def availability(self) -> Availability:
        """Say whether this backend can run here (used by ``phasegate doctor``)."""
        return Availability(True, "built in")
