"""Stub server behaviour common to all wire formats: rules, logging, limits, hangs."""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from phasegate.testing import LoggedRequest, Match, Reply, Rule, Script, StubLLMServer

MESSAGES = "/v1/messages"
PostJson = Callable[..., Any]


def _messages_body(prompt: str, stream: bool = False) -> dict[str, object]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "stream": stream,
        "messages": [{"role": "user", "content": prompt}],
    }


def _text(result_json: dict[str, object]) -> str:
    content = result_json["content"]
    assert isinstance(content, list)
    return "".join(block.get("text", "") for block in content)


def test_rules_are_spent_in_order(post_json: PostJson) -> None:
    """Each rule answers once (by default), so a queue plays out turn by turn."""
    script = Script(anthropic=[Rule(Reply(text="one")), Rule(Reply(text="two"))])
    with StubLLMServer(script) as stub:
        answers = [_text(post_json(stub.url + MESSAGES, _messages_body("hi")).json())]
        answers.append(_text(post_json(stub.url + MESSAGES, _messages_body("hi")).json()))
        answers.append(_text(post_json(stub.url + MESSAGES, _messages_body("hi")).json()))
    assert answers == ["one", "two", "OK"]


def test_match_skips_rules_for_other_requests(post_json: PostJson) -> None:
    """A rule whose match fails is left for a later request (executor vs reviewer)."""
    script = Script(
        anthropic=[
            Rule(Reply(text="verdict"), Match(prompt="review")),
            Rule(Reply(text="code"), Match(prompt="implement")),
        ]
    )
    with StubLLMServer(script) as stub:
        first = post_json(stub.url + MESSAGES, _messages_body("implement it")).json()
        second = post_json(stub.url + MESSAGES, _messages_body("now review it")).json()
    assert (_text(first), _text(second)) == ("code", "verdict")


def test_unmatched_request_gets_configured_default(post_json: PostJson) -> None:
    """Requests no rule fits get ``Script.default`` and are logged as such."""
    with StubLLMServer(Script(default=Reply(text="fallback"))) as stub:
        answer = post_json(stub.url + MESSAGES, _messages_body("anything")).json()
        (logged,) = stub.requests
    assert _text(answer) == "fallback"
    assert logged.answered_by == "default"


def test_handler_answers_and_is_never_spent(post_json: PostJson) -> None:
    """A Python handler answers every request it returns a reply for."""
    seen: list[str] = []

    def handler(request: LoggedRequest) -> Reply | None:
        seen.append(request.prompt)
        return Reply(text=f"call {len(seen)}") if "count" in request.prompt else None

    with StubLLMServer(Script(anthropic=[handler])) as stub:
        answers = [
            _text(post_json(stub.url + MESSAGES, _messages_body(p)).json())
            for p in ("count", "count", "other")
        ]
    assert answers == ["call 1", "call 2", "OK"]


def test_requests_are_logged_with_credentials_redacted(post_json: PostJson) -> None:
    """The log keeps headers and body but never a credential value."""
    with StubLLMServer() as stub:
        post_json(
            stub.url + MESSAGES + "?beta=true",
            _messages_body("hi"),
            headers={"x-api-key": "sk-secret", "Authorization": "Bearer sk-secret"},
        )
        (logged,) = stub.requests_for("anthropic")
    assert logged.header("x-api-key") == "<redacted>"
    assert logged.header("authorization") == "<redacted>"
    assert "sk-secret" not in json.dumps(logged.to_json())
    assert logged.body["messages"][0]["content"] == "hi"
    assert (logged.api, logged.model, logged.query) == (
        "messages",
        "claude-sonnet-4-5",
        {"beta": "true"},
    )


def test_jsonl_log_has_one_line_per_request(post_json: PostJson, tmp_path: Path) -> None:
    """With ``log_path`` every request is appended to a JSONL file as it arrives."""
    log = tmp_path / "requests.jsonl"
    with StubLLMServer(log_path=log) as stub:
        post_json(stub.url + MESSAGES, _messages_body("first"))
        post_json(stub.url + "/nowhere", {})
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["provider"], line["prompt"]) for line in lines] == [
        ("anthropic", "first"),
        ("unknown", ""),
    ]


def test_oversized_body_is_rejected_with_413(post_json: PostJson) -> None:
    """A body over ``max_body_bytes`` gets 413 with a provider-shaped error."""
    with StubLLMServer(max_body_bytes=1000) as stub:
        result = post_json(stub.url + MESSAGES, _messages_body("x" * 5000))
        (logged,) = stub.requests
    assert result.status == 413
    assert result.json()["error"]["type"] == "request_too_large"
    assert logged.answered_by == "rejected too-large"


def test_unknown_path_is_404_and_logged(post_json: PostJson) -> None:
    """Paths no provider uses get a harmless 404 and still appear in the log."""
    with StubLLMServer() as stub:
        result = post_json(stub.url + "/telemetry/events", {"x": 1})
        (logged,) = stub.requests
    assert result.status == 404
    assert (logged.provider, logged.answered_by) == ("unknown", "builtin 404")


def test_client_disconnect_mid_stream_leaves_server_serving(post_json: PostJson) -> None:
    """A client that drops a stalled stream does not take the server down."""
    script = Script(anthropic=[Rule(Reply.stall("partial"))])
    with StubLLMServer(script) as stub:
        body = json.dumps(_messages_body("hi", stream=True)).encode()
        head = (
            f"POST {MESSAGES} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        with socket.create_connection((stub.host, stub.port), timeout=5) as conn:
            conn.sendall(head + body)
            received = b""
            while b"partial" not in received:  # the stream arrives in several packets
                chunk = conn.recv(65536)
                assert chunk, "the server closed the stream early"
                received += chunk
        time.sleep(0.5)
        after = post_json(stub.url + MESSAGES, _messages_body("again"))
    assert _text(after.json()) == "OK"


def test_hang_reply_sends_nothing(post_json: PostJson) -> None:
    """A hang reply never answers a non-streaming request: the client times out."""
    with StubLLMServer(Script(anthropic=[Rule(Reply.stall())])) as stub:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            post_json(stub.url + MESSAGES, _messages_body("hi"), timeout=1.0)
        assert time.monotonic() - started >= 1.0
        assert stub.requests[0].answered_by == "rule anthropic[0]"


def test_delay_postpones_the_answer(post_json: PostJson) -> None:
    """``delay`` holds the answer back for that many seconds."""
    with StubLLMServer(Script(anthropic=[Rule(Reply(text="late", delay=0.5))])) as stub:
        started = time.monotonic()
        answer = post_json(stub.url + MESSAGES, _messages_body("hi")).json()
    assert _text(answer) == "late"
    assert time.monotonic() - started >= 0.5


def test_unused_rules_lists_rules_with_answers_left(post_json: PostJson) -> None:
    """``unused_rules`` lets a test check its whole script was played."""
    script = Script(anthropic=[Rule(Reply(text="a")), Rule(Reply(text="b"), times=2)])
    with StubLLMServer(script) as stub:
        post_json(stub.url + MESSAGES, _messages_body("hi"))
        post_json(stub.url + MESSAGES, _messages_body("hi"))
        left = stub.unused_rules()
    assert [(provider, index) for provider, index, _ in left] == [("anthropic", 1)]


def test_process_mode_prints_url_and_serves_the_script(tmp_path: Path, post_json: PostJson) -> None:
    """``python -m phasegate.testing.stub_server`` prints its URL and answers from YAML."""
    script = tmp_path / "script.yaml"
    script.write_text("anthropic:\n  - text: from yaml\n")
    log = tmp_path / "log.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "phasegate.testing.stub_server",
            "--script",
            str(script),
            "--log",
            str(log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        answer = post_json(url + MESSAGES, _messages_body("hi")).json()
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    assert _text(answer) == "from yaml"
    assert proc.returncode == 0, stderr
    assert json.loads(log.read_text())["answered_by"] == "rule anthropic[0]"


def test_process_mode_rejects_a_bad_script(tmp_path: Path) -> None:
    """A malformed script file exits with status 2 and a one-line reason."""
    script = tmp_path / "script.yaml"
    script.write_text("anthropic: [{bogus: 1}]\n")
    result = subprocess.run(
        [sys.executable, "-m", "phasegate.testing.stub_server", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "anthropic[0]: unknown key(s): bogus" in result.stderr


def test_gzip_request_body_is_inflated(post_json: PostJson) -> None:
    """A gzip-encoded body is read like a plain one."""
    body = gzip.compress(json.dumps(_messages_body("zipped prompt")).encode())
    with StubLLMServer() as stub:
        post_json(stub.url + MESSAGES, body, headers={"Content-Encoding": "gzip"})
        (logged,) = stub.requests
    assert logged.prompt == "zipped prompt"
