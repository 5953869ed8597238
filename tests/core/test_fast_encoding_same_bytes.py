"""The encoder and redaction paths taken at every state commit give the very bytes the
plain library calls give: the journal, the state file and the views do not change."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest

from phasegate.redact import STRUCTURAL_KEYS, Redactor
from phasegate.state.journal import encode_json


class _Level(enum.IntEnum):
    HIGH = 3


class _Name(str):
    pass


VALUES: list[Any] = [
    "plain",
    'ünïcødé — \u2028 \x00 "quoted" \\ back',
    _Name("a str subclass"),
    0,
    -17,
    2**70,
    1.5,
    0.1 + 0.2,
    1e300,
    float("nan"),
    float("inf"),
    float("-inf"),
    True,
    None,
    [],
    {},
    [1, "two", None, [3.0, {"k": "v"}]],
    {"usage": {"input": 10, "cost_usd": 0.0123}, "ünï": ["x", {"deep": [True, None]}]},
    {1: "int key", 2.5: "float key", False: "bool key", None: "none key"},
    {"level": _Level.HIGH},
    ("a", "tuple"),
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_encode_json_is_json_dumps(value: Any) -> None:
    assert encode_json(value) == json.dumps(value, ensure_ascii=False)


def test_encode_json_refuses_what_json_dumps_refuses() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        encode_json(loop)
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        encode_json({"a": {1, 2}})
    # A failed call leaves nothing behind for the next one.
    assert encode_json([{"a": 1}, {"a": 1}]) == '[{"a": 1}, {"a": 1}]'


def _reference(redactor: Redactor, value: Any) -> Any:
    """What ``Redactor.data`` gives, field by field as documented."""
    if isinstance(value, dict):
        return {k: redactor.field(k, v) for k, v in value.items()}
    return redactor.data(value)


def test_redacting_a_mapping_is_field_by_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_API_TOKEN", "approved-and-secret")
    monkeypatch.setenv("SHORTISH_TOKEN", "active")
    redactor = Redactor()
    structural = sorted(STRUCTURAL_KEYS)[:3]
    document: dict[str, Any] = {
        "text": "says approved-and-secret here",
        "short": "abc",
        "number": 4,
        "flag": False,
        "nothing": None,
        "nested": {"inner": "active", "list": ["approved-and-secret", 1]},
        "key ghp_" + "a" * 36: "token shape ghp_" + "b" * 36,
    }
    for key in structural:
        document[key] = "active"
        document[key + "-list"] = ["active", "x"]
    for key in structural:
        document[key] = ["active", "ghp_" + "c" * 36]
        result = redactor.data(document)
        assert result == _reference(redactor, document)
        assert json.dumps(result) == json.dumps(_reference(redactor, document))
        document[key] = "ghp_" + "d" * 36
        assert redactor.data(document) == _reference(redactor, document)
    assert redactor.data(document)["text"] == "says [REDACTED] here"
