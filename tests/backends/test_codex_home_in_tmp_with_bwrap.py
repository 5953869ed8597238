"""A Codex reviewer whose CODEX_HOME is in the temporary folder, with a bwrap installed.

Codex then refuses to create its sandbox helper there, and every sandboxed
command fails with only ``bwrap: execvp codex-linux-sandbox``: the call's
error says what to change.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from backend_helpers import codex_settings, make_request

from phasegate.agents.base import Access
from phasegate.agents.codex import CodexBackend
from phasegate.testing import Reply, Script, StubLLMServer

pytestmark = pytest.mark.cli_e2e


def test_the_error_names_codex_home_in_the_temporary_folder(
    codex_bin: Path, home: Path, work: Path
) -> None:
    """The call fails in one line naming the config dir and what to change."""
    if shutil.which("bwrap") is None:
        pytest.skip("no bwrap on PATH: Codex uses its own and the case does not arise")
    if not str(home).startswith((tempfile.gettempdir(), "/tmp")):
        pytest.skip("the test's home is not in the temporary folder")
    with StubLLMServer(Script(default=Reply(text="ok"))) as stub:
        # The other tests' CODEX_HOME is outside the temporary folder (codex_homes).
        settings = codex_settings(stub, home, config_dir=str(home / "codex-home"))
        backend = CodexBackend(settings)
        result = backend.run(make_request(work, "Review.", access=Access.READ_ONLY))
    assert not result.ok
    assert result.error is not None and "\n" not in result.error
    assert "execvp codex-linux-sandbox" in result.error
    assert f"CODEX_HOME ({home / 'codex-home'}) is in the temporary folder" in result.error
    assert "set config_dir elsewhere" in result.error
