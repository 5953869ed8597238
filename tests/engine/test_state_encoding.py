"""The engine state file is encoded incrementally: the same bytes as a fresh encode, and a
commit's work does not grow with the item's history (a state commit happens at every step,
so a run's total cost must stay linear in its steps)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_helpers import fresh_state

from phasegate.engine.state import EngineState
from phasegate.engine.state_encoding import CHECK_ENV, encode_document
from phasegate.redact import MASK, Redactor

SECRET = "sk-" + "proj-" + "Q1w2E3r4T5y6U7i8O9p0A1s2"


class CountingRedactor(Redactor):
    """A real redactor that counts the values handed to it (the encoder's work)."""

    def __init__(self) -> None:
        super().__init__(use_environ=False)
        self.calls = 0

    def text(self, text: str) -> str:
        self.calls += 1
        return super().text(text)

    def data(self, value: Any) -> Any:
        self.calls += 1
        return super().data(value)


def _reference(state: EngineState, redactor: Redactor) -> bytes:
    """The state file as the encoder before the incremental one wrote it, afresh."""
    dumps = json.dumps
    top = redactor.data({k: v for k, v in state.d.items()})
    lines = [f"{dumps(k)}: {dumps(v, ensure_ascii=False)}" for k, v in top.items()]
    nodes = ",\n  ".join(
        f"{dumps(p)}: {dumps(redactor.data(state.nodes[p].d), ensure_ascii=False)}"
        for p in sorted(state.nodes)
    )
    lines.append('"nodes": {' + (f"\n  {nodes}\n" if nodes else "") + "}")
    return ("{\n " + ",\n ".join(lines) + "\n}\n").encode("utf-8")


def _phase(state: EngineState, path: str, iterations: int) -> None:
    node = state.node(path)
    node["started"] = "2026-01-01T00:00:00Z"
    for n in range(1, iterations + 1):
        node.iteration = n
        node.records("reviews").append({"iteration": n, "word": "REJECTED", "issues": ["again"]})
        node.usage()["calls"] = 2 * n
        node.stage = f"review:{n}"
    node["outcome"] = "pass"


def test_incremental_encoding_gives_the_same_bytes_as_a_fresh_encode() -> None:
    """Reusing the text of unchanged values never changes the file: after every kind of
    change (new node, list growth, value replaced, mapping changed in place, node
    removed, secrets) the bytes equal a fresh encode and the earlier encoder's output."""
    redactor = Redactor([SECRET], use_environ=False)
    state = fresh_state()
    snapshots: list[bytes] = []

    def check() -> None:
        payload = state.encode(redactor)
        nodes = {p: state.nodes[p].d for p in sorted(state.nodes)}
        assert payload == encode_document(list(state.d.items()), nodes, redactor)
        assert payload == _reference(state, redactor)
        snapshots.append(payload)

    check()
    _phase(state, "design", 2)
    check()
    node = state.node("design")
    node.records("reviews").append({"iteration": 3, "word": "APPROVED", "note": SECRET})
    check()
    node = state.node("design")
    node.usage()["calls"] += 1  # a mapping changed in place
    node["summary"] = f"key {SECRET} leaked"
    check()
    state["data"]["label"] = "design"  # top-level mapping changed in place
    state["at"] = "plan"
    check()
    state.node("loop[T1]/work")["started"] = "x"
    state.node("loop[T2]/work")["started"] = "y"
    check()
    state.drop("loop[T1]")
    check()
    state.node("ünïcode")["note"] = "é ☃"
    check()
    assert SECRET.encode() not in snapshots[-1]
    assert MASK.encode() in snapshots[-1]
    decoded = json.loads(snapshots[-1])
    assert sorted(decoded["nodes"]) == ["design", "loop[T2]/work", "ünïcode"]


def test_same_state_gives_the_same_file_whatever_order_nodes_ran_in() -> None:
    """Nodes are written by path, so two runs reaching the same state write the same file."""
    redactor = Redactor(use_environ=False)
    one, two = fresh_state(), fresh_state()
    for path in ("b", "a", "c"):
        one.node(path)["started"] = path
    for path in ("c", "a", "b"):
        two.node(path)["started"] = path
    assert one.encode(redactor) == two.encode(redactor)


def _work_of_one_step(phases: int, iterations: int) -> int:
    """Redactor calls for encoding after two steps, in an item with ``phases`` finished
    phases of ``iterations`` review rounds each, at a phase ``iterations`` rounds in."""
    redactor = CountingRedactor()
    state = fresh_state()
    for n in range(phases):
        _phase(state, f"p{n}", iterations)
    current = state.node("current")
    current["started"] = "2026-01-02T00:00:00Z"
    for n in range(iterations):
        current.records("reviews").append({"iteration": n, "word": "REJECTED", "issues": ["x"]})
    state["at"] = "current"
    state.encode(redactor)
    redactor.calls = 0
    for step in range(2):
        node = state.node("current")
        node.records("reviews").append({"iteration": step, "word": "REJECTED", "issues": ["y"]})
        node.iteration = iterations + step + 1
        state["updated"] = f"2026-01-02T00:00:0{step}Z"
        state.encode(redactor)
    return redactor.calls


def test_a_commits_encoding_work_does_not_grow_with_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only what changed is redacted and encoded: the work of a step is the same with 5 or
    200 finished phases, and with 2 or 50 review rounds behind them."""
    monkeypatch.delenv(CHECK_ENV, raising=False)  # the check encodes everything afresh
    base = _work_of_one_step(5, 2)
    assert base > 0
    assert _work_of_one_step(200, 2) == base
    assert _work_of_one_step(5, 50) == base
