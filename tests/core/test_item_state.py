"""ItemState: seed 000's `.meta.json` fields (camelCase), round-tripped without loss."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from phasegate.errors import StateCorruptError
from phasegate.redact import Redactor
from phasegate.state.item import ItemState
from phasegate.state.store import StateStore

META: dict[str, Any] = {
    "id": "auth",
    "workflow": "feature",
    "description": "Add login",
    "mode": "standard",
    "status": "active",
    "created": "2026-01-30T10:00:00Z",
    "worktree": "../auth-wt",
    "baseCommit": "3f9a2b7",
    "currentPhase": "design",
    "phases": {
        "specify": {
            "started": "2026-01-30T10:01:00Z",
            "completed": "2026-01-30T10:09:00Z",
            "iterations": 3,
            "reviewerNotes": ["Scope of SSO unclear"],
            "verified": True,
        }
    },
}


def test_seed_000_camel_case_fields_are_read() -> None:
    """Interface 3 fields: currentPhase, phases[name].{started, completed, iterations,
    reviewerNotes, verified}."""
    state = ItemState.from_document(META, Path("/r/.meta.json"))
    assert state.current_phase == "design"
    assert state.base_commit == "3f9a2b7"
    record = state.phases["specify"]
    assert (record.iterations, record.verified) == (3, True)
    assert record.reviewer_notes == ["Scope of SSO unclear"]


def test_document_is_written_with_camel_case_keys() -> None:
    document = ItemState.from_document(META, Path("/r/.meta.json")).to_document()
    assert {"currentPhase", "baseCommit", "engine", "usage"} <= set(document)
    assert "current_phase" not in document
    specify = document["phases"]["specify"]
    assert specify["reviewerNotes"] == ["Scope of SSO unclear"]
    assert {"inputTokens", "outputTokens", "costUsd"} <= set(specify["usage"])
    assert "iterations" in document["engine"]


def test_round_trip_keeps_every_given_field() -> None:
    document = ItemState.from_document(META, Path("/r/.meta.json")).to_document()
    assert {k: document[k] for k in META if k != "phases"} == {
        k: v for k, v in META.items() if k != "phases"
    }
    given = META["phases"]["specify"]
    assert {k: document["phases"]["specify"][k] for k in given} == given


def test_unknown_keys_a_person_adds_are_kept() -> None:
    """Hand-added keys survive a load and save, at the top and inside a phase."""
    data = {**META, "owner": "ana", "phases": {"specify": {"iterations": 1, "ticket": "JIRA-1"}}}
    document = ItemState.from_document(data, Path("/r/.meta.json")).to_document()
    assert document["owner"] == "ana"
    assert document["phases"]["specify"]["ticket"] == "JIRA-1"


def test_round_trip_through_the_store_is_stable(tmp_path: Path) -> None:
    """Load -> save -> load gives the same document (no drift between runs)."""
    store = StateStore(
        tmp_path / ".meta.json", tmp_path / ".lock", "json", Redactor(use_environ=False)
    )
    first = ItemState.from_document(META, store.path).to_document()
    store.commit(first)
    second = ItemState.from_document(store.load(), store.path).to_document()
    assert second == first


def test_phase_record_is_created_on_first_use() -> None:
    state = ItemState.from_document(META, Path("/r/.meta.json"))
    state.phase("design").iterations = 1
    assert state.to_document()["phases"]["design"]["iterations"] == 1


@pytest.mark.parametrize(
    ("broken", "field"),
    [
        ({"mode": None}, "mode"),
        ({"phases": {"specify": {"iterations": "many"}}}, "phases.specify.iterations"),
        ({"status": "paused"}, "status"),
    ],
)
def test_invalid_state_document_names_the_file_and_field(
    broken: dict[str, Any], field: str
) -> None:
    with pytest.raises(StateCorruptError) as caught:
        ItemState.from_document({**META, **broken}, Path("/r/.meta.json"))
    message = str(caught.value)
    assert "/r/.meta.json" in message
    assert f"invalid at {field}" in message
    assert "left untouched" in message
