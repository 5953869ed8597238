"""Stop signals (SIGINT, SIGTERM, SIGHUP) as an exception, and moments when they must wait.

The command line turns each stop signal into :class:`~phasegate.errors.Interrupted`
raised in the main thread, so the code that is running (a child process, a
journal append) unwinds and cleans up instead of the process vanishing. While
a child is being started or killed, a stop signal is remembered and raised
afterwards: a child is never left running because the signal came at the
wrong moment.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from phasegate.errors import Interrupted

#: The signals that ask phasegate to stop (SIGHUP: the terminal went away).
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)

_Handler = Callable[[int, FrameType | None], Any] | int | None


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


_received: list[int] = []

#: What to say, instead of "run the same command again to resume", when a stop signal
#: ends the command now (set by the part that was running: a gate's terminal prompt).
_resume_advice: list[str] = []


def advise_resume(text: str) -> None:
    """Say ``text`` (how to go on) if a stop signal ends the command now."""
    _resume_advice[:] = [text]


def resume_advice() -> str:
    """How to go on after a stop signal ended the command."""
    return _resume_advice[-1] if _resume_advice else "run the same command again to resume"


def last_stop_signal() -> int | None:
    """The stop signal received since :func:`stop_signals_raise` was entered, if any.

    The CLI needs it because typer turns every KeyboardInterrupt into a bare
    exit code 130, losing which signal it was.
    """
    return _received[-1] if _received else None


def handled() -> None:
    """The stop signal was the way a command is meant to end (``logs -f``, ``serve``):
    the command exits as it chooses, not with 128 + the signal."""
    _received.clear()


def stopped_by(signum: int) -> Interrupted:
    """The exception to raise when phasegate stops itself as ``signum`` would stop it
    (a closed output: SIGPIPE); :func:`last_stop_signal` reports it like a received one."""
    _received.append(signum)
    return Interrupted(signum)


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise Interrupted(signum)


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """While inside, SIGINT, SIGTERM and SIGHUP raise ``Interrupted`` in the main thread."""
    if not _in_main_thread():
        yield
        return
    _received.clear()
    _resume_advice.clear()
    previous: dict[signal.Signals, _Handler] = {
        signum: signal.signal(signum, _raise_interrupted) for signum in STOP_SIGNALS
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class DeferredSignals:
    """What arrived while stop signals were deferred."""

    def __init__(self) -> None:
        self.received: int | None = None

    def remember(self, signum: int, frame: FrameType | None) -> None:
        """The handler in force while deferred: keep the first signal."""
        if self.received is None:
            self.received = signum

    def raise_if_received(self) -> None:
        """Raise the ``Interrupted`` a remembered signal would have raised."""
        if self.received is not None:
            _received.append(self.received)
            raise Interrupted(self.received)


@contextmanager
def stop_signals_deferred() -> Iterator[DeferredSignals]:
    """While inside, a stop signal that would raise is remembered instead of raised.

    Only handlers that raise (Python callables) are deferred: a signal left at
    its default action or ignored keeps that. Outside the main thread nothing
    changes (signals are handled in the main thread only).
    """
    deferred = DeferredSignals()
    if not _in_main_thread():
        yield deferred
        return
    previous: dict[signal.Signals, _Handler] = {}
    for signum in STOP_SIGNALS:
        if callable(signal.getsignal(signum)):
            previous[signum] = signal.signal(signum, deferred.remember)
    try:
        yield deferred
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
