"""What users expect of a command-line tool: version, -h, completion, JSON, colour."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import typer

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, new_repo, phasegate

from phasegate.cli import main
from phasegate.cli.commands import load_all

ESC = "\x1b["


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = new_repo(tmp_path_factory.mktemp("conventions") / "repo")
    assert phasegate(root, "run", ITEM, "--until", "brainstorm").returncode == 0
    return root


def plain_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "120", **extra}


def in_a_terminal(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """What a person sees: the command's stdout and stderr on a real pseudo-terminal."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env or plain_env(),
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the command closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_version_and_short_v_print_the_version(repo: Path) -> None:
    """--version and -V print the installed version."""
    for flag in ("--version", "-V"):
        result = phasegate(repo, flag)
        assert result.returncode == 0
        assert result.stdout.strip() == f"phasegate {version('phasegate')}"


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path below ``group`` (the group itself included)."""
    found: list[tuple[str, ...]] = [path]
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            found += _commands(command, (*path, name))
        else:
            found.append((*path, name))
    return found


def test_short_h_is_help_on_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    """-h is --help on every command and group."""
    commands = _commands(typer.main.get_command(load_all()))
    assert ("logs",) in commands and ("change", "list") in commands and ("serve",) in commands
    for command in commands:
        assert main([*command, "-h"]) == 0, command
        shown = capsys.readouterr().out
        assert shown.startswith(f"Usage: phasegate {' '.join(command)}".rstrip()), command
        assert "-h, --help" in shown, command


def test_a_bare_phasegate_prints_help_and_exits_0(repo: Path) -> None:
    """A bare `phasegate` (or command group) is a request for help, not an error."""
    for group in ((), ("change",), ("worktree",)):
        result = phasegate(repo, *group)
        assert result.returncode == 0, group
        assert result.stdout.startswith(f"Usage: phasegate {' '.join(group)}".rstrip())
        assert "error" not in result.stderr and result.stderr == ""


def test_show_completion_prints_a_completion_script(repo: Path) -> None:
    """--show-completion prints the shell's completion script."""
    result = phasegate(repo, "--show-completion", env={"SHELL": "/bin/bash"})
    assert result.returncode == 0
    assert "_PHASEGATE_COMPLETE=complete_bash" in result.stdout


def test_completion_completes_command_names_and_options(repo: Path) -> None:
    """What the installed completion script asks phasegate, and its answer."""
    commands = phasegate(
        repo,
        env={
            "_PHASEGATE_COMPLETE": "complete_bash",
            "COMP_WORDS": "phasegate lo",
            "COMP_CWORD": "1",
        },
    )
    assert commands.returncode == 0 and commands.stdout.split() == ["logs"]
    options = phasegate(
        repo,
        env={
            "_PHASEGATE_COMPLETE": "complete_bash",
            "COMP_WORDS": "phasegate logs --fo",
            "COMP_CWORD": "2",
        },
    )
    assert options.stdout.split() == ["--follow"]


@pytest.mark.parametrize(
    "args",
    [
        ("workflows", "--json"),
        ("validate", "{builtin}/feature.yaml", "--json"),
        ("status", "--json"),
        ("status", ITEM, "--json"),
        ("doctor", "--json"),
        ("logs", ITEM, "--json"),
        ("change", "list", "--json"),
    ],
)
def test_listing_and_reporting_commands_print_json(repo: Path, args: tuple[str, ...]) -> None:
    """Every listing or reporting command takes --json: plain JSON, even with colour forced."""
    builtin = Path(__file__).parents[2] / "src/phasegate/workflow/builtin"
    args = tuple(a.format(builtin=builtin) for a in args)
    result = phasegate(repo, *args, "--color", "always")
    assert result.returncode == 0, result.stderr
    assert ESC not in result.stdout
    if args[0] == "logs":
        assert all(json.loads(line)["item"] == ITEM for line in result.stdout.splitlines())
    else:
        assert isinstance(json.loads(result.stdout), dict | list)


def test_with_json_an_error_is_a_json_object_on_stderr_with_the_exit_code(
    repo: Path, tmp_path: Path
) -> None:
    """With --json, errors (usage errors included) are JSON objects on stderr."""
    missing = phasegate(repo, "status", "ghost", "--json")
    assert missing.returncode == 2 and missing.stdout == ""
    error = json.loads(missing.stderr)
    assert error == {"error": error["error"], "exit_code": 2}
    assert "no work item named 'ghost'" in error["error"]
    usage = phasegate(repo, "workflows", "--json", "--bogus")
    assert usage.returncode == 2 and "No such option" in json.loads(usage.stderr)["error"]
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: broken\nphases: []\n")
    invalid = phasegate(repo, "validate", str(broken), "--json")
    assert invalid.returncode == 2
    assert json.loads(invalid.stdout)["valid"] is False and json.loads(invalid.stdout)["problems"]
    assert "is not a valid workflow" in json.loads(invalid.stderr)["error"]


def test_doctor_json_reports_an_unusable_role_as_a_json_error(tmp_path: Path) -> None:
    """doctor --json prints its report and ends with a JSON error (exit 2: `nope` is no
    installed backend, a config error)."""
    root = new_repo(tmp_path / "repo")
    config = root / ".phasegate" / "config.yaml"
    config.write_text(config.read_text() + "\n# broken on purpose\n")
    config.write_text(config.read_text().replace("{backend: scripted}", "{backend: nope}"))
    result = phasegate(root, "doctor", "--json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert any(r["role"] == "default" and not r["usable"] for r in report["roles"])
    assert json.loads(result.stderr)["exit_code"] == 2


def test_status_json_in_a_terminal_is_plain_json(repo: Path) -> None:
    """status --json is json.dumps output: no colour even on a terminal."""
    shown = in_a_terminal(repo, "status", ITEM, "--json")
    assert ESC not in shown
    assert json.loads(shown.replace("\r\n", "\n"))["id"] == ITEM


def test_a_terminal_gets_colour_a_pipe_does_not(repo: Path) -> None:
    """--color auto: colour on a terminal, none in a pipe."""
    assert ESC in in_a_terminal(repo, "workflows")
    piped = phasegate(repo, "workflows", env=plain_env())
    assert piped.returncode == 0 and "feature (built-in)" in piped.stdout
    assert ESC not in piped.stdout + piped.stderr


def test_color_never_and_no_color_write_no_escape_code_even_to_a_terminal(repo: Path) -> None:
    """--color never (before or after the command) and NO_COLOR: no escape code at all."""
    for shown in (
        in_a_terminal(repo, "--color", "never", "workflows"),
        in_a_terminal(repo, "workflows", "--color=never"),  # after the command too
        in_a_terminal(repo, "workflows", env=plain_env(NO_COLOR="1")),
        in_a_terminal(repo, "status", ITEM, env=plain_env(NO_COLOR="1")),
    ):
        assert "feature" in shown or ITEM in shown
        assert "\x1b" not in shown


def test_color_always_colours_a_pipe_without_drawing_a_spinner(tmp_path: Path) -> None:
    """Forced colour is colour only: no cursor movement or spinner frames in a pipe."""
    root = new_repo(tmp_path / "repo")
    result = phasegate(root, "run", ITEM, "--until", "brainstorm", "--color", "always")
    assert result.returncode == 0, result.stderr
    assert ESC in result.stderr
    assert "\x1b[?25l" not in result.stderr and "\r" not in result.stderr
    assert "chain-reviewer (scripted) working on brainstorm…\n" in result.stderr  # a plain line


def test_no_color_is_overridden_by_color_always(repo: Path) -> None:
    """An explicit --color always wins over NO_COLOR."""
    result = phasegate(repo, "workflows", "--color", "always", env=plain_env(NO_COLOR="1"))
    assert ESC in result.stdout


def test_a_bad_color_value_is_bad_input(repo: Path) -> None:
    """An unknown --color value is exit 2 with the accepted values."""
    result = phasegate(repo, "status", "--color", "sometimes")
    assert result.returncode == 2
    assert "--color must be one of auto, always, never" in result.stderr


def test_a_stop_for_a_decision_is_not_called_an_error(tmp_path: Path) -> None:
    """Exit 3 (waiting on a person) says ``waiting``, not ``error``: nothing failed."""
    root = new_repo(tmp_path / "repo")
    (root / ".phasegate" / "workflows").mkdir()
    (root / ".phasegate" / "workflows" / "ask.yaml").write_text(
        "name: ask\ndescription: One question.\nitems_dir: work/ask\ndefault_mode: standard\n"
        "modes:\n  standard: {max_iterations: 1}\nroles: {}\nnodes:\n"
        "  - id: go\n    kind: gate\n    question: Go on?\n"
        "    choices:\n      yes: {to: done}\n      no: {to: done}\n"
        "  - id: done\n    kind: end\n"
    )
    assert phasegate(root, "new", "q1", "--workflow", "ask").returncode == 0
    waiting = phasegate(root, "run", "q1")
    assert waiting.returncode == 3, waiting.stderr
    last = waiting.stderr.strip().splitlines()[-1]
    assert last.startswith("phasegate: waiting: Go on? Answer with: phasegate answer q1 go"), last
    missing = phasegate(root, "run", "ghost")
    assert missing.returncode == 2 and missing.stderr.startswith("phasegate: error: ")
