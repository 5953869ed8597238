"""``.review-history.md`` keeps its own words whatever the environment holds.

The history is rendered from the review records after they are redacted: a variable
named like a secret that holds a word the history itself writes (``X_TOKEN=approved``,
``S_TOKEN=structured``) leaves the ``**Verdict:**`` line, the headings and the source
as they are, while a real secret in a reviewer's summary or issues is still masked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))
from cli_process import run_cli
from phasegate.redact import MASK

SECRET = "MYSECRETVALUE123"
#: Secret-named variables holding words the history writes, and one real secret.
ENV = {
    "X_TOKEN": "approved",
    "S_TOKEN": "structured",
    "H_TOKEN": "history",
    "F_TOKEN": "Feedback",
    "I_TOKEN": "Iteration",
    "MY_API_KEY": SECRET,
}

AGENTS = {
    "executor": {
        "brainstorm": [{"write": {"{item_dir}/brainstorm.md": "# Brainstorm\n"}}],
        "specify": [{"write": {"{item_dir}/spec.md": "# Spec\n"}}],
    },
    "chain-reviewer": {
        "brainstorm": [
            {
                "verdict": {
                    "approved": False,
                    "summary": f"found {SECRET} in the notes",
                    "issues": [{"severity": "blocker", "description": f"leaks {SECRET}"}],
                }
            },
            {"verdict": {"approved": True, "summary": "approved now"}},
        ],
        "*": [{"verdict": {"approved": True, "summary": "fine"}}],
    },
}


def _feature_repo(path: Path) -> Path:
    """A git repository with scripted agents and the feature item ``a1``."""
    path.mkdir(parents=True)
    git = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    done = run_cli(path, "init", env={"PHASEGATE_AGENT_CLIS": "none"})
    assert done.returncode == 0, done.stderr
    script = path / ".phasegate" / "agents.yaml"
    script.write_text(json.dumps(AGENTS), encoding="utf-8")  # JSON is YAML
    done = run_cli(path, "new", "a1", "--workflow", "feature", "--description", "x", env=ENV)
    assert done.returncode == 0, done.stderr
    return path


def test_review_history_keeps_its_words_and_masks_secrets(tmp_path: Path) -> None:
    repo = _feature_repo(tmp_path / "repo")
    ran = run_cli(repo, "run", "a1", "--until", "specify", env=ENV)
    assert ran.returncode == 0, ran.stderr
    history = (repo / "docs" / "features" / "a1" / ".review-history.md").read_text()
    assert history.startswith("# Review history: a1\n"), history
    assert "## Phase: brainstorm" in history and "## Phase: specify" in history
    assert "### Iteration 1 - " in history and "### Iteration 2 - " in history
    assert history.count("**Verdict:** not approved (structured)") == 1, history
    assert history.count("**Verdict:** approved (structured)") == 2, history
    assert history.count("**Reviewer Feedback:**") == 3, history
    # The reviewer's words are free text: a variable's value in them is masked.
    assert SECRET not in history
    assert f"found {MASK} in the notes" in history
    assert f"- [blocker] leaks {MASK}" in history
    assert f"{MASK} now" in history  # "approved now": the summary is the reviewer's
    assert history.count(MASK) == 3, history
