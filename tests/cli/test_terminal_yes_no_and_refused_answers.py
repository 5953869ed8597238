"""phasegate's own questions at a terminal: "Start design anyway?" takes yes and no;
answers refused as many times as the prompt allows leave the decision waiting (exit 3,
naming the command that answers it) instead of acting on a choice nobody made, and
``logs`` says each was refused; a phase found half done says where it stopped in words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
from pty_terminal import Terminal

PLAIN = {"TERM": "dumb", "NO_COLOR": "1", "PHASEGATE_AGENT_CLIS": "none"}
WARNING_PROMPT = "Answer (proceed / stop)"
PARTIAL_PROMPT = "Answer (continue / fresh / review)"

AGENTS = """\
executor:
  "*": [{write: {"{item_dir}/{phase}.md": "# Text\\n"}}]
chain-reviewer:
  brainstorm: [{fail: down}]
  "*": [{verdict: {approved: true, summary: fine, issues: []}}]
"""


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, **PLAIN},
    )


def project(root: Path) -> Path:
    root.mkdir(parents=True)
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True
        )
    assert phasegate(root, "init").returncode == 0
    (root / ".phasegate" / "agents.yaml").write_text(AGENTS)
    assert phasegate(root, "new", "a", "--description", "x").returncode == 0
    return root


def events(repo: Path) -> list[dict[str, object]]:
    journal = repo / "docs" / "features" / "a" / ".journal.jsonl"
    return [json.loads(line) for line in journal.read_text().splitlines()]


def test_yes_at_a_transition_warning_starts_the_phase(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    terminal = Terminal(repo, "run", "a", "--phase", "design", env=PLAIN)
    terminal.wait_for(WARNING_PROMPT)
    terminal.type("yes")
    terminal.wait_for("design complete")
    assert terminal.finish() == 0
    answered = [e for e in events(repo) if e["event"] == "decision.answered"]
    assert [(e["id"], e["choice"], e["by"]) for e in answered] == [
        ("transition-warning", "proceed", "prompt")
    ]
    assert (repo / "docs" / "features" / "a" / "design.md").is_file()


def test_no_at_a_transition_warning_declines_the_start(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    terminal = Terminal(repo, "run", "a", "--phase", "design", env=PLAIN)
    terminal.wait_for(WARNING_PROMPT)
    terminal.type("n")
    shown = terminal.wait_for("not starting design: declined")
    assert "answer refused" not in shown, shown
    assert terminal.finish() == 0
    assert not (repo / "docs" / "features" / "a" / "design.md").exists()


def test_refused_answers_leave_the_warning_waiting(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    terminal = Terminal(repo, "run", "a", "--phase", "design", env=PLAIN)
    for typed in ("maybe", "later", "hmm"):
        terminal.wait_for(WARNING_PROMPT)
        terminal.type(typed)
    shown = terminal.wait_for("--yes)")
    assert "phasegate run a --phase design --yes" in shown, shown
    assert "declined" not in shown, shown
    assert terminal.finish() == 3
    assert not [e for e in events(repo) if e["event"] == "decision.answered"]
    status = json.loads(phasegate(repo, "status", "a", "--json").stdout)
    assert status["nextCommand"] == "phasegate answer a transition-warning proceed"
    logs = phasegate(repo, "logs", "a").stdout
    refused = "answer refused: 'maybe' is not a choice of decision 'transition-warning'"
    assert refused in logs, logs


def test_refused_answers_at_a_half_done_phase_change_nothing(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo")
    failed = phasegate(repo, "run", "a")
    assert failed.returncode == 6, failed.stderr
    before = len(events(repo))
    terminal = Terminal(repo, "run", "a", env=PLAIN)
    shown = terminal.wait_for(PARTIAL_PROMPT)
    assert "(iteration 1, at the review)" in shown, shown
    for typed in ("x", "y", "z"):
        terminal.type(typed)
        if typed != "z":
            terminal.wait_for(PARTIAL_PROMPT)
    shown = terminal.wait_for("3 attempts; answer with")
    shown += terminal.wait_for("(choices: continue, fresh, review)")
    assert (
        "no valid answer to decision partial-phase of a in 3 attempts; answer with: "
        "phasegate answer a partial-phase continue" in shown
    ), shown
    assert terminal.finish() == 3
    later = events(repo)[before:]
    assert {e["event"] for e in later} <= {"decision.needed", "decision.invalid", "run.ended"}, [
        e["event"] for e in later
    ]
    status = json.loads(phasegate(repo, "status", "a", "--json").stdout)
    assert status["nextCommand"] == "phasegate answer a partial-phase continue"
