"""A mapping of numbers alone (usage counts, the journal position) is written without being
redacted: the text reused or written is always the value's own, a value changed in place
is seen, and a mapping that holds a string is still redacted."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from phasegate.engine.state_encoding import StateEncoder, encode_document, numbers_only
from phasegate.redact import Redactor
from phasegate.views.feature import FeatureView

SECRET = "hunter2-very-secret-value"


def _redactor() -> Redactor:
    return Redactor([SECRET], use_environ=False)


def test_numbers_only_is_true_for_numbers_booleans_nulls_and_their_mappings() -> None:
    assert numbers_only({})
    assert numbers_only({"a": 1, "b": 1.5, "c": True, "d": None, "e": {"f": -0.0}})
    assert not numbers_only({"a": 1, "b": "text"})
    assert not numbers_only({"a": {"b": {"c": SECRET}}})
    assert not numbers_only({"a": [1, 2]})  # lists are redacted as before
    assert not numbers_only({"a": (1,)})


def test_a_usage_changed_in_place_is_seen_and_a_string_beside_numbers_is_redacted() -> None:
    redactor = _redactor()
    encoder = StateEncoder()
    usage: dict[str, Any] = {"calls": 1, "cost_usd": 0.0}
    by_role: dict[str, Any] = {"executor": {"calls": 1}}
    node: dict[str, Any] = {"usage": {"calls": 1}, "stage": "execute"}
    for step in range(4):
        top = [("usage", usage), ("usage_by_role", by_role), ("journal", {"offset": step})]
        payload = encoder.encode(top, {"n": node}, ["n"], redactor)
        assert payload == encode_document(top, {"n": node}, redactor)
        text = payload.decode()
        assert f'"calls": {step + 1}, "cost_usd": {0.5 * step}' in text
        assert f'"executor": {{"calls": {step + 1}' in text
        assert f'"offset": {step}' in text
        assert SECRET not in text
        usage["calls"] += 1  # the same objects, changed in place
        usage["cost_usd"] += 0.5
        by_role["executor"]["calls"] += 1
        node["usage"]["calls"] += 1
        if step == 1:
            by_role["executor"]["note"] = SECRET  # no longer numbers alone: redacted
    top = [("usage", {"calls": True}), ("usage_by_role", by_role)]
    payload = encoder.encode(top, {"n": node}, ["n"], redactor)
    assert payload == encode_document(top, {"n": node}, redactor)
    assert b'"calls": true' in payload
    assert SECRET.encode() not in payload


def test_the_views_usage_line_follows_its_value(tmp_path: Path) -> None:
    workflow = SimpleNamespace(nodes=[], name="wf")
    item = SimpleNamespace(workflow=workflow, item_dir=tmp_path, redactor=_redactor())
    view = FeatureView(item, {})
    for calls, cost in ((0, 0.0), (1, 0.0), (1, -0.0), (2, 1.25), (2, True)):
        usage = {"calls": calls, "costUsd": cost}
        document = {"id": "x", "phases": {}, "usage": usage}
        text = view._json(document).decode()
        shown = "true" if cost is True else repr(cost)
        expected = f'"usage": {{"calls": {calls}, "costUsd": {shown}}}'
        assert expected in text, text
    document = {"id": "x", "phases": {}, "usage": {"calls": 3, "note": SECRET}}
    text = view._json(document).decode()
    assert SECRET not in text and '"calls": 3' in text
