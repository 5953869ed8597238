"""The stub server run as a process refuses a port it cannot listen on, or a log it
cannot write, in one line with exit status 2 (it printed a traceback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from phasegate.testing import StubLLMServer


def _stub_process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate.testing.stub_server", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_a_port_in_use_is_named_in_one_line() -> None:
    with StubLLMServer() as taken:
        result = _stub_process("--port", str(taken.port))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"stub_server: cannot listen on 127.0.0.1:{taken.port}: Address already in use"
    ]


def test_a_log_that_cannot_be_written_is_named_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "missing" / "requests.jsonl"
    result = _stub_process("--log", str(log))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"stub_server: cannot write {log}: No such file or directory"
    ]


def test_a_script_that_is_not_yaml_is_named_in_one_line(tmp_path: Path) -> None:
    """The parser's message spans several lines (and quotes the file): one line names
    the file, the line and the problem."""
    script = tmp_path / "script.yaml"
    script.write_text("openai:\n  - text: [unclosed\n")
    result = _stub_process("--script", str(script))
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"stub_server: {script}:3: invalid YAML: ")
