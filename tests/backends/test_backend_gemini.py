"""The gemini backend driving the real Gemini CLI against the stub server."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from backend_helpers import (
    APPROVE,
    GEMINI_MODEL,
    VERDICT_SCHEMA,
    gemini_settings,
    make_request,
    read_verdict,
)

from phasegate.agents.base import Access
from phasegate.agents.gemini import GeminiBackend
from phasegate.testing import Match, Reply, Rule, Script, StubLLMServer, Usage

pytestmark = pytest.mark.cli_e2e


def _write_then_text(target: Path, text: str) -> Script:
    return Script(
        gemini=[
            Rule(
                Reply.tool("write_file", file_path=str(target), content="written by gemini\n"),
                Match(tool_result=False),
            ),
            Rule(Reply(text=text), Match(tool_result=True)),
        ]
    )


def test_prompt_workspace_model_and_tokens(gemini_bin: Path, home: Path, work: Path) -> None:
    """Stdin prompt, workdir and model reach the provider; tokens and session id come back."""
    usage = Usage(input_tokens=150, output_tokens=30, cache_read_tokens=50)
    with StubLLMServer(Script(gemini=[Rule(Reply(text="plain answer", usage=usage))])) as stub:
        result = GeminiBackend(gemini_settings(stub, home)).run(make_request(work, "Summarise."))
        (turn,) = stub.model_requests("gemini")
    assert result.ok, result.error
    assert result.text == "plain answer"
    assert "Summarise." in turn.prompt and str(work) in turn.prompt
    assert turn.model == GEMINI_MODEL
    assert result.session_id and result.cost_usd is None
    assert (result.usage.input_tokens, result.usage.cache_read_tokens) == (150, 50)
    assert result.usage.output_tokens == 30


def test_writer_writes_in_auto_edit_mode(gemini_bin: Path, home: Path, work: Path) -> None:
    """Writers run with ``--approval-mode auto_edit``: write_file creates the file."""
    target = work / "notes.md"
    with StubLLMServer(_write_then_text(target, "done")) as stub:
        backend = GeminiBackend(gemini_settings(stub, home))
        result = backend.run(make_request(work, "Write notes.", access=Access.WRITE))
    assert result.ok, result.error
    assert target.read_text() == "written by gemini\n"


def test_read_only_role_cannot_write(gemini_bin: Path, home: Path, work: Path) -> None:
    """Reviewers run in plan mode: write_file in the work tree is denied, and by default it
    is not even offered."""
    target = work / "hacked.md"
    with StubLLMServer(_write_then_text(target, "could not write")) as stub:
        backend = GeminiBackend(gemini_settings(stub, home, read_only_tools=["default"]))
        result = backend.run(make_request(work, "Review.", access=Access.READ_ONLY))
        turns = stub.model_requests("gemini")
    assert result.ok, result.error
    assert not target.exists()
    assert "write_file" in turns[0].tools
    assert "plans directory" in turns[1].last
    with StubLLMServer(_write_then_text(target, "could not write")) as stub:
        backend = GeminiBackend(gemini_settings(stub, home))
        result = backend.run(make_request(work, "Review.", access=Access.READ_ONLY))
        turns = stub.model_requests("gemini")
    assert result.ok, result.error
    assert not target.exists()
    assert "write_file" not in turns[0].tools
    assert 'Tool \\"write_file\\" not found' in turns[1].last


def _offered(home: Path, work: Path, access: Access, **settings: object) -> tuple[str, ...]:
    with StubLLMServer(Script(gemini=[Rule(Reply(text="ok"))])) as stub:
        backend = GeminiBackend(gemini_settings(stub, home, **settings))
        result = backend.run(make_request(work, "Go.", access=access))
        (turn,) = stub.model_requests("gemini")
    assert result.ok, result.error
    return turn.tools


def test_each_kind_of_role_is_offered_exactly_its_tool_set(
    gemini_bin: Path, home: Path, work: Path
) -> None:
    """Least privilege and fewer tokens: writers get the file tools, reviewers the read
    tools; no shell, web search, sub-agents or plan-mode switches (Gemini's own set offers
    those to both)."""
    assert sorted(_offered(home, work, Access.WRITE)) == [
        "glob",
        "grep_search",
        "list_directory",
        "read_file",
        "replace",
        "write_file",
    ]
    reader = sorted(_offered(home, work, Access.READ_ONLY))
    assert reader == ["glob", "grep_search", "list_directory", "read_file"]
    full = _offered(home, work, Access.WRITE, tools=["default"])
    assert {"google_web_search", "invoke_agent"} <= set(full)


def test_tools_setting_chooses_what_a_role_is_offered(
    gemini_bin: Path, home: Path, work: Path
) -> None:
    """``tools`` and ``read_only_tools`` (per backend or per role) are the sets offered."""
    writer = _offered(home, work, Access.WRITE, tools=["read_file", "run_shell_command"])
    assert sorted(writer) == ["read_file", "run_shell_command"]
    reader = _offered(home, work, Access.READ_ONLY, read_only_tools=["read_file"])
    assert list(reader) == ["read_file"]


def test_json_verdict_is_read_from_the_text(gemini_bin: Path, home: Path, work: Path) -> None:
    """Gemini has no schema flag: a JSON answer in the response text is read as the verdict."""
    script = Script(gemini=[Rule(Reply(text=json.dumps(APPROVE)))])
    with StubLLMServer(script) as stub:
        backend = GeminiBackend(gemini_settings(stub, home))
        result = backend.run(make_request(work, "Review.", schema=VERDICT_SCHEMA))
    assert result.ok, result.error
    assert result.structured is None
    reading = read_verdict(result)
    assert (reading.source, reading.approved) == ("json-text", True)


def test_api_error_reports_status_and_message(gemini_bin: Path, home: Path, work: Path) -> None:
    """An API error: the JSON report on stderr becomes the error, exit status = status mod 256."""
    with StubLLMServer(Script(default=Reply.fail(429, "quota exhausted"))) as stub:
        result = GeminiBackend(gemini_settings(stub, home)).run(make_request(work))
    assert not result.ok
    assert result.exit_status == 429 % 256
    assert result.error is not None
    assert "quota exhausted" in result.error and "code 429" in result.error


def test_hung_gemini_is_killed_by_the_timeout(gemini_bin: Path, home: Path, work: Path) -> None:
    """A stalled model: phasegate's timeout, not Gemini's own retries, bounds the call."""
    with StubLLMServer(Script(gemini=[Rule(Reply.stall("thinking"))])) as stub:
        backend = GeminiBackend(gemini_settings(stub, home))
        started = time.monotonic()
        result = backend.run(make_request(work, timeout=4.0))
        elapsed = time.monotonic() - started
    assert not result.ok and result.exit_status == 124
    assert elapsed < 4.0 + 8.0


@pytest.mark.parametrize("granted", [True, False])
def test_writer_writes_outside_the_tree_only_where_granted(
    gemini_bin: Path, home: Path, tmp_path: Path, granted: bool
) -> None:
    """The item folder outside the tree is writable through ``--include-directories`` only."""
    work, item_dir = tmp_path / "tree", tmp_path / "items" / "x"
    work.mkdir()
    item_dir.mkdir(parents=True)
    target = item_dir / "spec.md"
    extra = (item_dir,) if granted else ()
    with StubLLMServer(_write_then_text(target, "done")) as stub:
        backend = GeminiBackend(gemini_settings(stub, home))
        result = backend.run(make_request(work, "Write.", access=Access.WRITE, extra_dirs=extra))
    assert result.ok, result.error
    assert target.exists() is granted


def test_unselected_auth_with_a_base_url_is_unusable_and_exits_41(
    gemini_bin: Path, home: Path, work: Path
) -> None:
    """What doctor says matches what Gemini does: no auth type selected with a base URL
    makes the real CLI exit 41 before any request, and the backend reports it unusable."""
    bare_home = home / "bare-gemini-home"
    bare_home.mkdir()
    with StubLLMServer(Script(default=Reply(text="hi"))) as stub:
        settings = {**gemini_settings(stub, home), "config_dir": str(bare_home)}
        backend = GeminiBackend(settings)
        found = backend.availability()
        result = backend.run(make_request(work))
        requests = stub.model_requests("gemini")
    assert not found.usable and "selectedType" in found.detail
    assert result.exit_status == 41 and not requests
    assert backend.credentials(backend.child_env()) is None
