"""Child processes: own process group, bounded output, hard wall-clock limit, no crash
on odd bytes or a child that stops reading (seed 002's BrokenPipe robustness).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from phasegate.process import DRAIN_SECONDS, run_process

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not is_running(pid):
            return True
        time.sleep(0.05)
    return False


def kill_if_running(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def test_exit_code_and_both_streams_are_captured(tmp_path: Path) -> None:
    result = run_process("echo out; echo err >&2; exit 7", cwd=tmp_path, timeout=10)
    assert (result.exit_code, result.stdout, result.stderr) == (7, "out\n", "err\n")
    assert not result.ok
    assert not (result.timed_out or result.truncated or result.broken_pipe)


def test_argv_list_runs_without_a_shell(tmp_path: Path) -> None:
    result = run_process(
        [sys.executable, "-c", "print('$HOME stays literal')"], cwd=tmp_path, timeout=10
    )
    assert result.ok
    assert result.stdout == "$HOME stays literal\n"


def test_cwd_env_and_stdin_are_passed(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GREETING": "hello"}
    result = run_process(
        'pwd; echo "$GREETING"; cat', cwd=tmp_path, timeout=10, env=env, input_text="from stdin"
    )
    assert result.stdout == f"{tmp_path}\nhello\nfrom stdin"


def test_timeout_kills_the_process_group_and_returns_promptly(tmp_path: Path) -> None:
    """A grandchild holding the pipes does not keep the caller waiting; it is killed too."""
    started = time.monotonic()
    result = run_process("sleep 60 & echo $!; sleep 60", cwd=tmp_path, timeout=1, grace=0.5)
    elapsed = time.monotonic() - started
    grandchild = int(result.stdout.split()[0])
    try:
        assert result.timed_out
        assert not result.ok
        assert elapsed < 1 + 0.5 * 2 + DRAIN_SECONDS + 2
        assert wait_gone(grandchild), "the backgrounded grandchild survived the timeout"
    finally:
        kill_if_running(grandchild)


def test_timeout_sigkills_children_that_ignore_sigterm(tmp_path: Path) -> None:
    """SIGTERM, a grace period, then SIGKILL for whatever is left of the group."""
    started = time.monotonic()
    result = run_process(
        "trap '' TERM; sleep 60 & echo $!; sleep 60", cwd=tmp_path, timeout=1, grace=0.5
    )
    elapsed = time.monotonic() - started
    grandchild = int(result.stdout.split()[0])
    try:
        assert result.timed_out
        assert elapsed < 1 + 0.5 * 2 + DRAIN_SECONDS + 2
        assert wait_gone(grandchild)
    finally:
        kill_if_running(grandchild)


def test_timeout_returns_in_bounded_time_when_a_grandchild_escapes_the_group(
    tmp_path: Path,
) -> None:
    """A grandchild in its own session keeps the pipes open; the caller still returns,
    and the grandchild is killed with the rest of the tree."""
    escape = (
        f"{sys.executable} -c "
        "'import os, time; os.setsid(); os.write(2, b\"escaped\\n\"); time.sleep(30)' & "
        "echo $!; sleep 60"
    )
    started = time.monotonic()
    # The timeout leaves the grandchild ample time to start and leave the group.
    result = run_process(escape, cwd=tmp_path, timeout=3, grace=0.5)
    elapsed = time.monotonic() - started
    grandchild = int(result.stdout.split()[0])
    try:
        assert "escaped" in result.stderr  # the scenario really happened
        assert result.timed_out
        assert elapsed < 3 + 0.5 * 2 + DRAIN_SECONDS + 2  # not the grandchild's 30 s
        assert wait_gone(grandchild), "the grandchild that called setsid survived the timeout"
    finally:
        kill_if_running(grandchild)


def test_stray_children_of_a_finished_child_are_killed(tmp_path: Path) -> None:
    """The leader exited; its group must not keep running (or holding the pipes)."""
    started = time.monotonic()
    result = run_process("sleep 60 & echo $!", cwd=tmp_path, timeout=30)
    grandchild = int(result.stdout.split()[0])
    try:
        assert result.exit_code == 0
        assert not result.timed_out
        assert time.monotonic() - started < 5
        assert wait_gone(grandchild)
    finally:
        kill_if_running(grandchild)


def test_huge_output_is_bounded_keeping_head_and_tail(tmp_path: Path) -> None:
    """A child printing 50 MB costs at most the limit in memory; truncated is reported."""
    limit = 1024 * 1024
    code = (
        "import sys; out = sys.stdout.buffer; out.write(b'BEGIN');"
        "[out.write(b'x' * 1_000_000) for _ in range(50)]; out.write(b'END')"
    )
    result = run_process([sys.executable, "-c", code], cwd=tmp_path, timeout=60, output_limit=limit)
    assert result.exit_code == 0
    assert result.truncated
    assert len(result.stdout.encode()) <= limit + 64
    assert result.stdout.startswith("BEGIN")
    assert result.stdout.endswith("END")
    assert "output truncated" in result.stdout


def test_output_under_the_limit_is_not_truncated(tmp_path: Path) -> None:
    result = run_process("printf 'abc'", cwd=tmp_path, timeout=10, output_limit=16)
    assert (result.stdout, result.truncated) == ("abc", False)


def test_non_utf8_output_is_replaced_not_fatal(tmp_path: Path) -> None:
    result = run_process(r"printf 'ok \377\376 done'; printf '\300' >&2", cwd=tmp_path, timeout=10)
    assert result.exit_code == 0
    assert result.stdout == "ok \ufffd\ufffd done"
    assert result.stderr == "\ufffd"


def test_child_that_does_not_read_its_input_reports_broken_pipe(tmp_path: Path) -> None:
    """Seed 002: a BrokenPipe from a child that exits early is reported, not raised."""
    result = run_process("exit 3", cwd=tmp_path, timeout=10, input_text="x" * 10_000_000)
    assert result.broken_pipe
    assert result.exit_code == 3
    assert not result.timed_out


def test_child_reading_all_input_has_no_broken_pipe(tmp_path: Path) -> None:
    result = run_process("wc -c", cwd=tmp_path, timeout=10, input_text="y" * 1_000_000)
    assert result.stdout.strip() == "1000000"
    assert not result.broken_pipe


def test_a_secret_cut_by_the_output_limit_leaves_no_fragment(tmp_path: Path) -> None:
    """Output beyond the limit is cut in two places (end of the head, start of the tail);
    the partial lines there are dropped, so no piece of a secret the cut ran through is
    kept where redaction could no longer recognise it."""
    limit = 256 * 1024
    half = limit // 2
    first = "FIRST-secret-" + "a" * 27  # 40 characters; the head's cut runs through it
    last = "LAST-secret-" + "b" * 28  # 40 characters; the tail's cut runs through it
    code = (
        "import sys; w = sys.stdout.write; "
        f"w('h' * {half - 10} + {first!r} + 'x' * {limit}); "
        f"w({last!r} + 'y' * {half - 20})"
    )
    result = run_process([sys.executable, "-c", code], cwd=tmp_path, timeout=60, output_limit=limit)
    assert result.truncated
    assert result.stdout.startswith("h" * 1000) and result.stdout.endswith("y" * 1000)
    assert first[:10] not in result.stdout
    assert last[-20:] not in result.stdout


def test_a_key_block_cut_by_the_output_limit_is_dropped_whole(tmp_path: Path) -> None:
    """A private-key block the cut runs through loses its marker line; all of it is dropped."""
    limit = 256 * 1024
    half = limit // 2
    block = "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEpAIBAAKCAQEA1234567890abcdef\n" * 10
    code = (
        "import sys; w = sys.stdout.write; "
        f"w('h\\n' * ({half} // 2 - 100) + {block!r} + 'x\\n' * {limit})"
    )
    result = run_process([sys.executable, "-c", code], cwd=tmp_path, timeout=60, output_limit=limit)
    assert result.truncated
    assert "MIIEpAIBAAKCAQEA" not in result.stdout and "BEGIN RSA" not in result.stdout
