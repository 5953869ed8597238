"""Fixtures for engine tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import init_repo


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A git repository with one commit holding a tiny project."""
    return init_repo(tmp_path / "repo")
