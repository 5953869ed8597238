"""An OpenAI-compatible chat model (OpenAI, Ollama, llama.cpp, vLLM, LM Studio...) as a backend.

Calls ``POST {base_url}/chat/completions`` through the official ``openai``
SDK. Structured answers use JSON mode (``response_format`` json_schema, or
json_object for servers without schema support) and are parsed and checked
with pydantic.

A chat model cannot edit files. For writer roles the model is told to answer
with a files-in-JSON object (:mod:`phasegate.agents.file_edits`), which this
backend checks and applies inside the work tree only. Read-only roles get no
such instructions and nothing they answer is written anywhere.

The whole call, retries included, is bounded by the request's timeout.
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from phasegate.agents.base import (
    TIMEOUT_EXIT,
    Access,
    AgentRequest,
    AgentResult,
    Availability,
    Backend,
    TokenUsage,
)
from phasegate.agents.cli_support import Pricing, parse_settings, redacted
from phasegate.agents.file_edits import (
    FILE_EDITS_SCHEMA,
    FileEdits,
    UnsafePath,
    apply_edits,
    protocol_text,
)
from phasegate.errors import BackendUnavailable, ConfigError
from phasegate.redact import Redactor

if TYPE_CHECKING:
    import openai

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```\s*$", re.S)
_RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
#: A refused API key, an unknown model (or URL): another attempt would only be refused again.
_PERMANENT_STATUS = frozenset({401, 403, 404})
PROBE_TIMEOUT = 5.0


class OpenAISettings(BaseModel):
    """Settings of the ``openai`` backend (``backends.openai`` merged with the role's)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_dir: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    json_mode: Literal["json_schema", "json_object", "none"] = "json_schema"
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)
    extra_body: dict[str, Any] = {}
    pricing: Pricing | None = None


class _Timeout(Exception):
    pass


class _NotACompletion(Exception):
    """The server answered 2xx with something that is not a chat completion."""


class OpenAIChatBackend(Backend):
    """A chat-completions model; writers answer with files-in-JSON."""

    name = "openai"
    structured_output = True
    # The model only answers; this backend applies its file edits within run().
    writes_files = True

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        parse_settings(cls.name, OpenAISettings, settings)

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(settings)
        parsed = parse_settings(self.name, OpenAISettings, self.settings)
        assert isinstance(parsed, OpenAISettings)
        self.cfg = parsed
        if not parsed.model:
            raise ConfigError(
                "backend 'openai': no model configured "
                "(set backends.openai.model, and base_url for a local server)"
            )
        self.model: str = parsed.model
        # Found out now, before a call is journaled: the run stops before its node starts.
        self._missing_key()
        # Without JSON mode nothing holds the model to the schema: the engine then states
        # the schema in the prompt and reads the answer as text, conservatively.
        self.structured_output = parsed.json_mode != "none"

    # -- credentials ---------------------------------------------------------------

    def _api_key(self) -> str | None:
        key = os.environ.get(self.cfg.api_key_env)
        if key:
            return key
        # Self-hosted servers (Ollama, llama.cpp, vLLM...) usually need no key.
        return "unused" if self.cfg.base_url else None

    def _client(self, timeout: float) -> openai.OpenAI:
        # Imported here: the SDK takes half a second to import, and every
        # phasegate command loads all backends through the registry.
        import openai

        key = self._missing_key()
        return openai.OpenAI(
            api_key=key, base_url=self.cfg.base_url, timeout=timeout, max_retries=0
        )

    def _missing_key(self) -> str:
        """The API key; :class:`BackendUnavailable` when the hosted API would get none."""
        key = self._api_key()
        if key is None:
            raise BackendUnavailable(
                f"backend 'openai': {self.cfg.api_key_env} is not set "
                "(set it, or set backends.openai.base_url for a server that needs no key)"
            )
        return key

    def availability(self) -> Availability:
        import openai

        try:
            client = self._client(PROBE_TIMEOUT)
        except BackendUnavailable as exc:
            return Availability(False, str(exc))
        where = self.cfg.base_url or "api.openai.com"
        try:
            with client:
                # The raw answer: a server that is not the API (a web page) is named, not parsed.
                listing = client.models.with_raw_response.list().http_response
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                return Availability(
                    False,
                    f"{where} refused the API key (HTTP {exc.status_code})"
                    + self._advice(401, "", self.model),
                )
            if exc.status_code == 404:
                return Availability(False, f"{where} answered HTTP 404 for /models{_NOT_THE_API}")
            # Some servers do not list models; they answered, which is what matters here.
            return Availability(True, f"model {self.model} at {where}")
        except openai.APIError as exc:
            return Availability(False, f"{where} is not reachable: {_cause(exc)}")
        try:
            listing.json()
        except ValueError:
            return Availability(
                False,
                f"{where} answered /models with a body that is not JSON "
                f"({_excerpt(listing.text)}){_NOT_THE_API}",
            )
        return Availability(True, f"model {self.model} at {where}")

    # -- the call ------------------------------------------------------------------

    def run(self, request: AgentRequest) -> AgentResult:
        started = time.monotonic()
        if request.mcp_servers:
            raise ConfigError("backend 'openai': a chat model cannot use MCP servers")
        key = os.environ.get(self.cfg.api_key_env, "")
        redactor = Redactor([key] if key else [])
        writer = request.access is Access.WRITE
        kwargs = self._arguments(request, writer)
        deadline = started + request.timeout
        result = self._call_with_retries(kwargs, deadline, request.timeout)
        final = result if isinstance(result, AgentResult) else self._result(request, result, writer)
        if final.cost_usd is None and self.cfg.pricing is not None:
            final = replace(final, cost_usd=self.cfg.pricing.cost(final.usage))
        return redacted(replace(final, duration_s=time.monotonic() - started), redactor)

    def _arguments(self, request: AgentRequest, writer: bool) -> dict[str, Any]:
        system = [request.instructions.strip()] if request.instructions.strip() else []
        schema: Mapping[str, Any] | None = None
        if writer:
            system.append(protocol_text(request.workdir, request.extra_dirs))
            schema = FILE_EDITS_SCHEMA
        elif request.output_schema is not None:
            schema = request.output_schema
            if self.cfg.json_mode == "json_schema":
                system.append("Answer with only a JSON object that matches the requested schema.")
            else:  # json_object mode holds the model to JSON only: the schema is stated here
                system.append(
                    "Answer with only a JSON object that matches this JSON schema:\n"
                    + json.dumps(dict(schema))
                )
        user = "\n\n".join(f"## {p.title}\n\n{p.body.rstrip()}" for p in request.prompt)
        messages = [{"role": "system", "content": "\n\n".join(system)}] if system else []
        messages.append({"role": "user", "content": user or "(no input)"})
        kwargs: dict[str, Any] = {"model": request.model or self.model, "messages": messages}
        if schema is not None and self.cfg.json_mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": dict(schema), "strict": True},
            }
        elif schema is not None and self.cfg.json_mode == "json_object":
            kwargs["response_format"] = {"type": "json_object"}
        if self.cfg.temperature is not None:
            kwargs["temperature"] = self.cfg.temperature
        if self.cfg.max_tokens is not None:
            kwargs["max_tokens"] = self.cfg.max_tokens
        if self.cfg.extra_body:
            kwargs["extra_body"] = dict(self.cfg.extra_body)
        return kwargs

    def _call_with_retries(self, kwargs: dict[str, Any], deadline: float, timeout: float) -> Any:
        """The completion, or a failed result once retries or time run out."""
        import openai

        where = self.cfg.base_url or "api.openai.com"
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise _Timeout
                return self._call_bounded(kwargs, remaining)
            except _Timeout:
                return AgentResult(
                    text="",
                    exit_status=TIMEOUT_EXIT,
                    error=f"openai: {where} did not answer within {timeout:g}s (phasegate's limit)",
                )
            except _NotACompletion as exc:
                # A web page or a proxy's answer: the URL is wrong, retrying here cannot help.
                return AgentResult(text="", exit_status=1, error=f"openai: {where} {exc}")
            except openai.APIStatusError as exc:
                retry = exc.status_code in _RETRY_STATUS
                permanent = exc.status_code in _PERMANENT_STATUS
                error = (
                    f"openai: {where} answered HTTP {exc.status_code}: {_message(exc)}"
                    f"{self._advice(exc.status_code, _message(exc), kwargs['model'])}"
                )
                asked = retry_after(exc.response.headers) if retry else None
            except openai.APIError as exc:
                retry, permanent = True, False
                error = f"openai: request to {where} failed: {_cause(exc)}"
                if isinstance(exc, openai.APIConnectionError):
                    error += (
                        " (is the server running at backends.openai.base_url?)"
                        if self.cfg.base_url
                        else " (is api.openai.com reachable from here?)"
                    )
                asked = None
            attempt += 1
            pause = min(2.0 ** (attempt - 1), 8.0) if asked is None else asked
            # The wait the server asked for goes with the failure: the engine's next
            # attempt (timeouts and retries in config) keeps to it.
            if not retry or attempt > self.cfg.max_retries:
                return AgentResult(
                    text="", exit_status=1, error=error, retry_after=asked, permanent=permanent
                )
            if time.monotonic() + pause >= deadline:
                if asked is not None:
                    error += f" (it asked to retry after {asked:g}s, past the {timeout:g}s limit)"
                return AgentResult(text="", exit_status=1, error=error, retry_after=asked)
            time.sleep(pause)

    def _call_bounded(self, kwargs: dict[str, Any], remaining: float) -> Any:
        """One request, abandoned (its connection closed) when ``remaining`` runs out."""
        import openai

        client = self._client(remaining)
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["value"] = client.chat.completions.create(**kwargs)
            except BaseException as exc:  # handed to the waiting thread
                box["error"] = exc

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(remaining)
        if worker.is_alive():
            client.close()  # unblocks the worker's read
            raise _Timeout
        client.close()
        if "error" in box:
            if isinstance(box["error"], openai.APITimeoutError):
                raise _Timeout
            if isinstance(box["error"], json.JSONDecodeError):  # a body that is not JSON
                raise _NotACompletion(
                    f"answered with a body that is not JSON ({box['error']}){_NOT_THE_API}"
                ) from None
            raise box["error"]
        value = box["value"]
        if isinstance(value, str):  # the SDK hands back a body that is not JSON as text
            raise _NotACompletion(
                f"answered with text, not a chat completion ({_excerpt(value)}){_NOT_THE_API}"
            )
        return value

    def _advice(self, status: int, message: str, model: str) -> str:
        """What to check in the config for an HTTP error that retrying cannot fix."""
        if status in (401, 403):
            return (
                f" (check the API key in ${self.cfg.api_key_env}, "
                "or backends.openai.api_key_env for another variable)"
            )
        if status == 404:
            return (
                f" (check the model name {model!r} (the role's model, or "
                "backends.openai.model) and base_url)"
            )
        if status == 400 and "response_format" in message and self.cfg.json_mode != "none":
            return (
                " (a server without JSON schema support: "
                "set backends.openai.json_mode to json_object or none)"
            )
        return ""

    def _result(self, request: AgentRequest, completion: Any, writer: bool) -> AgentResult:
        choices = getattr(completion, "choices", None) or []
        usage = _usage(getattr(completion, "usage", None))
        if not choices:
            where = self.cfg.base_url or "api.openai.com"
            # Some servers answer an error with HTTP 200: its message says what went wrong.
            extra = getattr(completion, "model_extra", None) or {}
            problem = extra.get("error") if isinstance(extra, Mapping) else None
            if isinstance(problem, Mapping):
                problem = problem.get("message") or problem
            why = f": error: {_excerpt(str(problem), 200)}" if problem else " (no answer)"
            return AgentResult(
                text="",
                exit_status=1,
                usage=usage,
                error=f"openai: {where} answered a completion without choices{why}",
            )
        content = choices[0].message.content or ""
        finish = choices[0].finish_reason
        if writer and not content.strip():
            return AgentResult(
                text="",
                exit_status=1,
                usage=usage,
                error=f"openai: the model's answer was empty (finish_reason: {finish})",
            )
        if writer:
            return self._apply(request, content, usage, finish)
        structured = _json_object(content) if request.output_schema is not None else None
        cut_off = self._cut_off("answer") if finish == "length" else None
        return AgentResult(text=content, structured=structured, usage=usage, cut_off=cut_off)

    def _cut_off(self, what: str) -> str:
        """That the model's ``what`` stopped at the token limit, and the setting to change."""
        if self.cfg.max_tokens:
            return (
                f"the {what} was cut off at the token limit: raise "
                f"backends.openai.max_tokens, now {self.cfg.max_tokens}"
            )
        return (
            f"the {what} was cut off at the server's token limit: "
            "set backends.openai.max_tokens to ask for more"
        )

    def _apply(
        self, request: AgentRequest, content: str, usage: TokenUsage, finish: str | None
    ) -> AgentResult:
        try:
            edits = FileEdits.model_validate_json(_unfenced(content))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "reply"
            cut = f" ({self._cut_off('reply')})" if finish == "length" else ""
            return AgentResult(
                text=content,
                exit_status=1,
                usage=usage,
                error=(
                    f"openai: the reply is not a files-in-JSON answer{cut}: {where}: {first['msg']}"
                ),
            )
        try:
            changed = apply_edits(edits, request.workdir, request.extra_dirs)
        except UnsafePath as exc:
            return AgentResult(
                text=edits.summary,
                exit_status=1,
                usage=usage,
                error=f"openai: refused the model's file edits, nothing was written: {exc}",
            )
        except OSError as exc:
            return AgentResult(
                text=edits.summary,
                exit_status=1,
                usage=usage,
                error=f"openai: could not write the model's file edits: {exc}",
            )
        listing = "\n".join(f"- {path}" for path in changed) or "- (no files)"
        text = f"{edits.summary.strip()}\n\nFiles changed:\n{listing}".strip()
        return AgentResult(text=text, usage=usage)


def _unfenced(text: str) -> str:
    stripped = text.strip()
    match = _FENCE.match(stripped)
    return match.group(1) if match else stripped


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(_unfenced(text))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _usage(raw: Any) -> TokenUsage:
    """Chat usage: cached prompt tokens are part of ``prompt_tokens``; kept apart here."""
    if raw is None:
        return TokenUsage()
    prompt = int(getattr(raw, "prompt_tokens", 0) or 0)
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return TokenUsage(
        input_tokens=max(0, prompt - cached),
        output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=cached,
    )


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a ``Retry-After`` header asks for (seconds or an HTTP date), if any.

    ``retry-after-ms`` (sent by OpenAI's API) is read first; a date in the
    past means "now"; an unreadable value is ignored.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        with contextlib.suppress(ValueError):
            return max(0.0, float(millis) / 1000)
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, (when - datetime.datetime.now(datetime.UTC)).total_seconds())


_NOT_THE_API = (
    "; check backends.openai.base_url: the OpenAI-compatible API's root, often ending in /v1"
)


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def _cause(exc: BaseException) -> str:
    """``exc`` and what caused it (``Connection error.`` says little; ``refused`` does)."""
    text = f"{exc.__class__.__name__}: {exc}"
    cause = exc.__cause__ or exc.__context__
    while cause is not None and cause.__cause__ is not None:
        cause = cause.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" ({cause})"
    return text


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and inner.get("message"):
            return str(inner["message"])
    return str(exc.message)
