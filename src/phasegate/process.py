"""Run a child process safely: own session, bounded output, hard wall-clock limit.

A timeout kills the child's whole process tree (SIGTERM, a grace period, then
SIGKILL to every member, see :mod:`phasegate.proctree`) and returns in
bounded time even when a grandchild still holds the pipes. A child never
outlives the call: when it exits, whatever it left running is killed; when
phasegate is interrupted (SIGINT, SIGTERM, SIGHUP) the tree is killed and
:class:`ProcessInterrupted` raised; when phasegate dies, even by SIGKILL, the
kernel kills the child (``PR_SET_PDEATHSIG``) and phasegate's watchdog
process kills the rest of its tree. While :meth:`AgentGroups.recording` is
active, each running child is also recorded on disk, so that the next run can
kill what a dead run left behind (:func:`reap_leftover_agents`).

Output beyond a limit is dropped from the middle (see
:mod:`phasegate.process_output`), and bytes that are not UTF-8 are replaced
rather than crashing the reader. A child that exits before reading all of its
input (BrokenPipe) is reported, not raised.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from phasegate import proctree
from phasegate.errors import Interrupted
from phasegate.interrupts import stop_signals_deferred
from phasegate.process_output import BoundedReader, StdinWriter
from phasegate.process_records import AgentGroups, active_groups, reap_leftover_agents

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "DRAIN_SECONDS",
    "GRACE_SECONDS",
    "AgentGroups",
    "ProcessInterrupted",
    "ProcessResult",
    "reap_leftover_agents",
    "run_process",
    "stop_running_children",
]

DEFAULT_OUTPUT_LIMIT = 8 * 1024 * 1024
GRACE_SECONDS = 3.0
#: After the child is gone, how long readers may drain pipes a grandchild still holds.
DRAIN_SECONDS = 2.0
PR_SET_PDEATHSIG = 1


#: How often a watched child's output is asked whether to give up on it.
WATCH_POLL_SECONDS = 0.25


class OutputWatch(Protocol):
    """Follows a child's stdout and says when waiting for it is pointless."""

    def feed(self, chunk: bytes) -> None:
        """A chunk of stdout, as read (called from the reading thread)."""

    def give_up(self) -> bool:
        """Whether to stop the child now."""


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
    #: phasegate was stopped by a signal while the child ran; the child's tree was killed.
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.interrupted


class ProcessInterrupted(Interrupted):
    """phasegate was interrupted while a child ran; the child's whole tree was killed first.

    ``result`` is the child's result so far (``interrupted`` set; its output is
    not redacted), ``killed`` the pids that were killed.
    """

    def __init__(self, signum: int, result: ProcessResult, killed: Sequence[int]) -> None:
        super().__init__(signum)
        self.result = result
        self.killed = tuple(killed)


_prctl: Any = None


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking the kernel to SIGKILL the child when phasegate dies (Linux)."""
    global _prctl
    if not sys.platform.startswith("linux"):
        return None
    if _prctl is None:
        import ctypes  # loaded on first use: the CLI's hooks must start fast

        try:
            function = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            return None
        function.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong]
        function.restype = ctypes.c_int
        _prctl = function
    prctl = _prctl
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0)
        if os.getppid() != parent:  # phasegate died before the request took effect
            os._exit(125)

    return preexec


class _Child:
    """A started child: its process, identity, tag and on-disk record."""

    def __init__(self, proc: subprocess.Popen[bytes], tag: str) -> None:
        self.proc = proc
        self.tag = tag
        found = proctree.identity(proc.pid) if proctree.supported() else None
        self.identity = found or proctree.Identity(proc.pid, 0)
        self.record: Path | None = None
        self._lock = threading.Lock()
        _watchdog.follow(self.identity, tag)

    def terminate(self) -> list[int]:
        """SIGTERM to every member of the tree (the child may clean up)."""
        if proctree.supported():
            return proctree.terminate_tree(self.identity, self.tag, since=self.identity.start)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        return [self.proc.pid]

    def kill(self) -> list[int]:
        """SIGKILL every member of the tree; the child stays a zombie until reaped."""
        with self._lock:
            if proctree.supported():
                return proctree.kill_tree(self.identity, self.tag, since=self.identity.start)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            return [self.proc.pid]

    def stop(self, grace: float) -> list[int]:
        """SIGTERM the tree, give the child ``grace`` seconds, then kill what is left.

        Returns every pid that was signalled.
        """
        asked = self.terminate()
        _wait_exited(self.proc, grace)
        return sorted(set(asked) | set(self.kill()))

    def reap(self, within: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=within)

    def release(self) -> None:
        """Forget the child: its on-disk record, and the watchdog's entry."""
        if self.record is not None:
            with contextlib.suppress(OSError):
                self.record.unlink()
        _watchdog.forget(self.identity)


class _Watchdog:
    """phasegate's watchdog process (one per phasegate process, started on first use).

    It learns each child on its stdin and kills the trees of those still
    listed when the pipe closes: when phasegate exits or dies, even by SIGKILL.
    """

    script = str(Path(proctree.__file__).resolve())

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def follow(self, child: proctree.Identity, tag: str) -> None:
        """List ``child`` (its tree is killed if phasegate dies before :meth:`forget`)."""
        self._send(f"+ {child.pid} {child.start} {tag}\n", start=True)

    def forget(self, child: proctree.Identity) -> None:
        """Unlist ``child``: it and its tree are gone."""
        self._send(f"- {child.pid}\n", start=False)

    def _send(self, line: str, *, start: bool) -> None:
        if not proctree.supported() or not sys.executable:
            return
        with self._lock:
            for _ in range(2):  # once more with a new watchdog if the old one died
                if self._proc is None or self._proc.poll() is not None:
                    if not start:
                        return
                    self._proc = self._spawn()
                    if self._proc is None:
                        return  # the kernel's PR_SET_PDEATHSIG still stops the child itself
                try:
                    assert self._proc.stdin is not None
                    self._proc.stdin.write(line.encode("ascii"))
                    self._proc.stdin.flush()
                    return
                except (OSError, ValueError):
                    self._proc = None

    def close(self) -> None:
        """At exit: close the pipe (the watchdog kills what is still listed) and reap it."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            assert proc.stdin is not None
            proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2.0)

    def _spawn(self) -> subprocess.Popen[bytes] | None:
        try:
            return subprocess.Popen(
                [sys.executable, "-I", "-S", self.script],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return None


_watchdog = _Watchdog()
atexit.register(_watchdog.close)
_live: dict[int, _Child] = {}
_live_lock = threading.Lock()
#: How many times :func:`stop_running_children` ran: a child started while it ran
#: (not yet in ``_live`` when it looked) is stopped as soon as it is registered.
_stops = 0


def stop_running_children(grace: float = GRACE_SECONDS) -> list[int]:
    """Kill the tree of every child :func:`run_process` is running now (any thread).

    For the moment phasegate stops: the call running in the main thread has
    already killed its own child; this catches children of other threads.
    """
    global _stops
    with _live_lock:
        _stops += 1
        children = list(_live.values())
    killed: list[int] = []
    with stop_signals_deferred():
        for child in children:
            killed += child.stop(grace)
    return killed


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the child exited, without reaping it (its pid and session stay reserved)."""
    if proc.returncode is not None:
        return True
    if hasattr(os, "waitid"):
        try:
            return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None


def _wait_exited(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait at most ``timeout`` for the child to exit (not reaping it); whether it did."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while not _exited(proc):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.05)
    return True


def _wait_watched(
    proc: subprocess.Popen[bytes], deadline: float, watch: OutputWatch | None
) -> bool:
    """Wait for the child until ``deadline`` or until ``watch`` gives up; whether it exited."""
    if watch is None:
        return _wait_exited(proc, max(0.0, deadline - time.monotonic()))
    while True:
        remaining = deadline - time.monotonic()
        if _wait_exited(proc, max(0.0, min(WATCH_POLL_SECONDS, remaining))):
            return True
        if remaining <= WATCH_POLL_SECONDS or watch.give_up():
            return False


def _start(
    argv: Sequence[str] | str,
    cwd: Path,
    env: Mapping[str, str] | None,
    with_stdin: bool,
) -> _Child:
    tag = proctree.new_tag()
    base = dict(env) if env is not None else dict(os.environ)
    with _live_lock:
        stops = _stops
    proc = subprocess.Popen(
        argv,
        shell=isinstance(argv, str),
        cwd=str(cwd),
        env=proctree.tagged_environment(base, tag),
        stdin=subprocess.PIPE if with_stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_die_with_parent(),
    )
    child = _Child(proc, tag)
    with _live_lock:
        _live[proc.pid] = child
        missed = _stops != stops
    if missed:
        # phasegate was stopping while this child started: it must not outlive the stop.
        with stop_signals_deferred():
            child.stop(GRACE_SECONDS)
    groups = active_groups()
    if groups is not None:
        try:
            child.record = groups.add(child.identity, tag, argv)
        except BaseException:
            child.kill()
            child.reap(GRACE_SECONDS)
            _forget(child)
            raise
    return child


def _forget(child: _Child) -> None:
    with _live_lock:
        _live.pop(child.proc.pid, None)
    child.release()


def start_error_text(exc: OSError | ValueError) -> str:
    """Why a command could not be started, for a person: a NUL character in it (which a YAML
    double-quoted ``"\\0"`` writes) is said plainly, other errors as the system says them."""
    if isinstance(exc, ValueError):
        return "it holds a NUL character (in YAML double quotes, \\0 is one)"
    return str(exc)


def run_process(
    argv: Sequence[str] | str,
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    input_text: str | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    grace: float = GRACE_SECONDS,
    watch: OutputWatch | None = None,
) -> ProcessResult:
    """Run ``argv`` (a shell string runs through ``/bin/sh -c``) and wait at most ``timeout``.

    ``watch``, when given, sees the child's stdout as it is read; once its
    ``give_up()`` is true the child's tree is stopped as at a timeout (without
    ``timed_out`` set: the watch knows why).

    Raises :class:`ProcessInterrupted` (after killing the child's tree) when a
    stop signal interrupts the wait.
    """
    started = time.monotonic()
    with stop_signals_deferred() as deferred:
        child = _start(argv, cwd, env, input_text is not None)
    proc = child.proc
    out = BoundedReader(proc.stdout, output_limit, watch.feed if watch is not None else None)
    err = BoundedReader(proc.stderr, output_limit)
    writer = StdinWriter(proc, input_text) if input_text is not None else None
    timed_out = False
    try:
        out.start()
        err.start()
        if writer is not None:
            writer.start()
        deferred.raise_if_received()
        if not _wait_watched(proc, started + timeout, watch):
            timed_out = not (watch is not None and watch.give_up())
            child.stop(grace)
        else:
            # The child exited; whatever it left running must not outlive it (or hold the pipes).
            child.kill()
        child.reap(grace)
    except BaseException as exc:
        with stop_signals_deferred():
            killed = child.stop(grace)
            child.reap(grace)
            _drain(out, err, writer)
            _forget(child)
        if not isinstance(exc, KeyboardInterrupt):
            raise
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        result = replace(_result(proc, out, err, writer, started, False), interrupted=True)
        raise ProcessInterrupted(signum, result, killed) from exc
    _forget(child)
    _drain(out, err, writer)
    return _result(proc, out, err, writer, started, timed_out)


def _drain(out: BoundedReader, err: BoundedReader, writer: StdinWriter | None) -> None:
    # One shared drain deadline, so the bound does not grow with the number of pipes.
    drain_deadline = time.monotonic() + DRAIN_SECONDS
    for thread in (out, err, writer):
        if thread is not None and thread.is_alive():
            thread.join(max(0.0, drain_deadline - time.monotonic()))


def _result(
    proc: subprocess.Popen[bytes],
    out: BoundedReader,
    err: BoundedReader,
    writer: StdinWriter | None,
    started: float,
    timed_out: bool,
) -> ProcessResult:
    return ProcessResult(
        exit_code=proc.returncode if proc.returncode is not None else -signal.SIGKILL,
        stdout=out.text(),
        stderr=err.text(),
        duration_s=time.monotonic() - started,
        timed_out=timed_out,
        broken_pipe=writer.broken_pipe if writer is not None else False,
        truncated=out.truncated or err.truncated,
    )
