"""Fixtures of the implement workflow tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from implement_helpers import FIXTURES, make_repo


@pytest.fixture
def webhooks(tmp_path: Path) -> Path:
    """A repository with the phase-headings plan as docs/specs/006-webhooks/PLAN.md."""
    return make_repo(tmp_path / "repo", (FIXTURES / "plan-phase-headings.md").read_text())
