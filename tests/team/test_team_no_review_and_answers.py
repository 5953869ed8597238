"""`run --no-review` and `run --answer` with the team workflow.

Reviewer, QA and Security are part of the team's Definition of Done, so the built-in
workflow refuses `--no-review` before anything runs; the gates held by code (the
artifacts' parsers) are never skipped by it, even in a copy of the workflow that
allows it; UD-DOD can send a session whose reviewers never ran through the final pass;
and every `--answer` is checked against the workflow's decisions and their choices
before any agent is called.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from team_helpers import (
    ITEM,
    cli,
    dispatched,
    item_file,
    make_team_repo,
    status_json,
    team_script,
)

import phasegate.workflow as workflow_package

BUILTIN = Path(workflow_package.__file__).parent / "builtin"


def _new_session(tmp_path: Path, script: dict | None = None) -> Path:
    repo = make_team_repo(tmp_path / "repo", script)
    created = cli(repo, "new", ITEM, "-w", "team", "-d", "Add a counter")
    assert created.returncode == 0, created.stderr
    return repo


def _calls(repo: Path) -> list[str]:
    log = repo / ".phasegate" / "calls.jsonl"
    return log.read_text().splitlines() if log.exists() else []


def _one_line_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def _team_copy_allowing_no_review(repo: Path) -> None:
    """The repository's own copy of the team workflow, one that allows --no-review."""
    folder = repo / ".phasegate" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    text = (BUILTIN / "team.yaml").read_text()
    (folder / "team.yaml").write_text(
        text.replace("allow_no_review: false", "allow_no_review: true")
    )
    shutil.copytree(BUILTIN / "prompts" / "team", folder / "prompts" / "team")


def test_team_refuses_no_review_before_any_agent_runs(tmp_path: Path) -> None:
    """The team's reviewers are part of its Definition of Done: --no-review is refused with
    one line (exit 2) and nothing runs."""
    repo = _new_session(tmp_path)
    result = cli(
        repo,
        "run",
        ITEM,
        "--no-review",
        "--answer",
        "UD-APPROVE-DESIGN=approved",
        "--answer",
        "UD-REVIEW-STRATEGY=single-final",
    )
    assert result.returncode == 2, (result.returncode, result.stderr)
    line = _one_line_error(result.stderr)
    assert "--no-review" in line and "'team'" in line, line
    assert dispatched(repo) == [] and _calls(repo) == []
    assert status_json(repo)["current_state"] == "INTAKE"


def test_no_review_never_skips_the_gates_held_by_code(tmp_path: Path) -> None:
    """A workflow that allows --no-review still checks its artifacts in code: an
    acceptance.json that misses a criterion of spec.md blocks INTAKE (exit 4)."""
    script = team_script()
    spec = "# Spec\n\n## Acceptance criteria\n- AC-1: it works\n- AC-2: it is fast\n"
    acceptance = {"criteria": [{"id": "AC-1", "description": "works", "check": "true"}]}
    written = {item_file("spec.md"): spec, item_file("acceptance.json"): json.dumps(acceptance)}
    script["spec-agent"]["intake"] = [{"write": written}]
    repo = make_team_repo(tmp_path / "repo", script)
    _team_copy_allowing_no_review(repo)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", "Add a counter").returncode == 0
    result = cli(repo, "run", ITEM, "--no-review", "--answer", "UD-APPROVE-DESIGN=approved")
    assert result.returncode == 4, (result.returncode, result.stderr)
    status = status_json(repo)
    assert status["current_state"] == "BLOCKED", status
    assert status["blocker"]["reason"] == "gate_failed", status["blocker"]
    assert [e["role"] for e in dispatched(repo)] == ["spec-agent"] * 3


def test_dod_review_answer_runs_the_reviewers_that_never_ran(tmp_path: Path) -> None:
    """A session whose reviewers were skipped stops at UD-DOD; answering ``review`` runs
    the final Reviewer, QA and Security pass and the session reaches DONE."""
    repo = make_team_repo(tmp_path / "repo")
    _team_copy_allowing_no_review(repo)
    assert cli(repo, "new", ITEM, "-w", "team", "-d", "Add a counter").returncode == 0
    answers = ["--answer", "UD-APPROVE-DESIGN=approved", "--answer", "UD-REVIEW-STRATEGY=per-batch"]
    first = cli(repo, "run", ITEM, "--no-review", *answers)
    assert first.returncode == 3, (first.returncode, first.stderr)
    assert "core agents never dispatched: Reviewer, QA, Security" in first.stderr, first.stderr
    roles = {e["role"] for e in dispatched(repo)}
    assert not roles & {"reviewer", "qa", "security"}, roles

    second = cli(repo, "run", ITEM, "--answer", "UD-DOD=review")
    assert second.returncode == 0, (second.returncode, second.stderr)
    status = status_json(repo)
    assert status["current_state"] == "DONE", status
    ran = {e["role"] for e in dispatched(repo)}
    assert {"reviewer", "qa", "security"} <= ran, ran


def test_an_invalid_answer_choice_is_refused_before_any_agent_runs(tmp_path: Path) -> None:
    """A choice its decision does not have is refused when the run starts (exit 2), not
    after INTAKE, DESIGN and PLAN ran."""
    repo = _new_session(tmp_path)
    result = cli(
        repo,
        "run",
        ITEM,
        "--answer",
        "UD-REVIEW-STRATEGY=bogus",
        "--answer",
        "UD-APPROVE-DESIGN=approved",
    )
    assert result.returncode == 2, (result.returncode, result.stderr)
    line = _one_line_error(result.stderr)
    assert "'bogus' is not a choice of decision 'UD-REVIEW-STRATEGY'" in line, line
    assert "per-batch, single-final, cancel" in line, line
    assert dispatched(repo) == [] and _calls(repo) == []


def test_answers_of_later_and_templated_gates_are_checked_too(tmp_path: Path) -> None:
    """A bad answer to a gate the run may never reach (a per-task decision, the Definition
    of Done) is not dropped without a word; a choice that needs a note needs it here too."""
    repo = _new_session(tmp_path)
    for answer, expected in (
        ("UD-T1-REVIEW-NOTES=maybe", "'maybe' is not a choice of decision 'UD-T1-REVIEW-NOTES'"),
        ("UD-DOD=ignore", "'ignore' is not a choice of decision 'UD-DOD'"),
        ("UD-APPROVE-DESIGN=changes-requested", "needs a note"),
    ):
        result = cli(repo, "run", ITEM, "--answer", answer)
        assert result.returncode == 2, (answer, result.returncode, result.stderr)
        line = _one_line_error(result.stderr)
        assert expected in line and answer.split("=")[0] in line, line
    assert dispatched(repo) == [] and _calls(repo) == []


def test_answers_in_a_persons_words_are_read_as_the_gate_reads_them(tmp_path: Path) -> None:
    """An answer the gate's classifier understands ("looks good", "at the end") is accepted
    at the start and applied at its gate."""
    # "at the end" is single-final: its Coder leaves T1 implemented (phasegate completes it).
    repo = _new_session(tmp_path, team_script("single-final"))
    result = cli(
        repo,
        "run",
        ITEM,
        "--answer",
        "UD-APPROVE-DESIGN=looks good",
        "--answer",
        "UD-REVIEW-STRATEGY=at the end",
    )
    assert result.returncode == 0, (result.returncode, result.stderr)
    status = status_json(repo)
    assert status["current_state"] == "DONE"
    assert status["review_strategy"] == "single-final"
