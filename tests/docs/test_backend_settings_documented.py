"""Every setting a built-in backend takes is named in docs/backends.md (the config
file written by ``init`` says that page "lists them all")."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from phasegate.agents import claude, cli_support, codex, gemini, openai_chat, scripted

DOC = (Path(__file__).resolve().parents[2] / "docs" / "backends.md").read_text(encoding="utf-8")
#: Set by phasegate itself, never by a user.
INTERNAL = {"base_dir"}


def settings() -> list[tuple[str, str]]:
    """(model, setting) for every field of the backends' settings models, and the
    scripted backend's settings."""
    found = [("scripted", name) for name in scripted.SETTINGS if name not in INTERNAL | {"model"}]
    for module in (cli_support, claude, codex, gemini, openai_chat):
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseModel) and cls.__module__ == module.__name__:
                found += [
                    (name, info.alias or field)
                    for field, info in cls.model_fields.items()
                    if field not in INTERNAL
                ]
    return found


@pytest.mark.parametrize("where,setting", settings())
def test_each_backend_setting_is_documented(where: str, setting: str) -> None:
    # As code (`name`, `name: ...`), a key of a YAML example, or one of `{a, b}`.
    assert re.search(rf"(?<![\w.-]){re.escape(setting)}[`:=,}}]", DOC), f"{where}.{setting}"
