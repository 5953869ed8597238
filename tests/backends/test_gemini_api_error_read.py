"""An API error the Gemini CLI reports is named by the API's own status and message (not
its JSON body), with what to check when retrying cannot fix it."""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_helpers import STUB_KEY, gemini_settings, make_request

from phasegate.agents.gemini import GeminiBackend
from phasegate.testing import Reply, Script, StubLLMServer

pytestmark = pytest.mark.cli_e2e


def test_a_refused_key_is_named_without_its_json_body(
    gemini_bin: Path, home: Path, work: Path
) -> None:
    script = Script(default=Reply.fail(401, "API key not valid. Please pass a valid API key."))
    with StubLLMServer(script) as stub:
        result = GeminiBackend(gemini_settings(stub, home)).run(make_request(work))
    assert not result.ok and result.error is not None
    assert "UNAUTHENTICATED: API key not valid. Please pass a valid API key." in result.error
    assert '{"error"' not in result.error
    assert "check the key in GEMINI_API_KEY" in result.error
    assert STUB_KEY not in result.error


def test_an_unknown_model_names_the_model_setting(gemini_bin: Path, home: Path, work: Path) -> None:
    script = Script(default=Reply.fail(404, "models/gemini-9 is not found"))
    with StubLLMServer(script) as stub:
        result = GeminiBackend(gemini_settings(stub, home)).run(make_request(work))
    assert not result.ok and result.error is not None
    # Gemini reports the API's 404 as its own ModelNotFoundError (code 1): named as the 404.
    assert "(code 404)" in result.error and "models/gemini-9 is not found" in result.error
    assert "check backends.gemini.model and base_url" in result.error


def test_a_server_that_cannot_be_reached_is_named(gemini_bin: Path, home: Path, work: Path) -> None:
    with StubLLMServer() as stub:
        settings = gemini_settings(stub, home)  # the port is free again once the stub stops
    result = GeminiBackend(settings).run(make_request(work))
    assert not result.ok and result.error is not None
    assert f"fetch failed sending request (could not reach {stub.url})" in result.error
