"""Each command's ``--help`` says enough to use it without the docs: what ``init`` binds
the roles to and what it does with a config that exists, when ``doctor`` and
``validate`` fail, where ``run``'s phases are listed and what it does at a decision
without a terminal, and every cause of exit code 4 the README lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_process import run_cli


def help_text(tmp_path: Path, *command: str) -> str:
    done = run_cli(tmp_path, *command, "--help", env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


def test_the_exit_codes_name_every_cause_of_a_block(tmp_path: Path) -> None:
    text = help_text(tmp_path)
    # README, Commands and exit codes: 4 is also a deleted required artifact and a
    # change that is not in the phase the command acts on.
    assert "required artifact missing" in text, text
    assert "a change in another phase" in text, text
    assert "6 agent failure (or a backend that cannot run here)" in text, text


def test_init_says_what_the_roles_are_bound_to_and_that_a_config_is_kept(
    tmp_path: Path,
) -> None:
    text = help_text(tmp_path, "init")
    assert "agent CLIs found on PATH (claude, codex, gemini)" in text, text
    assert ".phasegate/agents.yaml" in text and "backend: auto" in text, text
    assert "A config that exists is left unchanged" in text, text


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (("doctor",), "Exits 6 when a role of a workflow in use"),
        (("validate",), "Exits 0 when the workflow is valid (warnings or not), 2 when it is not"),
    ],
)
def test_the_checking_commands_say_when_they_fail(
    tmp_path: Path, command: tuple[str, ...], words: str
) -> None:
    assert words in help_text(tmp_path, *command)


def test_run_says_where_its_phases_are_listed_and_what_a_decision_does(tmp_path: Path) -> None:
    text = help_text(tmp_path, "run")
    assert "phasegate workflows lists each workflow's phases" in text, text
    assert "without one the run stops (exit code 3)" in text, text


def test_install_names_every_file_it_writes(tmp_path: Path) -> None:
    """``install claude-code`` writes .mcp.json at the repository's root, not in .claude/."""
    text = help_text(tmp_path, "install")
    assert ".claude/" in text and "MCP server to .mcp.json" in text, text


def test_new_says_where_an_implement_item_finds_its_plan(tmp_path: Path) -> None:
    assert "docs/specs/NAME*/PLAN.md" in help_text(tmp_path, "new")


def test_no_help_speaks_of_the_requirements_numbers(tmp_path: Path) -> None:
    """A user never saw "seed 002": the change group says what it works on instead."""
    text = help_text(tmp_path, "change")
    assert "seed" not in text.lower() and "changes/ID/" in text, text
    assert "seed" not in help_text(tmp_path).lower()
