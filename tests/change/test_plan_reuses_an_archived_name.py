"""``phasegate plan ID "DESCRIPTION"`` creates a change when changes/ID does not exist, and
so it does when ID names an archived change only: the archive keeps the old one (its
folders are dated), the name is free again. Without a description, ``plan ID`` of an
archived change still says it is archived. A second archive of the name the same day is
found as the newest (``<date>-ID-2``), so archiving again says where it went."""

from __future__ import annotations

from pathlib import Path

from change_helpers import ChangeAgents, changes, complete


def test_plan_with_a_description_of_an_archived_name_creates_a_new_change(repo: Path) -> None:
    complete(repo, "add-oauth")
    first = changes(repo).archive("add-oauth").archived_to
    agents = ChangeAgents(repo)
    outcome = changes(repo).plan(
        "add-oauth", "OAuth, second round", backends={"default": agents.backend()}
    )
    assert outcome.action == "challenged", outcome.message
    assert (repo / "changes" / "add-oauth" / "STATE.yaml").is_file()
    assert changes(repo).state("add-oauth").description == "OAuth, second round"
    assert (first / "STATE.yaml").is_file()
    assert changes(repo).impl("add-oauth", backends={"default": agents.backend()}).status == (
        "complete"
    )
    second = changes(repo).archive("add-oauth").archived_to
    assert second != first and first.is_dir() and second.is_dir()
    again = changes(repo).archive("add-oauth")
    assert again.action == "already-archived" and again.archived_to == second, again.message


def test_plan_without_a_description_of_an_archived_change_says_it_is_archived(
    repo: Path,
) -> None:
    agents = complete(repo, "add-oauth")
    changes(repo).archive("add-oauth")
    outcome = changes(repo).plan("add-oauth", backends={"default": agents.backend()})
    assert outcome.action == "beyond-planning" and "phase archived" in outcome.message
    assert not (repo / "changes" / "add-oauth").exists()
