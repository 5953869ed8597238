"""The command-line interface: thin adapter over the engine.

:func:`main` turns every :class:`~phasegate.errors.PhasegateError` into one
line on stderr and its documented exit code; a traceback is shown only for a
bug, and only with ``PHASEGATE_DEBUG=1``. A file-system failure (disk full,
I/O error, read-only file system, no permission) is exit code 8, never a bug.
SIGINT, SIGTERM and SIGHUP stop phasegate cleanly: the agent or check it was
running is killed with its whole process tree first, and the exit code is 128
plus the signal's number.
"""

from __future__ import annotations

import errno
import importlib
import os
import signal
import sys
import traceback

import typer

from phasegate.cli.app import app, err
from phasegate.errors import (
    ExitCode,
    Interrupted,
    PhasegateError,
    StorageError,
    is_storage_error,
)
from phasegate.interrupts import last_stop_signal, stop_signals_raise

# Each module below adds its commands to ``app`` when imported.
_COMMAND_MODULES: tuple[str, ...] = (
    "phasegate.cli.decisions",
    "phasegate.cli.doctor",
    "phasegate.cli.integrations",
    "phasegate.cli.change",
)
for _module in _COMMAND_MODULES:
    importlib.import_module(_module)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    with stop_signals_raise():
        try:
            code = _run(argv)
        except KeyboardInterrupt as exc:  # a second signal while reporting the first
            return _interrupted(exc)
        # typer turns a KeyboardInterrupt into a bare 130: which signal it was is kept aside.
        received = last_stop_signal()
        return _interrupted(Interrupted(received)) if received is not None else code


def _run(argv: list[str] | None) -> int:
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="phasegate", standalone_mode=False)
    except PhasegateError as exc:
        err.print(f"phasegate: error: {exc}", markup=False)
        return int(exc.exit_code)
    except typer.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return _interrupted(exc.__cause__)
        err.print("phasegate: aborted", markup=False)
        return int(ExitCode.WAITING)
    except typer.Exit as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return _interrupted(exc.__cause__)
        return int(exc.exit_code)
    except typer.TyperException as exc:  # usage errors (typer's bundled click)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        hint = " (see --help)" if "--help" not in message else ""
        err.print(f"phasegate: error: {message}{hint}", markup=False)
        return int(ExitCode.BAD_INPUT)
    except BrokenPipeError:
        # The reader of our output went away (e.g. `phasegate status | head`):
        # stop quietly, as other command-line tools do on SIGPIPE.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except OSError as exc:
        if not is_storage_error(exc):
            return _internal_error(exc)
        # Only writes fill a disk or meet a read-only one; the others may come from a read.
        action = "write" if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) else "access"
        error = StorageError.from_os_error(exc, action=action)
        err.print(f"phasegate: error: {error}", markup=False)
        return int(ExitCode.STORAGE)
    except Exception as exc:  # a bug: say so plainly, trace only on request
        return _internal_error(exc)
    return int(result or 0) if isinstance(result, int) else 0


def _interrupted(exc: KeyboardInterrupt) -> int:
    """Make sure no child is left running, say so in one line, return 128 + the signal."""
    from phasegate.process import stop_running_children

    stop_running_children()  # the call that was running killed its own child already
    signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
    what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    err.print(
        f"phasegate: {what}; nothing it started is left running; "
        "run the same command again to resume",
        markup=False,
    )
    return 128 + int(signum)


def _internal_error(exc: Exception) -> int:
    if os.environ.get("PHASEGATE_DEBUG"):
        traceback.print_exc()
    err.print(
        f"phasegate: internal error: {exc.__class__.__name__}: {exc} "
        "(set PHASEGATE_DEBUG=1 for the traceback)",
        markup=False,
    )
    return int(ExitCode.INTERNAL)


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
