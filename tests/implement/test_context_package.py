"""Context loading and the bounded context package (issue rule 2; seed 004: Context
Ingestion Pattern, Agent Invocation Pattern, Context Efficiency)."""

from __future__ import annotations

from pathlib import Path

from implement_helpers import FIXTURES, SPEC, Team, key, make_repo, new_item, run

from phasegate.implement.context import bounded_document

PLAN_TEXT = (FIXTURES / "plan-phase-headings.md").read_text()
FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 40


def large_sdd() -> str:
    sections = [f"## Billing {n}\n\n{FILLER}\n" for n in range(1, 8)]
    sections.insert(3, "## Payload signing\n\nSign outgoing payloads with HMAC-SHA256.\n")
    return "# SDD\n\n" + "\n".join(sections)


def executor_prompt(team: Team, title: str) -> str:
    calls = [c for c in team.calls(stage="execute") if c.labels["task"] == key(title)]
    return calls[0].prompt_text()


def approving() -> Team:
    return Team(
        {
            "the-data-engineer": {"*": [{"write": {"db/001.sql": "CREATE TABLE d (id int);\n"}}]},
            "the-developer": {"*": [{"write": {"src/sign.py": "import hmac\n"}}]},
            "the-technical-writer": {"*": [{"write": {"docs/h.md": "# H\n"}}]},
            "*": {"*": [{"text": "APPROVED"}]},
        }
    )


def test_small_documents_are_given_whole_and_missing_ones_are_named(tmp_path: Path) -> None:
    """BRD/PRD/SDD are read when they exist; a small one is carried whole."""
    docs = {"PRD.md": "# PRD\n\nAt-least-once delivery.\n", "SDD.md": "# SDD\n\nUse a queue.\n"}
    root = make_repo(tmp_path / "repo", PLAN_TEXT, documents=docs)
    team = approving()
    run(new_item(root), team)
    prompt = executor_prompt(team, "Sign outgoing payloads")
    assert f"Specification: {SPEC}/ (PRD.md, SDD.md)" in prompt
    assert f"--- {SPEC}/PRD.md ---\n# PRD\n\nAt-least-once delivery." in prompt
    assert "BRD.md ---" not in prompt


def test_a_large_document_is_its_outline_and_the_sections_the_task_needs(
    tmp_path: Path,
) -> None:
    """Over context_chars, a document is its outline plus the sections sharing the task's
    words, within the limit: never the whole file every time."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, documents={"SDD.md": large_sdd()})
    team = approving()
    run(new_item(root, {"workflows": {"implement": {"settings": {"context_chars": 3000}}}}), team)
    prompt = executor_prompt(team, "Sign outgoing payloads")
    sdd = prompt.split(f"--- {SPEC}/SDD.md ---\n", 1)[1].split("\nPlan phase:", 1)[0]
    assert sdd.startswith("Outline:\n## Billing 1\n## Billing 2\n## Billing 3\n## Payload signing")
    assert "Sign outgoing payloads with HMAC-SHA256." in sdd
    assert len(sdd) <= 3000 + 100
    assert len(large_sdd()) > 3 * 3000


def test_the_package_says_task_success_and_what_is_out_of_scope(tmp_path: Path) -> None:
    """CONTEXT / TASK / SUCCESS / EXCLUDE: the task with its sub-items, when it is done (the
    phase's checkpoint, the checks), and the other open tasks left out."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT)
    team = approving()
    run(new_item(root, {"commands": {"test": "true"}}), team)
    prompt = executor_prompt(team, "Sign outgoing payloads")
    assert "TASK:\nSign outgoing payloads\n- HMAC-SHA256 over the raw body" in prompt
    done = "Dependencies completed: Create the delivery queue table; Sketch the dispatcher"
    assert done in prompt
    assert "SUCCESS: Task complete when every sub-item above is done; the project's checks " in (
        prompt
    )
    assert "the phase's validation holds: Validation: run the unit tests of the dispatcher" in (
        prompt
    )
    exclude = prompt.split("EXCLUDE: ", 1)[1]
    assert "Retry failed deliveries with backoff" in exclude
    assert "Sign outgoing payloads" not in exclude
    assert f"ticking checkboxes in {SPEC}/PLAN.md" in exclude


def test_specification_documents_are_loaded_once(tmp_path: Path) -> None:
    """Load specification documents once, reuse for all tasks: a later edit is not seen."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, documents={"SDD.md": "# SDD\n\nVersion one.\n"})
    team = approving()
    team.script = {
        **team.script,
        "the-data-engineer": {"*": [{"write": {f"{SPEC}/SDD.md": "# SDD\n\nVersion two.\n"}}]},
    }
    run(new_item(root), team)
    assert "Version one." in executor_prompt(team, "Sign outgoing payloads")
    assert "Version two." not in executor_prompt(team, "Sign outgoing payloads")


def test_bounded_document_keeps_short_text_whole() -> None:
    """The rule's first half: a document within the limit is given as it is."""
    assert bounded_document("# A\n\ntext\n", "anything", 100) == "# A\n\ntext"
