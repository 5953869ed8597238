"""Suite-wide safety: no test may reach a real LLM provider.

Provider keys are removed from the environment and the providers' base URLs
point at a closed loopback port, so an accidental real call fails at once
instead of leaving the machine. Tests that need an agent use the scripted
backend or the stub LLM server (``phasegate.testing``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import codex_homes

_PROVIDER_KEYS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "CODEX_API_KEY",
)
_CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens there


@pytest.fixture(autouse=True)
def _no_real_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in _PROVIDER_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", _CLOSED)
    monkeypatch.setenv("OPENAI_BASE_URL", _CLOSED + "/v1")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", _CLOSED)
    monkeypatch.delenv("PHASEGATE_CRASH_AT", raising=False)
    # `phasegate init` must not pick up agent CLIs installed on the developer's PATH.
    monkeypatch.setenv("PHASEGATE_AGENT_CLIS", "none")
    # Every state commit also encodes afresh and fails if the incremental encoder differs.
    monkeypatch.setenv("PHASEGATE_CHECK_ENCODING", "1")


@pytest.fixture(autouse=True, scope="session")
def _codex_homes_outside_tmp() -> Iterator[None]:
    """The session's folder for the tests' CODEX_HOMEs (see codex_homes), removed at its end."""
    yield
    codex_homes.end_session()
