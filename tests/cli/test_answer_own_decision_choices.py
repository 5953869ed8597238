"""`--answer` to phasegate's own decisions (`budget`, `transition-warning`,
`partial-phase`) with a choice they do not have is refused before the run (exit 2, one
line naming the option, the decision and its choices), as a gate's is: not when the
run asks it mid-way, after a question was recorded."""

from __future__ import annotations

from pathlib import Path

from test_hostile_text_and_answers import error_lines, phasegate, setup

from phasegate.errors import ExitCode

TWO = """\
name: two
items_dir: titems
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - id: draft
    executor: writer
    outputs: [a.md]
  - id: judge
    executor: writer
    outputs: [b.md]
  - id: e
    kind: end
"""
SCRIPT = {"writer": {"*": [{"write": {"a.md": "a\n", "b.md": "b\n"}, "text": "ok"}]}}


def test_a_choice_an_own_decision_does_not_have_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    repo = setup(tmp_path / "repo", "two", TWO, SCRIPT)
    assert phasegate(repo, "new", "t1", "-w", "two").returncode == 0
    cases = {
        "transition-warning=whatever": "(choices: proceed, stop)",
        "budget=lots": "(choices: raise, stop)",
        "partial-phase=later": "(choices: continue, fresh, review)",
    }
    for given, choices in cases.items():
        refused = phasegate(repo, "run", "t1", "--phase", "judge", "-a", given)
        assert refused.returncode == ExitCode.BAD_INPUT, refused.stderr
        (line,) = error_lines(refused.stderr)
        decision, _, choice = given.partition("=")
        assert f"--answer {given}: '{choice}' is not a choice of decision '{decision}'" in line
        assert choices in line, line
    journal = repo / "titems" / "t1" / ".journal.jsonl"
    assert "decision.needed" not in (journal.read_text() if journal.exists() else "")
    taken = phasegate(repo, "run", "t1", "--phase", "judge", "-a", "transition-warning=proceed")
    assert taken.returncode == 0, taken.stderr
