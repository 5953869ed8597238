"""Fixtures of the change workflow tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from change_helpers import init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit."""
    return init_repo(tmp_path / "repo")
