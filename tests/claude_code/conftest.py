"""Fixtures for the Claude Code integration tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_code_helpers import init_repo, make_repo

from phasegate.api import Repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A git repository with one commit, opened with the default config."""
    return make_repo(init_repo(tmp_path / "repo"))
