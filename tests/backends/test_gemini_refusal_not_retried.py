"""An API error the Gemini CLI reports that retrying cannot fix (a refused key, an unknown
model) is marked so: the engine does not spend its attempts on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_helpers import gemini_settings, make_request

from phasegate.agents.gemini import GeminiBackend
from phasegate.testing import Reply, Script, StubLLMServer

pytestmark = pytest.mark.cli_e2e


@pytest.mark.parametrize(
    ("status", "message"),
    [(401, "API key not valid. Please pass a valid API key."), (404, "models/x is not found")],
)
def test_a_refusal_is_not_worth_retrying(
    gemini_bin: Path, home: Path, work: Path, status: int, message: str
) -> None:
    script = Script(default=Reply.fail(status, message))
    with StubLLMServer(script) as stub:
        result = GeminiBackend(gemini_settings(stub, home)).run(make_request(work))
    assert not result.ok and result.error is not None
    assert result.permanent, result.error
    assert not result.bad_setting  # the run stops on the agent (exit 6), not on input
