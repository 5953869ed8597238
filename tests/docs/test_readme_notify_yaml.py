"""The README's `notify:` examples are configs phasegate loads as they are written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from phasegate.config import load_config

README = Path(__file__).resolve().parents[2] / "README.md"


def notification_blocks() -> list[str]:
    """Every yaml code block of the README's Notifications paragraph (up to the next one)."""
    text = README.read_text(encoding="utf-8")
    start = text.index("**Notifications.**")
    end = text.index("\n**", start + 1)
    return re.findall(r"```yaml\n(.*?)```", text[start:end], re.S)


def test_the_section_has_examples() -> None:
    assert notification_blocks()


@pytest.mark.parametrize("block", notification_blocks())
def test_each_notify_example_loads_with_the_config_loader(block: str, tmp_path: Path) -> None:
    (tmp_path / ".phasegate").mkdir()
    (tmp_path / ".phasegate" / "config.yaml").write_text(block, encoding="utf-8")
    config = load_config(tmp_path)
    assert config.notify is not None
    commands = re.findall(r"^\s*command: (.*)$", block, re.M)
    assert len(commands) == 1, "one notify: per block, as a config file holds"
    # The command is the shell text as written (outer quotes removed, nothing cut at ': ').
    written = commands[0].split("  #")[0].strip()
    if written[:1] in "'\"" and written[-1:] == written[:1]:
        written = written[1:-1]
    assert config.notify.command == written
