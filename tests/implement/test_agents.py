"""Agents without code changes (issue rule 3; seed 004: Future-Proof Design, "Support new
agents automatically without code changes")."""

from __future__ import annotations

from pathlib import Path

import pytest
from implement_helpers import FIXTURES, Team, cycles_file, key, make_repo, new_item, run

from phasegate.config import Config
from phasegate.errors import BadInputError
from phasegate.implement.agents import find_agents

PLAN_TEXT = """# Plan

## Phase 1: Assistant

- [ ] **Tune the answer prompt** [`agent: the-ai-engineer`] [`review: false`]
"""


def test_agents_come_from_agent_files_and_config_roles(tmp_path: Path) -> None:
    """An agent is an agent file's frontmatter name, or a config role that is not a
    workflow's own role (``default``, ``executor``... are bindings, not agents)."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, agents=("the-developer", "the-architect"))
    config = Config.model_validate(
        {
            "roles": {
                "default": {"backend": "scripted"},
                "executor": {"backend": "scripted"},
                "the-reviewer-bot": {"backend": "scripted"},
            }
        }
    )
    roster = find_agents(root, config, {"executor", "implementer"})
    assert roster.names() == ["the-architect", "the-developer", "the-reviewer-bot"]
    assert "architecture decisions" in roster.agents["the-architect"].description
    assert roster.agents["the-developer"].instructions.startswith("You are a pragmatic developer")


def test_an_agent_file_with_broken_frontmatter_is_reported(tmp_path: Path) -> None:
    """A file that cannot be read is reported with its path and line, not silently skipped."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, agents=("the-developer",))
    (root / ".claude" / "agents" / "broken.md").write_text("---\nname: [x\n---\nbody\n")
    roster = find_agents(root, Config(), ())
    assert roster.names() == ["the-developer"]
    assert roster.problems[0].startswith(".claude/agents/broken.md:")


def test_a_duplicate_key_in_frontmatter_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    """The line counts the opening ``---``; the parser's own multi-line text is not shown."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, agents=("the-developer",))
    (root / ".claude" / "agents" / "twice.md").write_text("---\nname: a\nname: b\n---\nbody\n")
    roster = find_agents(root, Config(), ())
    assert list(roster.problems) == [
        '.claude/agents/twice.md:3: invalid frontmatter: found duplicate key "name" '
        "(while constructing a mapping started on line 2)"
    ]


def test_an_unknown_agent_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    """A task naming an unknown agent stops with the list of known ones."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, agents=("the-developer", "the-architect"))
    with pytest.raises(BadInputError) as refused:
        run(new_item(root), Team({}))
    assert "PLAN.md:5:34: task 'Tune the answer prompt' names agent 'the-ai-engineer'" in str(
        refused.value
    )
    assert "known agents: the-architect, the-developer" in str(refused.value)


def test_a_newly_added_agent_file_implements_without_a_config_edit(tmp_path: Path) -> None:
    """Add .claude/agents/the-ai-engineer.md and run again: it implements the task, on the
    backend of the role it plays, with its file's instructions in its prompt."""
    root = make_repo(tmp_path / "repo", PLAN_TEXT, agents=("the-developer",))
    item = new_item(root)
    with pytest.raises(BadInputError):
        run(item, Team({}))
    (root / ".claude" / "agents" / "the-ai-engineer.md").write_text(
        (FIXTURES / "the-ai-engineer.md").read_text()
    )
    team = Team({"implementer": {"*": [{"write": {"prompts/answer.txt": "Be brief.\n"}}]}})
    assert run(item, team).status == "completed"
    (call,) = team.calls()
    assert call.role == "the-ai-engineer" and call.labels["plays"] == "implementer"
    assert "You are an AI engineer" in call.prompt_text()
    task = cycles_file(root)["sessions"]["006"]["tasks"][key("Tune the answer prompt")]
    assert task["implementer"] == "the-ai-engineer"
