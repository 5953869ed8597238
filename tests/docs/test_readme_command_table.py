"""The README's command table and the CLI cannot drift apart.

- every command the table names exists, with every option the table lists for it;
- every command the CLI has is in the table;
- every option any command takes is named somewhere in README.md or docs/*.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_process import cli_in_process

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = README + "".join(
    path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))
)


def table_commands() -> list[str]:
    """Each command of the table's first column, as written (``phasegate`` added where left out)."""
    start = README.index("## Commands and exit codes")
    end = README.index("| exit code |", start)
    found = []
    for row in README[start:end].splitlines():
        if not row.startswith("| `phasegate"):
            continue
        first, what = row.replace("\\|", "¦").split("|")[1:3]
        # The first column, and the other names it says its commands also have.
        also = re.findall(r"also named ((?:`[^`]+`(?:, | and )?)+)", what)
        for span in re.findall(r"`([^`]+)`", first + " ".join(also)):
            found.append(span if span.startswith("phasegate ") else f"phasegate {span}")
    return found


def sections(text: str, title: str) -> list[str]:
    """The lines of a help text's section (``Options:``, ``Commands:``), up to a blank line."""
    found = re.search(rf"^{title}:\n((?:[ \t].*\n?)+)", text, re.M)
    return found.group(1).splitlines() if found else []


def option_names(text: str) -> list[list[str]]:
    """Each option of a help text: its names (``-f, --follow`` -> ``[-f, --follow]``)."""
    names = []
    for line in sections(text, "Options"):
        head = re.match(r"\s+(-[^ ]*(?:,? (?:/ )?-[^ ]*)*)", line)
        if head:
            names.append(re.findall(r"-{1,2}[A-Za-z][\w-]*", head.group(1)))
    return names


def command_words(command: str) -> list[str]:
    """The words naming the command (``phasegate worktree remove NAME`` -> worktree, remove)."""
    words = []
    for word in command.split()[1:]:
        if not re.fullmatch(r"[a-z][a-z-]*", word):
            break
        words.append(word)
    return words


def documented(command: tuple[str, ...], option: str) -> bool:
    """Whether the docs name ``option``: a long one anywhere, a short one on a line naming
    ``phasegate COMMAND`` (``-q`` alone could be any tool's)."""
    pattern = rf"(?<![\w-]){re.escape(option)}(?![\w-])"
    if option.startswith("--"):
        return re.search(pattern, DOCS) is not None
    named = "phasegate " + " ".join(command)
    return any(named in line and re.search(pattern, line) for line in DOCS.splitlines())


@pytest.fixture
def helps(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> dict[tuple[str, ...], str]:
    """The CLI's ``--help`` of each command asked for (wide, without colour)."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("NO_COLOR", "1")

    class Helps(dict[tuple[str, ...], str]):
        def __missing__(self, key: tuple[str, ...]) -> str:
            code, out, err = cli_in_process(capsys, *key, "--help")
            assert code == 0, f"phasegate {' '.join(key)} --help: {err}"
            self[key] = out
            return out

    return Helps()


def cli_commands(helps: dict[tuple[str, ...], str]) -> list[tuple[str, ...]]:
    """Every command and group subcommand the CLI lists."""
    found = []
    for line in sections(helps[()], "Commands"):
        name = line.split()[0]
        subcommands = [row.split()[0] for row in sections(helps[(name,)], "Commands")]
        found += [(name, sub) for sub in subcommands] if subcommands else [(name,)]
    return found


def test_the_table_names_commands() -> None:
    assert len(table_commands()) > 15


@pytest.mark.parametrize("command", table_commands())
def test_each_command_of_the_table_takes_the_options_listed(
    command: str, helps: dict[tuple[str, ...], str]
) -> None:
    words = command_words(command)
    # A group's command is named by its subcommand; any other command's next word is an argument.
    key = tuple(words[:2]) if sections(helps[tuple(words[:1])], "Commands") else tuple(words[:1])
    text = helps[key]
    taken = {name for names in option_names(text) for name in names}
    listed = re.findall(r"(?<![\w-])(-{1,2}[A-Za-z][\w-]*)", command)
    assert [flag for flag in listed if flag not in taken] == [], f"{command}: {sorted(taken)}"


def test_every_command_of_the_cli_is_in_the_table(helps: dict[tuple[str, ...], str]) -> None:
    named = {tuple(command_words(command)) for command in table_commands()}
    missing = [
        " ".join(key)
        for key in cli_commands(helps)
        if not any(words[: len(key)] == key for words in named)
    ]
    assert missing == []


def test_every_option_of_every_command_is_documented(helps: dict[tuple[str, ...], str]) -> None:
    """An option named nowhere in README.md or docs/ is one a user cannot find."""
    undocumented = []
    for key in cli_commands(helps):
        for names in option_names(helps[key]):
            if "--help" in names:
                continue
            if not any(documented(key, name) for name in names):
                undocumented.append(f"phasegate {' '.join(key)} {'/'.join(names)}")
    assert undocumented == []


def test_no_option_shows_a_python_type_for_its_value(helps: dict[tuple[str, ...], str]) -> None:
    """``--answer <list[str]>`` tells a user nothing: values are named as they are written."""
    shown = [
        f"phasegate {' '.join(key)}: {line.strip()}"
        for key in cli_commands(helps)
        for line in sections(helps[key], "Options")
        if re.search(r"<[^>]*[\[\]][^>]*>", line)
    ]
    assert shown == []
