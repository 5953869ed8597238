"""The stub server's script: which reply answers which request.

A :class:`Script` holds one ordered queue of entries per provider
(``anthropic``, ``openai``, ``gemini``). For each model request the server
walks that provider's queue and answers with the first entry that fits:

* a :class:`Rule` fits when its :class:`Match` accepts the request and it has
  answers left (``times``; ``None`` means unlimited). Using it spends one.
* a handler — any callable ``(LoggedRequest) -> Reply | None`` — fits when it
  returns a reply. Handlers are never used up; they hold the logic a test
  needs (count calls, branch on the prompt...).

Requests no entry fits get ``Script.default``. The same script can be written
as YAML (see :func:`load_script` and ``docs/stub-server.md``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

if TYPE_CHECKING:
    from phasegate.testing.request_log import LoggedRequest

#: The providers a script has queues for, named after their wire formats.
PROVIDERS: tuple[str, ...] = ("anthropic", "openai", "gemini")


class ScriptError(ValueError):
    """A script (Python or YAML) is malformed; the message names the entry."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model makes.

    ``args`` are the JSON arguments. ``input`` is the raw text of a freeform
    tool (codex's ``apply_patch`` is one): when the request declares the tool
    as a custom (non-JSON) tool, ``input`` is sent as is.
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    input: str | None = None
    id: str | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts the stub reports for one reply."""

    input_tokens: int = 100
    output_tokens: int = 20
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with a provider-shaped body.

    ``type`` is the provider's error type/status name; when empty it is
    derived from ``status`` (e.g. 429 -> ``rate_limit_error`` on Anthropic,
    ``RESOURCE_EXHAUSTED`` on Gemini). ``retry_after`` is sent as the
    ``Retry-After`` header (seconds, or an HTTP date) when set.
    """

    status: int = 500
    message: str = "stub error"
    type: str = ""
    retry_after: str | None = None


@dataclass(frozen=True)
class Reply:
    """What the stub model answers.

    ``text`` is sent first, then ``structured`` (JSON output: a call of
    Claude's ``StructuredOutput`` tool when the request offers it, otherwise
    the JSON text), then ``tool_calls``. ``error`` replaces all of that with
    an HTTP error. ``hang`` stalls: the stub sends nothing (or, for streaming
    requests, only ``text``) and holds the connection open until the client
    goes away or the server stops. ``delay`` waits before answering.
    """

    text: str = ""
    structured: Any = None
    tool_calls: tuple[ToolCall, ...] = ()
    error: ErrorReply | None = None
    hang: bool = False
    delay: float = 0.0
    usage: Usage = field(default_factory=Usage)

    @classmethod
    def tool(cls, name: str, /, text: str = "", **args: Any) -> Reply:
        """A reply calling one tool with JSON ``args`` (after optional ``text``)."""
        return cls(text=text, tool_calls=(ToolCall(name, args),))

    @classmethod
    def json(cls, value: Any) -> Reply:
        """A structured (JSON) answer."""
        return cls(structured=value)

    @classmethod
    def fail(
        cls,
        status: int = 500,
        message: str = "stub error",
        type: str = "",
        retry_after: str | None = None,
    ) -> Reply:
        """An HTTP error reply (with a ``Retry-After`` header when ``retry_after`` is set)."""
        return cls(error=ErrorReply(status, message, type, retry_after))

    @classmethod
    def stall(cls, text: str = "") -> Reply:
        """A reply that never finishes (optionally after streaming ``text``)."""
        return cls(text=text, hang=True)


@dataclass(frozen=True)
class Match:
    """Which requests a rule answers; every field set must hold.

    Substring tests are case-sensitive. ``prompt`` looks at user-authored text
    in the whole conversation (not tool results), ``last`` at the last
    message (tool results included), ``system`` at the system prompt /
    instructions, ``text`` at everything the request carries. ``model`` is a
    glob (``claude-*``). ``api`` is one of ``messages``, ``responses``,
    ``chat``, ``generate``, ``stream_generate``. ``tool`` requires a tool of
    that name to be offered; ``tool_result`` whether the last message carries
    a tool result; ``schema`` whether structured output is requested.
    """

    prompt: str | None = None
    last: str | None = None
    system: str | None = None
    text: str | None = None
    model: str | None = None
    api: str | None = None
    tool: str | None = None
    tool_result: bool | None = None
    schema: bool | None = None

    def accepts(self, request: LoggedRequest) -> bool:
        """Whether ``request`` satisfies every condition set on this match."""
        substrings = (
            (self.prompt, request.prompt),
            (self.last, request.last),
            (self.system, request.system),
            (self.text, request.text),
        )
        if any(want is not None and want not in have for want, have in substrings):
            return False
        if self.model is not None and not fnmatch.fnmatchcase(request.model or "", self.model):
            return False
        if self.api is not None and self.api != request.api:
            return False
        if self.tool is not None and self.tool not in request.tools:
            return False
        if self.tool_result is not None and self.tool_result != request.tool_result:
            return False
        return self.schema is None or self.schema == request.schema


@dataclass(frozen=True)
class Rule:
    """A scripted reply, the requests it answers, and how many times (None: always)."""

    reply: Reply
    match: Match = field(default_factory=Match)
    times: int | None = 1


#: A Python handler: returns a reply for requests it wants to answer, else None.
Handler = Callable[["LoggedRequest"], Reply | None]
Entry = Rule | Handler


@dataclass
class Script:
    """Per-provider queues of rules and handlers, plus the fallback reply.

    ``side_requests`` lets the server answer the CLIs' own side requests
    (Gemini's routing / next-speaker checks, Claude's structured-output
    acknowledgement...) with harmless built-in replies that use up no entry.
    """

    anthropic: list[Entry] = field(default_factory=list)
    openai: list[Entry] = field(default_factory=list)
    gemini: list[Entry] = field(default_factory=list)
    default: Reply = field(default_factory=lambda: Reply(text="OK"))
    side_requests: bool = True

    def queue(self, provider: str) -> list[Entry]:
        """The entries for ``provider`` (empty for an unknown provider)."""
        if provider not in PROVIDERS:
            return []
        entries: list[Entry] = getattr(self, provider)
        return entries

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Script:
        """Build a script from its YAML/JSON shape (see ``docs/stub-server.md``)."""
        if not isinstance(data, Mapping):
            raise ScriptError("a script must be a mapping")
        unknown = set(data) - {*PROVIDERS, "default", "side_requests"}
        if unknown:
            raise ScriptError(f"unknown script key(s): {', '.join(sorted(map(str, unknown)))}")
        script = cls(side_requests=bool(data.get("side_requests", True)))
        if "default" in data:
            script.default = _reply_from(data["default"], "default")
        for provider in PROVIDERS:
            raw = data.get(provider) or []
            if not isinstance(raw, Sequence) or isinstance(raw, str):
                raise ScriptError(f"{provider}: expected a list of entries")
            queue = script.queue(provider)
            for index, item in enumerate(raw):
                queue.append(_rule_from(item, f"{provider}[{index}]"))
        return script


def load_script(path: str | Path) -> Script:
    """Read a YAML script file (ruamel's safe loader)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        # One line: where, and what the parser found there (its message spans several).
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScriptError(f"{path}{where}: invalid YAML: {what}") from exc
    try:
        return Script.from_dict(data or {})
    except ScriptError as exc:
        raise ScriptError(f"{path}: {exc}") from exc


_REPLY_KEYS = {
    "text",
    "json",
    "structured",
    "tool_calls",
    "tool",
    "error",
    "hang",
    "delay",
    "usage",
}
_MATCH_KEYS = set(Match.__dataclass_fields__)


def _rule_from(item: Any, where: str) -> Rule:
    if not isinstance(item, Mapping):
        raise ScriptError(f"{where}: an entry must be a mapping")
    unknown = set(item) - _REPLY_KEYS - {"match", "times"}
    if unknown:
        raise ScriptError(f"{where}: unknown key(s): {', '.join(sorted(map(str, unknown)))}")
    match_data = item.get("match") or {}
    if not isinstance(match_data, Mapping) or set(match_data) - _MATCH_KEYS:
        raise ScriptError(f"{where}.match: expected keys among {', '.join(sorted(_MATCH_KEYS))}")
    times = item.get("times", 1)
    if times in ("always", None):
        times = None
    elif not isinstance(times, int) or isinstance(times, bool) or times < 1:
        raise ScriptError(f"{where}.times: expected a positive integer or 'always'")
    reply = _reply_from({k: v for k, v in item.items() if k in _REPLY_KEYS}, where)
    return Rule(reply=reply, match=Match(**dict(match_data)), times=times)


def _reply_from(data: Any, where: str) -> Reply:
    if isinstance(data, str):
        return Reply(text=data)
    if not isinstance(data, Mapping) or set(data) - _REPLY_KEYS:
        raise ScriptError(f"{where}: a reply is a string or a mapping of {sorted(_REPLY_KEYS)}")
    calls = list(data.get("tool_calls") or [])
    if "tool" in data:
        calls.insert(0, data["tool"])
    try:
        return Reply(
            text=str(data.get("text", "")),
            structured=data.get("json", data.get("structured")),
            tool_calls=tuple(_tool_call_from(call, where) for call in calls),
            error=_error_from(data["error"], where) if data.get("error") is not None else None,
            hang=bool(data.get("hang", False)),
            delay=float(data.get("delay", 0.0)),
            usage=Usage(**dict(data.get("usage") or {})),
        )
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"{where}: {exc}") from exc


def _tool_call_from(data: Any, where: str) -> ToolCall:
    if not isinstance(data, Mapping) or "name" not in data:
        raise ScriptError(f"{where}: a tool call is a mapping with a 'name'")
    extra = set(data) - {"name", "args", "input", "id"}
    if extra:
        raise ScriptError(f"{where}: unknown tool call key(s): {', '.join(sorted(extra))}")
    raw_input = data.get("input")
    return ToolCall(
        name=str(data["name"]),
        args=dict(data.get("args") or {}),
        input=None if raw_input is None else str(raw_input),
        id=None if data.get("id") is None else str(data["id"]),
    )


def _error_from(data: Any, where: str) -> ErrorReply:
    if isinstance(data, int) and not isinstance(data, bool):
        return ErrorReply(status=data)
    if not isinstance(data, Mapping) or set(data) - {"status", "message", "type", "retry_after"}:
        raise ScriptError(
            f"{where}.error: expected a status or {{status, message, type, retry_after}}"
        )
    retry_after = data.get("retry_after")
    return ErrorReply(
        status=int(data.get("status", 500)),
        message=str(data.get("message", "stub error")),
        type=str(data.get("type", "")),
        retry_after=None if retry_after is None else str(retry_after),
    )
