"""tasks.md whose frontmatter names another change is refused naming
``file:line:column:`` of that value, so the user goes straight to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from phasegate.change.tasks import read_tasks
from phasegate.errors import BadInputError


def test_a_change_id_of_another_change_is_refused_at_its_line_and_column(
    tmp_path: Path,
) -> None:
    path = tmp_path / "add-oauth" / "tasks.md"
    path.parent.mkdir()
    path.write_text("---\nversion: 2\nchange_id:  other\n---\n## 1. Data Layer\n- [ ] 1.1 x\n")
    with pytest.raises(BadInputError) as caught:
        read_tasks(path)
    assert str(caught.value) == (
        f"{path}:3:13: frontmatter change_id 'other' does not match its change folder "
        "'add-oauth'; fix the frontmatter"
    )
