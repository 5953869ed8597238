"""A server that is not the OpenAI-compatible API it was said to be, or that refuses the
call: ``phasegate run`` and ``doctor`` name what went wrong and what to check, in one line."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import STUB_KEY, init_git_repo
from ruamel.yaml import YAML

from cli_process import run_cli
from phasegate.testing import Reply, Script, StubLLMServer


@contextmanager
def raw_server(status: int, body: str, content_type: str) -> Iterator[str]:
    """A server answering every request with ``body``: its base URL (``.../v1``)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            payload = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _repo(tmp_path: Path, base_url: str | None, **settings: Any) -> Path:
    root = init_git_repo(tmp_path / "repo")
    (root / ".phasegate").mkdir()
    config = {
        "roles": {"default": {"backend": "openai"}},
        "backends": {"openai": {"model": "stub", "max_retries": 0}},
        "retries": {"agent": 0},
    }
    if base_url is not None:
        settings["base_url"] = base_url
    config["backends"]["openai"].update(settings)  # type: ignore[index]
    with open(root / ".phasegate" / "config.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(config, handle)
    created = run_cli(root, "new", "demo", "-d", "Add rate limiting")
    assert created.returncode == 0, created.stderr
    return root


def _run_error(root: Path) -> str:
    """The one error line of a run that failed on its agent (exit 6)."""
    result = run_cli(root, "run", "demo", "--until", "brainstorm")
    assert result.returncode == 6, (result.stdout, result.stderr)
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("phasegate: ")]
    assert "internal error" not in line and "Traceback" not in result.stderr
    assert line.startswith("phasegate: error: executor (openai) failed in phase brainstorm")
    return line


def _events(root: Path) -> list[dict[str, Any]]:
    journal = root / "docs" / "features" / "demo" / ".journal.jsonl"
    return [json.loads(x) for x in journal.read_text().splitlines()]


def test_a_body_that_is_not_json_fails_the_call_not_phasegate(tmp_path: Path) -> None:
    """A 200 whose body is not JSON was an internal error (exit 1, a JSONDecodeError)."""
    with raw_server(200, "this is not json", "application/json") as url:
        root = _repo(tmp_path, url)
        line = _run_error(root)
        assert "answered with a body that is not JSON" in line
        assert "check backends.openai.base_url" in line
        # The failure is journaled, and the next run tries again the same way.
        assert [e["event"] for e in _events(root)].count("agent.failed") == 1
        assert "not JSON" in _run_error(root)


def test_a_web_page_is_named_not_read_as_an_empty_answer(tmp_path: Path) -> None:
    """A URL serving a web page was reported as the model's bad files-in-JSON answer."""
    with raw_server(200, "<html><body>Welcome</body></html>", "text/html") as url:
        line = _run_error(_repo(tmp_path, url))
    assert "answered with text, not a chat completion" in line
    assert "Welcome" in line and "/v1" in line
    assert "files-in-JSON" not in line


def test_a_completion_without_choices_says_so(tmp_path: Path) -> None:
    body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "choices": []})
    with raw_server(200, body, "application/json") as url:
        line = _run_error(_repo(tmp_path, url))
    assert "answered a completion without choices" in line
    assert "files-in-JSON" not in line


def test_an_error_answered_with_http_200_is_named(tmp_path: Path) -> None:
    """Some servers answer an error with status 200: its message is what the user sees."""
    body = json.dumps({"error": {"message": "model qwen is not loaded", "code": 503}})
    with raw_server(200, body, "application/json") as url:
        line = _run_error(_repo(tmp_path, url))
    assert "without choices: error: 'model qwen is not loaded'" in line


def test_an_empty_answer_to_a_writer_says_so(tmp_path: Path) -> None:
    choice = {"index": 0, "message": {"role": "assistant", "content": None}}
    body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "choices": [choice]})
    with raw_server(200, body, "application/json") as url:
        line = _run_error(_repo(tmp_path, url))
    assert "the model's answer was empty" in line
    assert "Invalid JSON" not in line


def test_a_writer_cut_off_at_the_token_limit_names_max_tokens(tmp_path: Path) -> None:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": '{"summary": "Wrote', "refusal": None},
        "finish_reason": "length",
    }
    body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "choices": [choice]})
    with raw_server(200, body, "application/json") as url:
        line = _run_error(_repo(tmp_path, url, max_tokens=64))
    assert "cut off at the token limit: raise backends.openai.max_tokens, now 64" in line


def test_a_refused_key_names_the_variable_to_check(tmp_path: Path) -> None:
    script = Script(default=Reply.fail(401, "Incorrect API key provided"))
    with StubLLMServer(script) as stub:
        line = _run_error(_repo(tmp_path, stub.openai_url, api_key_env="MY_LLM_KEY"))
    assert "HTTP 401: Incorrect API key provided" in line
    assert "$MY_LLM_KEY" in line and STUB_KEY not in line


def test_an_unknown_model_names_the_model_setting(tmp_path: Path) -> None:
    script = Script(default=Reply.fail(404, "The model `stub` does not exist"))
    with StubLLMServer(script) as stub:
        line = _run_error(_repo(tmp_path, stub.openai_url))
    assert "HTTP 404" in line and "check the model name 'stub'" in line


def test_a_server_without_json_schema_support_names_json_mode(tmp_path: Path) -> None:
    script = Script(default=Reply.fail(400, "response_format json_schema is not supported"))
    with StubLLMServer(script) as stub:
        line = _run_error(_repo(tmp_path, stub.openai_url))
    assert "set backends.openai.json_mode to json_object or none" in line


def test_a_refused_connection_names_the_cause(tmp_path: Path) -> None:
    with StubLLMServer() as stub:
        url = stub.openai_url  # the port is free again once the stub stops
    line = _run_error(_repo(tmp_path, url))
    assert "Connection refused" in line and "is the server running" in line


def test_doctor_names_a_base_url_without_the_api_path(tmp_path: Path) -> None:
    """``/models`` answering 404 (base_url missing its ``/v1``) was reported usable."""
    with StubLLMServer() as stub:
        root = _repo(tmp_path, stub.url)
        result = run_cli(root, "doctor", "--json")
    assert result.returncode == 6, result.stderr
    (row,) = [r for r in json.loads(result.stdout)["backends"] if r["backend"] == "openai"]
    assert row["usable"] is False
    assert "answered HTTP 404 for /models" in row["detail"] and "/v1" in row["detail"]


def test_doctor_names_a_web_page(tmp_path: Path) -> None:
    """A web page at base_url made doctor print an AttributeError."""
    with raw_server(200, "<html>Welcome</html>", "text/html") as url:
        root = _repo(tmp_path, url)
        result = run_cli(root, "doctor", "--json")
    assert result.returncode == 6, result.stderr
    (row,) = [r for r in json.loads(result.stdout)["backends"] if r["backend"] == "openai"]
    assert row["usable"] is False
    assert "not JSON ('<html>Welcome</html>')" in row["detail"]
    assert "AttributeError" not in row["detail"]


def test_doctor_names_a_refused_connection(tmp_path: Path) -> None:
    with StubLLMServer() as stub:
        url = stub.openai_url
    result = run_cli(_repo(tmp_path, url), "doctor", "--json")
    (row,) = [r for r in json.loads(result.stdout)["backends"] if r["backend"] == "openai"]
    assert "Connection refused" in row["detail"]


def test_a_missing_key_stops_the_run_before_the_call_is_journaled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hosted API without a key: the run stops naming the role and the variable, and
    the next run does not find a call left half done (it was journaled as dispatched)."""
    monkeypatch.delenv("OPENAI_API_KEY")
    root = _repo(tmp_path, None)  # the hosted API
    first = run_cli(root, "run", "demo")
    assert first.returncode == 6, (first.stdout, first.stderr)
    assert first.stderr.strip().splitlines()[-1] == (
        "phasegate: error: executor: backend 'openai': OPENAI_API_KEY is not set "
        "(set it, or set backends.openai.base_url for a server that needs no key)"
    )
    assert "agent.dispatched" not in {e["event"] for e in _events(root)}
    again = run_cli(root, "run", "demo")
    assert again.returncode == 6
    assert "interrupted" not in again.stdout and "partial-phase" not in again.stdout
