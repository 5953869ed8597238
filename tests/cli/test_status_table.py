"""How the ``phasegate status`` table is laid out: the columns that say which item it is and
where it stands (item, workflow, status, phase) are never cut. Into a pipe or a file a
line is as long as it needs to be; at a terminal the table fits, the next command wrapping
between its words."""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "dashboard"))
from dashboard_helpers import ITEM, new_repo, phasegate
from test_cli_conventions import in_a_terminal, plain_env

from phasegate.engine.index import index_path

#: The long next command of ``ITEM`` once a run stops at the transition warning.
ANSWER = f"phasegate answer {ITEM} transition-warning proceed"
ROW = [ITEM, "feature", "active", "-", *ANSWER.split()]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """``ITEM`` waiting on the transition warning of ``run --phase design``."""
    root = new_repo(tmp_path / "repo")
    assert phasegate(root, "run", ITEM, "--phase", "design").returncode == 3
    return root


@pytest.mark.parametrize("rows_from", ["index", "state files"])
def test_into_a_pipe_no_column_is_cut_however_narrow_the_width(repo: Path, rows_from: str) -> None:
    """``status | cat`` with a width far under the table's: each line whole, no ellipsis;
    rows read from the item index or (with no index) from the state files alike."""
    if rows_from == "state files":
        shutil.rmtree(index_path(repo).parent)
    shown = phasegate(repo, "status", env={"COLUMNS": "40"})
    assert shown.returncode == 0, shown.stderr
    header, row = shown.stdout.splitlines()
    assert header.split() == ["item", "workflow", "status", "phase", "next"]
    assert row.split() == ROW
    assert "…" not in shown.stdout


def test_at_a_terminal_the_table_fits_and_only_the_next_command_wraps(repo: Path) -> None:
    """At a terminal 72 columns wide no line is wider; item, workflow, status and phase
    are whole on the item's line, and the next command continues below them."""
    shown = in_a_terminal(repo, "status", env=plain_env(COLUMNS="72", NO_COLOR="1"))
    lines = [line.rstrip() for line in shown.replace("\r", "").splitlines() if line.strip()]
    assert all(len(line) <= 72 for line in lines), lines
    assert lines[0].split() == ["item", "workflow", "status", "phase", "next"]
    assert lines[1].split()[:4] == ROW[:4]
    wrapped = lines[1].split()[4:] + [word for line in lines[2:] for word in line.split()]
    assert len(lines) > 2 and " ".join(wrapped) == ANSWER
    assert "…" not in shown


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _table(width: int | None, rows: list[dict[str, object]]) -> list[str]:
    from rich.console import Console

    from phasegate.cli.views import print_item_table

    file = _Terminal() if width else io.StringIO()
    console = Console(file=file, width=width or 40, soft_wrap=True, color_system=None)
    print_item_table(console, rows)
    return file.getvalue().splitlines()


ROWS: list[dict[str, object]] = [
    {
        "id": "parser",
        "workflow": "feature",
        "status": "active",
        "inProgress": {"phase": "plan", "iteration": 2, "maxIterations": 3},
        "currentPhase": "plan",
        "nextCommand": "phasegate run parser --with-an-option-longer-than-the-room",
    },
    {"id": "broken", "workflow": "team", "error": "state file broken: not JSON"},
]


def test_a_word_longer_than_the_room_is_cut_and_an_unreadable_item_says_so() -> None:
    """At a terminal 70 columns wide the next command folds between words, a word longer
    than its column is cut; an unreadable item's row points to its error below."""
    lines = _table(70, ROWS)
    assert all(len(line) <= 70 for line in lines), lines
    assert lines[0].split() == ["item", "workflow", "status", "phase", "next"]
    assert lines[1].split()[:5] == ["parser", "feature", "active", "plan", "(2/3)"]
    column = lines[0].index("next")
    assert all(line[:column].strip() == "" for line in lines[2:-2]), lines
    folded = "".join(line[column:].replace(" ", "") for line in lines[1:-2])
    assert folded == "phasegaterunparser--with-an-option-longer-than-the-room"
    assert lines[-2].split() == ["broken", "team", "unreadable", "(see", "below)"]
    assert lines[-1] == "state file broken: not JSON"


def test_into_a_file_the_next_command_is_never_folded() -> None:
    lines = _table(None, ROWS)
    assert lines[1].split()[-3:] == ["run", "parser", "--with-an-option-longer-than-the-room"]
    assert len(lines) == 4
