"""The openai backend (the official SDK) against the stub's chat completions."""

from __future__ import annotations

import email.utils
import json
import time
from pathlib import Path

import pytest
from backend_helpers import APPROVE, STUB_KEY, VERDICT_SCHEMA, make_request, openai_settings

from phasegate.agents.base import Access
from phasegate.agents.openai_chat import OpenAIChatBackend
from phasegate.errors import BackendUnavailable, ConfigError
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, Usage


def _edits(*files: tuple[str, str], summary: str = "Wrote it.") -> Reply:
    return Reply(
        text=json.dumps(
            {
                "summary": summary,
                "files": [{"path": p, "content": c} for p, c in files],
                "delete": [],
            }
        )
    )


def test_reviewer_verdict_uses_json_schema_mode(work: Path) -> None:
    """Reviewers ask for a json_schema ``response_format``; the JSON answer is the result."""
    with StubLLMServer(Script(openai=[Rule(Reply.json(APPROVE), Match(api="chat"))])) as stub:
        backend = OpenAIChatBackend(openai_settings(stub))
        result = backend.run(make_request(work, "Review the spec.", schema=VERDICT_SCHEMA))
        (turn,) = stub.model_requests("openai")
    assert result.ok, result.error
    assert result.structured == APPROVE
    assert turn.body["response_format"]["json_schema"]["schema"] == VERDICT_SCHEMA
    assert turn.model == "stub-chat-model" and "Review the spec." in turn.prompt


def test_tokens_keep_cached_prompt_tokens_apart(work: Path) -> None:
    """Cached prompt tokens are counted as cache reads, not as fresh input; pricing gives a cost."""
    usage = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=300)
    pricing = {"input": 1.0, "output": 2.0, "cache_read": 0.5}
    with StubLLMServer(Script(default=Reply(text="ok", usage=usage))) as stub:
        backend = OpenAIChatBackend(openai_settings(stub, pricing=pricing))
        result = backend.run(make_request(work))
    assert (result.usage.input_tokens, result.usage.cache_read_tokens) == (700, 300)
    assert result.usage.output_tokens == 200
    assert result.cost_usd == pytest.approx((700 * 1.0 + 200 * 2.0 + 300 * 0.5) / 1e6)


def test_writer_files_in_json_are_applied(work: Path) -> None:
    """A writer's files-in-JSON reply is written inside the work tree; the protocol is explained."""
    reply = _edits(("docs/spec.md", "# Spec\nR1\n"))
    with StubLLMServer(Script(openai=[Rule(reply)])) as stub:
        backend = OpenAIChatBackend(openai_settings(stub))
        result = backend.run(make_request(work, "Write the spec.", access=Access.WRITE))
        (turn,) = stub.model_requests("openai")
    assert result.ok, result.error
    assert (work / "docs/spec.md").read_text() == "# Spec\nR1\n"
    assert "Files changed:\n- docs/spec.md" in result.text
    assert "You cannot run tools or edit files yourself" in turn.system


def test_writer_path_escape_is_refused_and_nothing_written(work: Path) -> None:
    """One unsafe path refuses the whole reply: no file is written, the attempt fails."""
    reply = _edits(("ok.txt", "fine"), ("../outside.txt", "escape"))
    with StubLLMServer(Script(openai=[Rule(reply)])) as stub:
        result = OpenAIChatBackend(openai_settings(stub)).run(
            make_request(work, access=Access.WRITE)
        )
    assert not result.ok
    assert result.error is not None and "'..'" in result.error
    assert not (work / "ok.txt").exists() and not (work.parent / "outside.txt").exists()


def test_writer_reply_that_is_not_json_fails(work: Path) -> None:
    """A writer answering prose instead of files-in-JSON is a failed attempt."""
    with StubLLMServer(Script(default=Reply(text="Sure, here is the spec: ..."))) as stub:
        result = OpenAIChatBackend(openai_settings(stub)).run(
            make_request(work, access=Access.WRITE)
        )
    assert not result.ok
    assert result.error is not None and "not a files-in-JSON answer" in result.error


def test_reader_never_writes_files(work: Path) -> None:
    """A read-only role answering files-in-JSON writes nothing: its answer is only text."""
    with StubLLMServer(Script(openai=[Rule(_edits(("x.txt", "x")))])) as stub:
        result = OpenAIChatBackend(openai_settings(stub)).run(make_request(work))
    assert result.ok, result.error
    assert not (work / "x.txt").exists()


def test_server_errors_are_retried_then_fail(work: Path) -> None:
    """HTTP 503 is retried ``max_retries`` times, then the call fails naming the status."""
    with StubLLMServer(Script(default=Reply.fail(503, "overloaded"))) as stub:
        backend = OpenAIChatBackend(openai_settings(stub, max_retries=1))
        result = backend.run(make_request(work))
        calls = len(stub.model_requests("openai"))
    assert not result.ok
    assert result.error is not None and "HTTP 503" in result.error and "overloaded" in result.error
    assert calls == 2


def test_client_errors_are_not_retried(work: Path) -> None:
    """HTTP 400 cannot get better by retrying: one request, then failure."""
    with StubLLMServer(Script(default=Reply.fail(400, "bad model"))) as stub:
        result = OpenAIChatBackend(openai_settings(stub, max_retries=3)).run(make_request(work))
        calls = len(stub.model_requests("openai"))
    assert not result.ok and calls == 1


def _rate_limited_then(retry_after: str, answer: str = "after the wait") -> Script:
    return Script(
        openai=[
            Rule(Reply.fail(429, "slow down", retry_after=retry_after)),
            Rule(Reply(text=answer)),
        ]
    )


def _gap(stub: StubLLMServer) -> float:
    first, second = stub.model_requests("openai")
    return second.time - first.time


def test_retry_after_in_seconds_is_honoured(work: Path) -> None:
    """429 with ``Retry-After: 2``: the retry waits the 2 s the server asked for."""
    with StubLLMServer(_rate_limited_then("2")) as stub:
        result = OpenAIChatBackend(openai_settings(stub)).run(make_request(work, timeout=30))
        gap = _gap(stub)
    assert result.ok, result.error
    assert result.text == "after the wait"
    assert 1.9 <= gap < 5


def test_retry_after_as_an_http_date_is_honoured(work: Path) -> None:
    """``Retry-After`` may be an HTTP date: the retry waits until then."""
    when = email.utils.formatdate(time.time() + 3, usegmt=True)
    with StubLLMServer(_rate_limited_then(when)) as stub:
        result = OpenAIChatBackend(openai_settings(stub)).run(make_request(work, timeout=30))
        gap = _gap(stub)
    assert result.ok, result.error
    assert 1.9 <= gap < 5  # the date has whole-second precision


def test_retry_after_past_the_deadline_fails_at_once(work: Path) -> None:
    """A wait longer than the call has left is not slept through: fail now, say why."""
    script = Script(default=Reply.fail(429, "slow down", retry_after="60"))
    with StubLLMServer(script) as stub:
        backend = OpenAIChatBackend(openai_settings(stub, max_retries=3))
        started = time.monotonic()
        result = backend.run(make_request(work, timeout=10))
        elapsed = time.monotonic() - started
        calls = len(stub.model_requests("openai"))
    assert not result.ok and calls == 1 and elapsed < 3
    assert result.error is not None and "retry after 60s, past the 10s limit" in result.error


def test_hung_server_is_bounded_by_the_timeout(work: Path) -> None:
    """A server that never answers: the call returns as a timeout right after the limit."""
    with StubLLMServer(Script(openai=[Rule(Reply.stall(), times=None)])) as stub:
        backend = OpenAIChatBackend(openai_settings(stub))
        started = time.monotonic()
        result = backend.run(make_request(work, timeout=1.5))
        elapsed = time.monotonic() - started
    assert not result.ok and result.exit_status == 124
    assert elapsed < 1.5 + 2.0


def test_secret_in_the_answer_is_redacted(work: Path) -> None:
    """The API key echoed by the model does not come back in the result."""
    with StubLLMServer(Script(default=Reply(text=f"key={STUB_KEY}"))) as stub:
        result = OpenAIChatBackend(openai_settings(stub)).run(make_request(work))
    assert STUB_KEY not in result.text and "[REDACTED]" in result.text


def test_model_is_required(tmp_path: Path) -> None:
    """Without a model the backend is a configuration error naming the setting."""
    with pytest.raises(ConfigError, match=r"backends\.openai\.model"):
        OpenAIChatBackend({"base_url": "http://127.0.0.1:9/v1"})


def test_hosted_api_without_a_key_is_unavailable(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No base_url (the hosted API) and no key: BackendUnavailable names the variable
    (when the backend is made, before any call)."""
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(BackendUnavailable, match="OPENAI_API_KEY is not set"):
        OpenAIChatBackend({"model": "gpt-5.5"})


def test_json_object_mode_states_the_schema_to_the_model(work: Path) -> None:
    """json_object mode holds the model to JSON only: the schema itself is in the system
    message, so the model can know what to answer."""
    with StubLLMServer(Script(openai=[Rule(Reply.json(APPROVE), Match(api="chat"))])) as stub:
        backend = OpenAIChatBackend(openai_settings(stub, json_mode="json_object"))
        result = backend.run(make_request(work, "Review the spec.", schema=VERDICT_SCHEMA))
        (turn,) = stub.model_requests("openai")
    assert result.structured == APPROVE
    assert turn.body["response_format"] == {"type": "json_object"}
    system = turn.body["messages"][0]["content"]
    assert json.dumps(VERDICT_SCHEMA) in system


def test_without_json_mode_the_backend_does_not_claim_to_enforce_a_schema(work: Path) -> None:
    """json_mode none: nothing holds the model to the schema, so the engine must state it in
    the prompt and read the answer as text (free text is then read conservatively)."""
    with StubLLMServer(Script(default=Reply(text="ok"))) as stub:
        assert OpenAIChatBackend(openai_settings(stub)).structured_output
        assert not OpenAIChatBackend(openai_settings(stub, json_mode="none")).structured_output
