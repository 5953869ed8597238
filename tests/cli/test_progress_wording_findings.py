"""What a run's progress lines say is true: plurals agree, a node that ended with another
outcome (a reviewer's REJECTED mapped elsewhere) is not marked complete, a foreach's items
are named and its end is said once, a check node run with --phase is promised no review
iterations, and `phasegate answer` names the item's own command (user workflows and
scripted agents, the real CLI in this process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "implement"))
from implement_helpers import cli as implement_cli
from implement_helpers import key, make_repo

WORKFLOW = """\
name: wf
items_dir: wfitems
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, judge: {}}
nodes:
  - id: plan
    executor: writer
    outputs: [tasks.md]
    reviewers:
      - role: judge
        reader: words
        on: {APPROVED: pass, NEEDS_REVISION: revise, REJECTED: rejected, UNCLEAR: revise}
    budget: {max: 1, on_exhausted: complete}
    on: {pass: tasks, rejected: dropped}
  - id: tasks
    kind: foreach
    items: {file: tasks.md, parser: markdown-tasks}
    body:
      - id: build
        executor: writer
        outputs: ["{{ task }}.txt"]
        reviewer: judge
      - id: built
        kind: end
  - id: verify
    kind: check
    run: [{name: t, run: "true"}]
    on: {fail: "@blocked"}
  - id: e
    kind: end
  - id: dropped
    kind: end
    status: stopped
"""
WRITER = (
    'writer: {plan: [{write: {"{item_dir}/tasks.md": "- [ ] T1: one\\n- [ ] T2: two\\n"}}],'
    ' "*": [{write: {"{item_dir}/T1.txt": "x\\n", "{item_dir}/T2.txt": "x\\n"}}]}\n'
)


def judge(word: str) -> str:
    """The judge's script: ``word`` on the plan (with one issue), approval elsewhere."""
    return (
        f"judge: {{plan: [{{verdict: {{verdict: {word}, summary: no, issues: "
        "[{severity: high, description: wrong idea}]}}], "
        '"*": [{verdict: {approved: true, summary: ok, issues: []}}]}\n'
    )


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The real CLI, in this process: exit code, stdout, stderr."""
    from phasegate.cli import main

    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], word: str, *options: str
) -> list[str]:
    """A repository with the workflow above; item c1 created and run: the progress lines."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    code, _, err = cli(capsys, "init", "-C", str(repo))
    assert code == 0, err
    folder = repo / ".phasegate" / "workflows"
    (folder / "prompts" / "wf").mkdir(parents=True)
    for prompt in ("plan", "judge", "build"):
        (folder / "prompts" / "wf" / f"{prompt}.md").write_text("Do {{ node }} for {{ item }}\n")
    (folder / "wf.yaml").write_text(WORKFLOW)
    (repo / ".phasegate" / "agents.yaml").write_text(WRITER + judge(word))
    code, _, err = cli(capsys, "new", "c1", "--workflow", "wf", "-d", "x", "-C", str(repo))
    assert code == 0, err
    code, out, err = cli(capsys, "run", "c1", *options, "-C", str(repo))
    assert code == 0, out + err
    return err.splitlines()


def test_one_iteration_with_concerns_is_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The budget spent with the judge asking for revisions: the plan goes on, with
    concerns, after 1 iteration (not "1 iterations"); its start says so too."""
    lines = run_item(tmp_path, capsys, "NEEDS_REVISION")
    assert "✔ plan complete (1 iteration). Reviewer concerns:" in lines, lines
    assert "▶ plan (mode standard: up to 1 review iteration)" in lines, lines
    assert not [line for line in lines if "1 iterations" in line or "1 review iterations" in line]


def test_a_node_that_ended_rejected_is_not_marked_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """REJECTED is the outcome `rejected` (mapped to an end): no success mark for it."""
    lines = run_item(tmp_path, capsys, "REJECTED")
    assert "✗ plan ended rejected (1 iteration). Reviewer concerns:" in lines, lines
    assert "      - [high] wrong idea" in lines, lines
    assert not [line for line in lines if "plan complete" in line], lines


def test_each_foreach_item_names_itself_and_the_loop_ends_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each item's body node ends naming the item and the node; the loop's end is one line."""
    lines = run_item(tmp_path, capsys, "APPROVED")
    assert "✔ T1: build complete (1 iteration)" in lines, lines
    assert "✔ T2: build complete (1 iteration)" in lines, lines
    assert [line for line in lines if line.startswith("✔ tasks")] == [
        "✔ tasks complete (2 items)"
    ], lines
    assert (
        lines.index("✔ T2: build complete (1 iteration)")
        < lines.index("✔ tasks complete (2 items)")
        < lines.index("▶ verify (check verify)")
    )


def test_a_check_node_run_by_phase_is_promised_no_review_iterations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = run_item(tmp_path, capsys, "APPROVED", "--phase", "verify", "--yes")
    started = [line for line in lines if line.startswith("▶ verify")]
    assert started and not [line for line in started if "review iteration" in line], lines
    assert "  ✓ check t passed" in lines, lines


def test_the_items_to_go_through_are_counted_and_their_order_said_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = run_item(tmp_path, capsys, "APPROVED")
    assert "  2 items to go through, in the order the file lists them" in lines, lines
    assert not [line for line in lines if "item(s)" in line or "document order" in line]


ONE_TASK = """# Plan: Signing

## Phase 1: Signing

- [ ] **Sign outgoing payloads** [`agent: the-developer`] [`review_focus: security`]
  - HMAC over the raw body
"""


def test_the_answer_of_an_implement_item_names_phasegate_implement(tmp_path: Path) -> None:
    """The implement workflow's items are run with `phasegate implement ID` (its docs,
    its status): after an answer, the hint names that command, as status does."""
    import json

    config = {
        "roles": {"default": {"backend": "scripted"}},
        "backends": {"scripted": {"script": ".phasegate/agents.yaml"}},
    }
    root = make_repo(tmp_path / "repo", ONE_TASK, config=config)
    script = {
        "the-developer": {"implement": [{"write": {"src/sign.py": "x = 1\n"}}]},
        "*": {"*": [{"text": "Hmm. I wonder about this."}]},
    }
    (root / ".phasegate" / "agents.yaml").write_text(json.dumps(script))
    assert implement_cli(root, "implement", "006").returncode == 3
    status = json.loads(implement_cli(root, "status", "006", "--json").stdout)
    decision = f"unclear-{key('Sign outgoing payloads')}"
    answered = implement_cli(root, "answer", "006", decision, "escalate")
    assert answered.returncode == 0, answered.stderr
    assert answered.stdout.rstrip().endswith("Next: phasegate implement 006"), answered.stdout
    assert status["nextCommand"].startswith("phasegate answer 006")
    after = json.loads(implement_cli(root, "status", "006", "--json").stdout)
    assert after["nextCommand"] == "phasegate implement 006"
