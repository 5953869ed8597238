"""A CLI that refuses its arguments (a bad ``extra_args``) fails naming the argument.

Codex prints its error first and usage lines after it, Gemini its whole help
after ``Unknown arguments: ...``; the failure quotes the error line, not the
last line of the help.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from backend_helpers import (
    VERDICT_SCHEMA,
    claude_settings,
    cli_path,
    codex_settings,
    gemini_settings,
    make_request,
)

from phasegate.agents.claude import ClaudeBackend
from phasegate.agents.cli_support import CliBackend
from phasegate.agents.codex import CodexBackend
from phasegate.agents.gemini import GeminiBackend
from phasegate.testing import Reply, Script, StubLLMServer

pytestmark = pytest.mark.cli_e2e

Settings = Callable[..., dict[str, Any]]
CASES: list[tuple[str, type[CliBackend], Settings, str]] = [
    ("claude", ClaudeBackend, claude_settings, "error: unknown option '--bogus-flag'"),
    ("codex", CodexBackend, codex_settings, "error: unexpected argument '--bogus-flag' found"),
    ("gemini", GeminiBackend, gemini_settings, "Unknown arguments: bogus-flag"),
]


@pytest.mark.parametrize(("name", "backend", "settings", "named"), CASES, ids=[c[0] for c in CASES])
def test_unknown_extra_argument_is_named_in_the_error(
    name: str, backend: type[CliBackend], settings: Settings, named: str, home: Path, work: Path
) -> None:
    if cli_path(name) is None:
        pytest.skip(f"node_modules/.bin/{name} is not installed")
    with StubLLMServer(Script(default=Reply(text="hi"))) as stub:
        base = settings(stub, home)
        configured = {**base, "extra_args": [*base.get("extra_args", []), "--bogus-flag"]}
        result = backend(configured).run(make_request(work, "Review.", schema=VERDICT_SCHEMA))
    assert not result.ok
    assert result.error is not None and named in result.error, result.error
