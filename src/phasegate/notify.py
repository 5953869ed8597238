"""Tell someone that a run stopped for a person, failed, stopped or completed its item
(config ``notify:``).

::

    notify:
      command: 'notify-send "phasegate: $PHASEGATE_ITEM" "$PHASEGATE_EVENT: $PHASEGATE_MESSAGE"'
      on: [waiting, failed, stopped, completed]     # the default: all four

When ``run``, ``implement``, ``plan``, ``impl`` or ``archive`` ends,
:func:`notify_run_end` runs the command through the shell in the repository,
with the event as one JSON
object on stdin and as ``PHASEGATE_*`` environment variables. Its exit code
decides the event: 0 ``completed`` (``stopped`` when the run ended its item at
an end whose status is ``stopped``, a dropped item), 3 ``waiting`` (on a human
decision), any other ``failed``, except an interruption by the person (130,
141), which is not announced. A run that finds its item already ended, or
being run by another process (exit code 7), does nothing and announces nothing,
and so does a run that ends (exit 0) before its
item does (``--until``, ``--phase``, a command stopping at its ``stops_at``, a change's
``plan`` or ``impl``): ``completed`` is the run that completed its item (a change's
``archive``). A notify command that fails or hangs is
reported on stderr and never changes how the run ended.

``waiting`` is also sent while a run goes on waiting for a person: as a gate's
question is asked at the terminal, or waited for with ``run --wait``
(:func:`notify_waiting`, ``exit_code`` ``null``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.config import Config, NotifyEvent
from phasegate.errors import ExitCode, ItemRunningError, PhasegateError
from phasegate.process import run_process, start_error_text
from phasegate.redact import message_redactor
from phasegate.state.journal import utc_now

#: Exit codes of a run the person ended on purpose: nothing to announce.
_INTERRUPTED = frozenset({130, 141})

Warn = Callable[[str], None]


def event_for(exit_code: int, *, stopped: bool = False) -> NotifyEvent | None:
    """The notify event of a run that ended with ``exit_code`` (``None``: not announced);
    ``stopped``: the run ended its item stopped (exit code 0)."""
    if exit_code == ExitCode.OK:
        return "stopped" if stopped else "completed"
    if exit_code == ExitCode.WAITING:
        return "waiting"
    if exit_code in _INTERRUPTED:
        return None
    return "failed"


def notify_run_end(
    root: Path,
    config: Config,
    *,
    item: str,
    workflow: str,
    command: str,
    exit_code: int,
    message: str,
    warn: Warn,
    stopped: bool = False,
) -> bool:
    """Run the configured notify command for this end of a run; whether it ran and succeeded.

    ``stopped``: the run ended its item stopped. ``warn`` receives one line when the
    command fails; nothing here raises.
    """
    event = event_for(exit_code, stopped=stopped)
    if event is None:
        return False
    return _send(root, config, event, item, workflow, command, exit_code, message, warn)


def notify_waiting(
    root: Path,
    config: Config,
    *,
    item: str,
    workflow: str,
    command: str,
    message: str,
    warn: Warn,
) -> bool:
    """Send ``waiting`` while the run goes on waiting for a person (at its terminal's
    prompt, or ``run --wait``): ``exit_code`` is ``null`` (``PHASEGATE_EXIT_CODE`` empty)."""
    return _send(root, config, "waiting", item, workflow, command, None, message, warn)


def _send(
    root: Path,
    config: Config,
    event: NotifyEvent,
    item: str,
    workflow: str,
    command: str,
    exit_code: int | None,
    message: str,
    warn: Warn,
) -> bool:
    settings = config.notify
    if settings is None or event not in settings.on:
        return False
    redactor = message_redactor()  # the item's own names (phases, labels) are never masked
    payload: dict[str, Any] = redactor.data(
        {
            "event": event,
            "item": item,
            "workflow": workflow,
            "command": command,
            "exit_code": exit_code,
            "message": message,
            "repo": str(root),
            "time": utc_now(),
        }
    )
    env = {
        **os.environ,
        **{
            f"PHASEGATE_{key.upper()}": "" if value is None else str(value)
            for key, value in payload.items()
        },
    }
    try:
        result = run_process(
            settings.command,
            cwd=root,
            timeout=settings.timeout,
            env=env,
            input_text=json.dumps(payload) + "\n",
        )
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the command
        why = start_error_text(exc)
        warn(f"notify command could not start ({why}); the run's outcome is unchanged")
        return False
    if result.timed_out:
        warn(f"notify command timed out after {settings.timeout:g}s and was stopped")
        return False
    if not result.ok:
        lines = (result.stderr or result.stdout).strip().splitlines()
        said = redactor.text(lines[-1]) if lines else ""
        warn(f"notify command failed (exit {result.exit_code})" + (f": {said}" if said else ""))
        return False
    return True


def command_problem(root: Path, config: Config) -> str | None:
    """Why the configured notify command could not run here (its program is not found),
    for ``doctor``; ``None`` when it looks runnable or cannot be told without running it."""
    settings = config.notify
    if settings is None:
        return None
    try:
        words = shlex.split(settings.command)
    except ValueError:
        return None  # the shell reports a quoting problem when it runs
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0], flags=re.DOTALL):
        words.pop(0)  # VAR=value before the program
    if not words or not re.fullmatch(r"[\w./+-]+", words[0]):
        return None  # a subshell, a group or a redirection: the shell's to judge
    program = words[0]
    try:
        found = run_process(["sh", "-c", 'command -v "$1"', "sh", program], cwd=root, timeout=10)
    except (OSError, ValueError):
        return None
    if found.ok or found.timed_out:
        return None
    return (
        f"notify.command: {program!r} is not found here (not on PATH nor a shell "
        "command), so every notification would fail"
    )


@dataclass
class RunEnd:
    """What the body of :func:`notifying` tells about the run."""

    message: str = ""
    #: The run ended its item stopped (an end with ``status: stopped``): ``stopped``.
    stopped: bool = False
    #: False when the run had nothing to do (its item had already ended), or ended
    #: before its item did (``--until``, ``--phase``, a command's stop): not announced.
    announce: bool = True
    #: Announces ``waiting`` now: the run waits for a person, who answers as the text
    #: says (the run's asker calls it; see :func:`notifying`).
    waiting: Callable[[str], None] = field(default=lambda text: None)


@contextmanager
def notifying(
    root: Path, config: Config, *, item: str, workflow: str, command: str, warn: Warn
) -> Iterator[RunEnd]:
    """Call :func:`notify_run_end` when the body ends, however it ends (exceptions go on).

    ``end.waiting(text)`` sends ``waiting`` while the run waits for a person, on a
    thread of its own so a slow notify command does not hold the question back;
    the body's end waits for those threads before it announces the end.
    """
    import threading

    end = RunEnd()
    sending: list[threading.Thread] = []

    def waiting(text: str) -> None:
        settings = config.notify
        if settings is None or "waiting" not in settings.on:
            return
        thread = threading.Thread(
            target=notify_waiting,
            args=(root, config),
            kwargs={
                "item": item,
                "workflow": workflow,
                "command": command,
                "message": text,
                "warn": warn,
            },
            name="phasegate-notify",
        )
        thread.start()
        sending.append(thread)

    end.waiting = waiting
    try:
        try:
            yield end
        finally:
            for thread in sending:
                thread.join()
    except ItemRunningError:
        raise  # another process runs the item and announces its end: this run did nothing
    except PhasegateError as exc:
        code, message = int(exc.exit_code), str(exc)
        if not end.announce:
            raise
        notify_run_end(
            root,
            config,
            item=item,
            workflow=workflow,
            command=command,
            exit_code=code,
            message=message,
            warn=warn,
        )
        raise
    except (KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as exc:
        if not end.announce:
            raise
        notify_run_end(
            root,
            config,
            item=item,
            workflow=workflow,
            command=command,
            exit_code=int(ExitCode.INTERNAL),
            message=f"internal error: {exc}",
            warn=warn,
        )
        raise
    if not end.announce:
        return
    notify_run_end(
        root,
        config,
        item=item,
        workflow=workflow,
        command=command,
        exit_code=int(ExitCode.OK),
        message=end.message,
        warn=warn,
        stopped=end.stopped,
    )
