"""``phasegate.dashboard.data``: what the dashboard and ``logs`` read, on real runs and files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dashboard_helpers import (
    GATED,
    ITEM,
    SECRET,
    new_repo,
    pending_decision,
    phasegate,
    write_script,
)

from phasegate.dashboard import data
from phasegate.errors import AlreadyAnsweredError, BadInputError, NotFoundError, StateCorruptError


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose item went through brainstorm and specify (specify rejected once)."""
    root = new_repo(tmp_path / "repo")
    ran = phasegate(root, "run", ITEM, "--until", "specify")
    assert ran.returncode == 0, ran.stderr
    return root


def journal(root: Path) -> Path:
    return root / "docs" / "features" / ITEM / ".journal.jsonl"


def test_list_items_gives_workflow_node_status_iterations_and_spend(repo: Path) -> None:
    """Every item with what the list page shows: iterations, calls, tokens and cost summed."""
    (row,) = data.list_items(repo)
    status = json.loads(phasegate(repo, "status", ITEM, "--json").stdout)
    assert row["id"] == ITEM and row["workflow"] == "feature"
    assert row["node"] == "specify" and row["status"] == "active"
    assert row["iterations"] == 3  # brainstorm 1, specify 2
    assert row["calls"] == status["usage"]["calls"] == 6
    assert row["tokens"] == status["usage"]["inputTokens"] + status["usage"]["outputTokens"] > 0
    assert row["costUsd"] == 0.0 and row["nextCommand"] == f"phasegate run {ITEM}"


def test_list_items_counts_failed_attempts_as_status_does(tmp_path: Path) -> None:
    """A call that failed was paid for: the list row counts it as `status` and the
    item's own page do."""
    failing = {"executor": {"*": [{"cost_usd": 0.5, "fail": {"exit": 1, "error": "boom"}}]}}
    root = new_repo(tmp_path / "repo", failing)
    ran = phasegate(root, "run", ITEM, "-q")
    assert ran.returncode == 6, ran.stdout + ran.stderr
    status = json.loads(phasegate(root, "status", ITEM, "--json").stdout)
    assert status["usage"]["failedCalls"] == status["usage"]["calls"] > 0
    (row,) = data.list_items(root)
    assert row["calls"] == status["usage"]["calls"]
    assert row["costUsd"] == status["usage"]["costUsd"] > 0
    assert data.item_detail(root, ITEM)["calls"] == row["calls"]


def test_list_items_reports_an_unreadable_item_without_hiding_the_others(repo: Path) -> None:
    """A corrupt state file is one row with its error; the other items are still listed."""
    assert phasegate(repo, "new", "other").returncode == 0
    (repo / "docs/features/other/.engine.json").write_text("{ not json")
    rows = {row["id"]: row for row in data.list_items(repo)}
    assert "corrupt" in rows["other"]["error"]
    assert rows[ITEM]["status"] == "active"


def test_item_detail_has_the_phases_and_unresolved_concerns(repo: Path) -> None:
    """One item in detail: what `status ITEM --json` says, with the list fields."""
    detail = data.item_detail(repo, ITEM)
    assert detail["description"] == "Add a limiter"
    specify = next(p for p in detail["phases"] if p["name"] == "specify")
    assert specify["iterations"] == 2 and specify["review"] == "approved"


def test_item_detail_of_an_unknown_item_is_not_found(repo: Path) -> None:
    """An unknown name is not found; an unsafe one is bad input (never a path)."""
    with pytest.raises(NotFoundError, match="no work item named 'ghost'"):
        data.item_detail(repo, "ghost")
    with pytest.raises(BadInputError, match="path separators"):
        data.item_detail(repo, "../etc")


def test_journal_events_read_from_a_byte_offset(repo: Path) -> None:
    """Reading on from the returned offset gives exactly the events appended since."""
    events, offset = data.journal_events(repo, ITEM)
    assert offset == journal(repo).stat().st_size
    assert [e["event"] for e in events][:2] == ["item.created", "node.started"]
    with journal(repo).open("a") as handle:
        handle.write(json.dumps({"ts": "t", "event": "late.one"}) + "\n")
    more, end = data.journal_events(repo, ITEM, offset)
    assert [e["event"] for e in more] == ["late.one"]
    assert data.journal_events(repo, ITEM, end) == ([], end)


def test_a_torn_last_line_is_not_an_event_until_it_is_complete(repo: Path) -> None:
    """A line still being written (no newline yet) is left for the next read."""
    _, offset = data.journal_events(repo, ITEM)
    line = json.dumps({"ts": "t", "event": "slow.write"})
    with journal(repo).open("a") as handle:
        handle.write(line[:10])
    assert data.journal_events(repo, ITEM, offset) == ([], offset)
    with journal(repo).open("a") as handle:
        handle.write(line[10:] + "\n")
    events, _ = data.journal_events(repo, ITEM, offset)
    assert [e["event"] for e in events] == ["slow.write"]


def test_an_offset_past_the_end_reads_a_replaced_journal_from_its_start(repo: Path) -> None:
    """A journal shorter than the offset was replaced: it is read again from its start."""
    _, offset = data.journal_events(repo, ITEM)
    journal(repo).write_text(json.dumps({"ts": "t", "event": "fresh"}) + "\n")
    events, end = data.journal_events(repo, ITEM, offset)
    assert [e["event"] for e in events] == ["fresh"] and end == journal(repo).stat().st_size


def test_an_offset_inside_a_line_is_bad_input_not_a_corrupt_journal(repo: Path) -> None:
    """Only offsets a read returned (line starts) are valid; the journal is not blamed."""
    with pytest.raises(BadInputError, match="offset 5 is not the start of a line"):
        data.journal_events(repo, ITEM, 5)


def test_a_corrupt_journal_line_is_reported_with_the_file(repo: Path) -> None:
    """A corrupt line is an error naming the journal, never skipped in silence."""
    with journal(repo).open("a") as handle:
        handle.write("{broken\n")
    with pytest.raises(StateCorruptError, match=r"\.journal\.jsonl is corrupt at byte"):
        data.journal_events(repo, ITEM)


def test_artifacts_are_the_items_markdown_files_with_the_review_history_last(
    repo: Path,
) -> None:
    """The item folder's Markdown files: artifacts by name, then the review history."""
    names = [name for name, _ in data.artifacts(repo, ITEM)]
    assert names == ["brainstorm.md", "spec.md", ".review-history.md"]
    for name, path in data.artifacts(repo, ITEM):
        assert path == repo / "docs/features" / ITEM / name


def test_an_answer_is_recorded_once_and_journaled(repo: Path) -> None:
    """A gate's decision: pending before it is asked, answered once, journaled with who."""
    pending_decision(repo)
    (pending,) = data.decisions(repo, GATED)
    assert pending["status"] == "pending" and pending["choices"] == ["yes", "no"]
    assert pending["files"] == ["draft.md"] and pending["item"] == GATED
    assert pending["question"] == f"Go on with {GATED}?"
    answered = data.answer(repo, GATED, "go", "yes", "fine by me", "command")
    assert answered["status"] == "answered"
    assert answered["answer"]["choice"] == "yes" and answered["answer"]["by"] == "command"
    assert data.decisions(repo, GATED) == [answered]
    events, _ = data.journal_events(repo, GATED)
    last = events[-1]
    assert (last["event"], last["id"], last["choice"], last["by"]) == (
        "decision.answered",
        "go",
        "yes",
        "command",
    )


def test_a_second_answer_gets_already_answered_and_changes_nothing(repo: Path) -> None:
    """The first answer stands; a later one is refused and names who answered."""
    pending_decision(repo)
    first = data.answer(repo, GATED, "go", "yes", None, "page")
    with pytest.raises(AlreadyAnsweredError, match="already answered: 'yes' by page"):
        data.answer(repo, GATED, "go", "no", None, "command")
    assert data.decisions(repo, GATED) == [first]


def test_an_unknown_decision_is_bad_input_naming_the_pending_ones(repo: Path) -> None:
    """Answering a decision that does not exist names the ones that do."""
    pending_decision(repo)
    with pytest.raises(BadInputError, match=r"no decision 'gone' \(pending: go\)"):
        data.answer(repo, GATED, "gone", "yes", None, "command")


def test_a_choice_that_is_not_canonical_is_bad_input_listing_the_choices(repo: Path) -> None:
    """Choices are matched exactly: 'Yes' is not 'yes'."""
    pending_decision(repo)
    with pytest.raises(BadInputError, match=r"'Yes' is not a choice .* \(choices: yes, no\)"):
        data.answer(repo, GATED, "go", "Yes", None, "command")
    assert data.decisions(repo, GATED)[0]["status"] == "pending"


def test_secrets_are_redacted_from_everything_read(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret that reached a file by hand is still masked in what the dashboard reads."""
    monkeypatch.setenv("DASHBOARD_TEST_TOKEN", SECRET)
    with journal(repo).open("a") as handle:
        handle.write(json.dumps({"ts": "t", "event": "note", "text": f"key {SECRET}"}) + "\n")
    pending_decision(repo)
    data.answer(repo, GATED, "go", "yes", f"note {SECRET}", "command")
    read = json.dumps(
        [data.list_items(repo), data.journal_events(repo, ITEM)[0], data.decisions(repo, GATED)]
    )
    assert SECRET not in read and "[REDACTED]" in read
    assert SECRET not in (repo / "work/gated" / GATED / ".engine.json").read_text()


def test_changes_are_items_too(tmp_path: Path) -> None:
    """A change of the change workflow is listed with its phase, and its journal reads."""
    root = new_repo(tmp_path / "repo")
    proposal = "---\nchange_id: oauth\nspecs: []\n---\n# Proposal\nOAuth.\n"
    write_script(
        root,
        {
            "proposal-author": {
                "proposal": [{"write": {"{item_dir}/proposal.md": proposal}}],
                "tasks": [{"write": {"{item_dir}/tasks.md": "## 1. Data Layer\n- [ ] 1.1 x\n"}}],
            },
            "challenger": {
                "tasks": [{"json": {"verdict": "APPROVED", "summary": "ok", "issues": []}}]
            },
        },
    )
    planned = phasegate(root, "plan", "oauth", "Add OAuth")
    assert planned.returncode == 0, planned.stderr
    rows = {row["id"]: row for row in data.list_items(root)}
    assert rows["oauth"]["workflow"] == "change" and rows["oauth"]["status"] == "challenged"
    assert rows["oauth"]["calls"] >= 2 and rows["oauth"]["nextCommand"] == "phasegate impl oauth"
    assert data.item_detail(root, "oauth")["description"] == "Add OAuth"
    events, _ = data.journal_events(root, "oauth")
    assert any(e["event"] == "label.changed" for e in events)
    assert [name for name, _ in data.artifacts(root, "oauth")] == ["proposal.md", "tasks.md"]
