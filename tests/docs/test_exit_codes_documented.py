"""The exit codes the README's table lists, the ones `phasegate --help` lists and the
ones the code has are the same."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

from cli_process import cli_in_process
from phasegate.errors import ExitCode

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
#: Exits by a signal: 128 plus its number (SIGPIPE as a reader that went away).
SIGNALS = {128 + int(s) for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE)}


def table_codes() -> set[int]:
    """Every code of the README's `| exit code | meaning |` table."""
    table = README[README.index("| exit code | meaning |") :]
    codes: set[int] = set()
    for row in table.splitlines()[2:]:
        if not row.startswith("|"):
            break
        codes |= {int(code) for code in re.findall(r"\d+", row.split("|")[1])}
    return codes


def test_the_readme_table_lists_every_exit_code() -> None:
    assert table_codes() == {int(code) for code in ExitCode} | SIGNALS


def test_the_help_lists_every_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli_in_process(capsys, "--help")
    assert code == 0
    text = " ".join(out.split())
    listed = text[text.index("Exit codes:") : text.index("Options:")]
    # "0 done; 1 internal error; ... 129, 130, 143 stopped by ...; 141 the reader ..."
    codes = {int(code) for code in re.findall(r"(?:^|; |: |, )(\d+)(?= |,)", listed)}
    assert codes == {int(code) for code in ExitCode} | SIGNALS
