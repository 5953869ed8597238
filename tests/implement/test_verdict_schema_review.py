"""A structured review that does not match the verdict schema is unclear (never an
approval), and the reason names the field and the values it allows."""

from __future__ import annotations

import json
from pathlib import Path

from implement_helpers import cli, git, make_repo

PLAN = """# Plan

## Phase 1: Core

- [ ] **Create module a** [`agent: the-developer`]
"""


def _run(tmp_path: Path, issue: str) -> tuple[object, list[dict[str, object]]]:
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
        "commands": {"test": "true"},
    }
    root = make_repo(
        tmp_path / "repo", PLAN, agents=("the-developer", "the-architect"), config=config
    )
    (root / ".phasegate" / "agents.yaml").write_text(
        "implementer:\n"
        '  "*":\n'
        '    - write: {"src/{task}.py": "x\\n"}\n'
        '"*":\n'
        '  "*":\n'
        f"    - verdict: {{verdict: NEEDS_REVISION, summary: add tests, issues: [{issue}]}}\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "script")
    done = cli(root, "implement", "006")
    path = root / ".phasegate" / "implement" / "006" / ".journal.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return done, events


def _verdicts(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in events if e["event"] == "review.verdict"]


def test_an_unknown_severity_names_the_field_and_the_allowed_values(tmp_path: Path) -> None:
    """`severity: blocker` is the approval schema's word, not implement's: unclear (a person
    decides, exit 3), and the reason says which field and what it allows."""
    done, events = _run(tmp_path, "{severity: blocker, description: no tests, location: null}")
    assert done.returncode == 3, done.stdout + done.stderr
    expected = "issues[0].severity: 'blocker' is not one of 'high', 'medium' or 'low'"
    assert expected in done.stdout + done.stderr
    verdicts = _verdicts(events)
    assert verdicts and verdicts[0]["verdict"] == "UNCLEAR"
    assert expected in json.dumps(verdicts[0])


def test_a_missing_field_is_named_too(tmp_path: Path) -> None:
    """An issue without its description: the field is named, and it is still not approved."""
    done, _ = _run(tmp_path, "{severity: high, location: null}")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "issues[0].description: field required" in done.stdout + done.stderr


def test_a_json_answer_in_text_names_the_field_too(tmp_path: Path) -> None:
    """A JSON verdict written as text (a backend enforcing no schema) that does not match:
    the field is named as well."""
    answer = (
        '{"verdict": "NEEDS_REVISION", "summary": "add tests", '
        '"issues": [{"severity": "blocker", "description": "no tests", "location": null}]}'
    )
    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml", "structured_output": False}},
        "commands": {"test": "true"},
    }
    root = make_repo(
        tmp_path / "repo", PLAN, agents=("the-developer", "the-architect"), config=config
    )
    (root / ".phasegate" / "agents.yaml").write_text(
        "implementer:\n"
        '  "*":\n'
        '    - write: {"src/{task}.py": "x\\n"}\n'
        '"*":\n'
        '  "*":\n'
        f"    - text: {json.dumps(answer)}\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "script")
    done = cli(root, "implement", "006")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "issues[0].severity: 'blocker' is not one of" in done.stdout + done.stderr
