"""The README's table of `.phasegate/config.yaml` keys lists exactly the keys the
config file takes: none missing, none that is refused."""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from phasegate.config import Config

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
#: A placeholder segment of a documented key (`roles.ROLE.model`).
ANY = "*"


def _model(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds (``X | None`` included), else None."""
    candidates = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else ()
    for candidate in (annotation, *candidates):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def config_keys(model: type[BaseModel] = Config, prefix: str = "") -> set[str]:
    """Every key path the config takes, a name chosen by the user written as ``*``."""
    keys: set[str] = set()
    for name, info in model.model_fields.items():
        path = f"{prefix}{info.alias or name}"
        inner = _model(info.annotation)
        if typing.get_origin(info.annotation) is dict:
            value = typing.get_args(info.annotation)[1]
            inner_value = _model(value)
            if inner_value is not None:
                keys |= config_keys(inner_value, f"{path}.{ANY}.")
            else:
                keys.add(f"{path}.{ANY}")
        elif inner is not None:
            keys |= config_keys(inner, f"{path}.")
        else:
            keys.add(path)
    return keys


def documented_keys() -> set[str]:
    """The keys of the table under ``## Configuration`` (placeholders as ``*``)."""
    section = README[README.index("## Configuration") :]
    section = section[: section.index("\n## ", 1)]
    table = section[section.index("| key | meaning |") :]
    keys = set()
    for row in table.splitlines()[2:]:
        if not row.startswith("|"):
            break
        for key in re.findall(r"`([\w.]+)`", row.split("|")[1]):
            keys.add(".".join(ANY if part.isupper() else part for part in key.split(".")))
    return keys


def covers(documented: str, key: str) -> bool:
    """A documented key stands for itself and every key under it (`backends.*`)."""
    return key == documented or key.startswith(documented + ".")


def test_every_config_key_is_in_the_table() -> None:
    documented = documented_keys()
    missing = {key for key in config_keys() if not any(covers(d, key) for d in documented)}
    assert not missing


def test_every_key_in_the_table_is_one_the_config_takes() -> None:
    keys = config_keys()
    unknown = {d for d in documented_keys() if not any(covers(d, key) for key in keys)}
    assert not unknown
