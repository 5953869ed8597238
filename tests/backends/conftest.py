"""Fixtures for backend tests: provider keys in the environment, isolated homes, CLIs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from backend_helpers import STUB_KEY, cli_path


@pytest.fixture(autouse=True, scope="session")
def probe_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The CLI probe cache in a folder of the test session's own, never the user's."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(folder)
    yield folder
    if before is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture(autouse=True)
def provider_keys(monkeypatch: pytest.MonkeyPatch) -> str:
    """The stub's API key in phasegate's environment, as a user's real key would be."""
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, STUB_KEY)
    return STUB_KEY


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HOME of the test's own (the CLIs' config dirs live under it)."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The agent's working directory."""
    path = tmp_path / "work"
    path.mkdir()
    return path


def _need(name: str) -> Path:
    path = cli_path(name)
    if path is None:
        pytest.skip(f"node_modules/.bin/{name} is not installed (run `npm ci` at the repo root)")
    return path


@pytest.fixture
def claude_bin() -> Path:
    """The pinned Claude Code (skips when not installed)."""
    return _need("claude")


@pytest.fixture
def codex_bin() -> Path:
    """The pinned Codex CLI (skips when not installed)."""
    return _need("codex")


@pytest.fixture
def gemini_bin() -> Path:
    """The pinned Gemini CLI (skips when not installed)."""
    return _need("gemini")
