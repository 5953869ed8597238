"""What a state commit reuses from the commit before it never goes stale: the state file's
text of a value is reused only while the value's JSON is what it was, and the index's and
the view's encoders write what ``json.dumps`` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_helpers import fresh_state

from phasegate.engine import index
from phasegate.engine.state import EngineState
from phasegate.engine.state_encoding import CHECK_ENV, encode_document
from phasegate.redact import MASK, Redactor
from phasegate.views.feature import _encode_key

SECRET = "sk-" + "proj-" + "Q1w2E3r4T5y6U7i8O9p0A1s2"


def _fresh(state: EngineState, redactor: Redactor) -> bytes:
    nodes = {p: state.nodes[p].d for p in sorted(state.nodes)}
    return encode_document(list(state.d.items()), nodes, redactor)


@pytest.fixture(autouse=True)
def _no_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # The encoder's own check would raise on a stale text: here the bytes are compared.
    monkeypatch.delenv(CHECK_ENV, raising=False)


def test_a_value_equal_in_python_but_not_in_json_is_encoded_again() -> None:
    """Equal values of another type (True and 1, 0 and 0.0) or floats that compare equal
    (0.0 and -0.0) have other JSON: the text kept for the old one is not reused."""
    redactor = Redactor(use_environ=False)
    state = fresh_state()
    changes: list[Any] = [1, True, 1.0, 0.0, -0.0, 0, False, None, "1", "1", 1]
    for value in changes:
        state.node("p")["value"] = value
        state["extra"] = value
        assert state.encode(redactor) == _fresh(state, redactor), value


def test_equal_new_strings_and_mappings_changed_in_place_give_fresh_bytes() -> None:
    """A new string equal to the old reuses its text; a mapping changed in place, a secret
    put in a string, a value of a new type are encoded again."""
    redactor = Redactor([SECRET], use_environ=False)
    state = fresh_state()
    node = state.node("p")
    node["stage"] = "".join(["exe", "cute"])
    node["usage"] = {"calls": 1}
    state.encode(redactor)
    node = state.node("p")
    node["stage"] = "".join(["execu", "te"])  # equal, another object
    node["usage"]["calls"] = 2  # changed in place
    state["journal"]["offset"] = 7  # a top-level mapping changed in place
    assert state.encode(redactor) == _fresh(state, redactor)
    node = state.node("p")
    node["stage"] = f"review {SECRET}"
    node["usage"] = {"calls": 2, "note": SECRET}
    state["data"]["key"] = SECRET
    payload = state.encode(redactor)
    assert payload == _fresh(state, redactor)
    assert SECRET.encode() not in payload and MASK.encode() in payload
    node = state.node("p")
    node["usage"] = ["calls", 2]  # a list where a mapping was
    node["stage"] = 3
    state["data"] = {}
    assert state.encode(redactor) == _fresh(state, redactor)
    state.drop("p")
    state.node("p")["stage"] = "execute"  # a node removed and made again
    assert state.encode(redactor) == _fresh(state, redactor)


@pytest.mark.parametrize(
    "value",
    [
        {"a": "é☃", "b": [1, 2.5, None, True], "c": float("inf"), "d": -0.0},
        'say "x"\n',
        [],
        {},
        1e100,
    ],
)
def test_the_index_and_view_encoders_write_what_json_dumps_writes(value: Any) -> None:
    assert index._encode(value) == json.dumps(value, ensure_ascii=False)
    for key in ("phases", "ünïcode", 'quo"te'):
        assert _encode_key(key) == json.dumps(key)


def test_the_index_encoder_refuses_what_json_dumps_refuses() -> None:
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(ValueError):
        index._encode(looped)
    with pytest.raises(TypeError):
        index._encode({"x": object()})
    assert index._encode({"fine": 1}) == '{"fine": 1}'  # the encoder is usable again
