"""Run a child process safely: own process group, bounded output, hard wall-clock limit.

A timeout kills the whole process tree (SIGTERM, a grace period, SIGKILL) and
returns in bounded time even when a grandchild still holds the pipes. Output
beyond a limit is dropped (the tail is kept), and bytes that are not UTF-8 are
replaced rather than crashing the reader. A child that exits before reading
all of its input (BrokenPipe) is reported, not raised.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_OUTPUT_LIMIT = 8 * 1024 * 1024
GRACE_SECONDS = 3.0
#: After the child is gone, how long readers may drain pipes a grandchild still holds.
DRAIN_SECONDS = 2.0


@dataclass(frozen=True)
class ProcessResult:
    """How a child process ended and what it printed."""

    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    broken_pipe: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class _BoundedReader(threading.Thread):
    """Read a pipe to EOF, keeping at most ``limit`` bytes (head and tail)."""

    def __init__(self, pipe: object, limit: int) -> None:
        super().__init__(daemon=True)
        self._pipe = pipe
        self._limit = limit
        self._head = bytearray()
        self._tail = bytearray()
        self.truncated = False

    def run(self) -> None:
        read = self._pipe.read1 if hasattr(self._pipe, "read1") else self._pipe.read  # type: ignore[attr-defined]
        half = self._limit // 2
        try:
            while chunk := read(65536):
                if len(self._head) < half:
                    room = half - len(self._head)
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self._tail += chunk
                    if len(self._tail) > half:
                        self.truncated = True
                        del self._tail[: len(self._tail) - half]
        except (OSError, ValueError):
            pass  # the pipe was closed under us after a timeout
        finally:
            # Closed here, not by run_process: closing a buffered pipe blocks while
            # another thread is reading it, i.e. until an escaped grandchild exits.
            with contextlib.suppress(OSError):
                self._pipe.close()  # type: ignore[attr-defined]

    def text(self) -> str:
        joined = bytes(self._head)
        if self.truncated:
            joined += b"\n[... output truncated ...]\n"
        joined += bytes(self._tail)
        return joined.decode("utf-8", errors="replace")


def _kill_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM the child's process group, then SIGKILL whatever is left."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)
    # Grandchildren may outlive the leader: always sweep the group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace)


def run_process(
    argv: Sequence[str] | str,
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    grace: float = GRACE_SECONDS,
) -> ProcessResult:
    """Run ``argv`` (a shell string runs through ``/bin/sh -c``) and wait at most ``timeout``."""
    shell = isinstance(argv, str)
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        shell=shell,
        cwd=str(cwd),
        env=dict(env) if env is not None else None,
        stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    out = _BoundedReader(proc.stdout, output_limit)
    err = _BoundedReader(proc.stderr, output_limit)
    out.start()
    err.start()
    writer = _StdinWriter(proc, input_text) if input_text is not None else None
    if writer is not None:
        writer.start()
    timed_out = False
    try:
        proc.wait(timeout=max(0.0, timeout - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc, grace)
    else:
        # The leader exited; stray children in its group must not keep pipes open.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    # One shared drain deadline, so the bound does not grow with the number of pipes.
    drain_deadline = time.monotonic() + DRAIN_SECONDS
    for thread in (out, err, writer):
        if thread is not None:
            thread.join(max(0.0, drain_deadline - time.monotonic()))
    exit_code = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    return ProcessResult(
        exit_code=exit_code,
        stdout=out.text(),
        stderr=err.text(),
        duration_s=time.monotonic() - started,
        timed_out=timed_out,
        broken_pipe=writer.broken_pipe if writer is not None else False,
        truncated=out.truncated or err.truncated,
    )


class _StdinWriter(threading.Thread):
    """Write the prompt to the child's stdin without blocking the timeout clock."""

    def __init__(self, proc: subprocess.Popen[bytes], text: str) -> None:
        super().__init__(daemon=True)
        self._proc = proc
        self._data = text.encode("utf-8")
        self.broken_pipe = False

    def run(self) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(self._data)
            stdin.close()
        except BrokenPipeError:
            self.broken_pipe = True
            with contextlib.suppress(OSError):
                stdin.close()
        except (OSError, ValueError):
            pass  # closed after a timeout
