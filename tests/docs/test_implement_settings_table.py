"""docs/implement-workflow.md's settings table lists exactly the settings the implement
workflow reads, with their defaults."""

from __future__ import annotations

import re
from pathlib import Path

from phasegate.implement.settings import Escalation, ImplementSettings

DOC = (Path(__file__).resolve().parents[2] / "docs" / "implement-workflow.md").read_text(
    encoding="utf-8"
)


def rows() -> dict[str, str]:
    """The table under ``## Settings``: setting -> its default column."""
    section = DOC[DOC.index("## Settings") :]
    section = section[: section.index("\n## ", 1)]
    return dict(re.findall(r"^\| `([\w.]+)` \| ([^|]*) \|", section, re.M))


def test_every_setting_has_a_row_and_every_row_a_setting() -> None:
    fields = {name for name in ImplementSettings.model_fields if name != "escalation"}
    fields |= {f"escalation.{name}" for name in Escalation.model_fields}
    assert set(rows()) == fields


def test_the_plain_defaults_are_the_documented_ones() -> None:
    defaults = ImplementSettings()
    for name, shown in rows().items():
        value = getattr(defaults.escalation if "." in name else defaults, name.split(".")[-1])
        written = re.fullmatch(r"`([^`]*)`", shown.strip())
        if written is None or value is None or isinstance(value, tuple):
            continue  # described in words ("all three", "the implementer role")
        expected = str(value).lower() if isinstance(value, bool) else str(value)
        assert written.group(1) in {expected, expected.removesuffix(".0")}, name
