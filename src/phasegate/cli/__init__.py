"""The command-line interface: thin adapter over the engine.

:func:`main` turns every :class:`~phasegate.errors.PhasegateError` into one
line on stderr and its documented exit code (with ``--json``, a JSON object
``{"error", "exit_code"}`` instead); a traceback is shown only for a bug, and
only with ``PHASEGATE_DEBUG=1``. A file-system failure (disk full, I/O error,
read-only file system, no permission) is exit code 8, never a bug. SIGINT,
SIGTERM and SIGHUP stop phasegate cleanly: the agent or check it was running
is killed with its whole process tree first, and the exit code is 128 plus
the signal's number. ``--color`` is applied wherever it appears.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
import traceback
from collections.abc import Callable

import typer

from phasegate.cli.app import app as app
from phasegate.cli.commands import app_for
from phasegate.cli.lazy_params import defer_coercion
from phasegate.cli.output import (
    COLOR_MODES,
    ColorMode,
    OutputClosed,
    err,
    out,
    print_error,
    set_color,
    write_json_error,
)
from phasegate.errors import (
    ExitCode,
    Interrupted,
    PhasegateError,
    StorageError,
    is_storage_error,
)
from phasegate.interrupts import last_stop_signal, stop_signals_raise

Fail = Callable[..., int]


def take_color(args: list[str]) -> tuple[list[str], ColorMode]:
    """``args`` without ``--color WHEN`` (anywhere before ``--``), and ``WHEN``."""
    rest: list[str] = []
    mode = "auto"
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            rest += args[index:]
            break
        if arg == "--color" or arg.startswith("--color="):
            if arg == "--color":
                if index + 1 >= len(args):
                    raise typer.BadParameter(f"--color needs a value: {' | '.join(COLOR_MODES)}")
                index += 1
                mode = args[index]
            else:
                mode = arg.split("=", 1)[1]
            if mode not in COLOR_MODES:
                raise typer.BadParameter(
                    f"--color must be one of {', '.join(COLOR_MODES)} (got {mode!r})"
                )
        else:
            rest.append(arg)
        index += 1
    return rest, mode  # type: ignore[return-value]


def _wants_json(args: list[str]) -> bool:
    head = args[: args.index("--")] if "--" in args else args
    return "--json" in head


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(args)

    def fail(message: str, code: int, kind: str = "error") -> int:
        if as_json:
            write_json_error(message, code)
        else:
            print_error(kind, message)
        return code

    with stop_signals_raise():
        try:
            code = _run(args, fail, as_json)
        except KeyboardInterrupt as exc:  # a second signal while reporting the first
            return _interrupted(exc)
        # typer turns a KeyboardInterrupt into a bare 130: which signal it was is kept aside.
        received = last_stop_signal()
        return _interrupted(Interrupted(received)) if received is not None else code


def _run(args: list[str], fail: Fail, as_json: bool) -> int:
    try:
        args, color = take_color(args)
    except typer.BadParameter as exc:
        set_color("auto")
        return fail(str(exc), int(ExitCode.BAD_INPUT))
    set_color(color)
    if not args:
        # A bare `phasegate` is a request for help, not a mistake.
        args = ["--help"]
    # Only the command asked for is built (and its module imported): see cli/commands.py.
    defer_coercion()  # no pydantic adapter for a parameter that needs none
    command = typer.main.get_command(app_for(args))
    try:
        result = command.main(args=args, prog_name="phasegate", standalone_mode=False)
    except PhasegateError as exc:
        # A stop for a person's decision is no failure: nothing went wrong, nothing is lost.
        kind = "waiting" if exc.exit_code == ExitCode.WAITING else "error"
        return fail(str(exc), int(exc.exit_code), kind)
    except typer.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return _interrupted(exc.__cause__)
        if as_json:
            write_json_error("aborted", int(ExitCode.WAITING))
        else:
            err.print("phasegate: aborted", markup=False)
        return int(ExitCode.WAITING)
    except typer.Exit as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return _interrupted(exc.__cause__)
        return int(exc.exit_code)
    except typer.TyperException as exc:  # usage errors (typer's bundled click)
        if type(exc).__name__ == "NoArgsIsHelpError":  # a bare command group: its help
            text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            out.print(text, markup=False, highlight=False)
            return 0
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        hint = " (see --help)" if "--help" not in message else ""
        return fail(f"{message}{hint}", int(ExitCode.BAD_INPUT))
    except (BrokenPipeError, OutputClosed):
        # The reader of our output went away (e.g. `phasegate status | head`):
        # stop quietly, as other command-line tools do on SIGPIPE.
        return _output_closed()
    except SystemExit as exc:
        # typer ends a command whose plain write met a closed pipe with exit 1.
        if isinstance(exc.__context__, BrokenPipeError):
            return _output_closed()
        raise
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except OSError as exc:
        if not is_storage_error(exc):
            return _internal_error(exc, fail)
        # Only writes fill a disk or meet a read-only one; the others may come from a read.
        writes = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)
        action = "write" if exc.errno in writes else "access"
        error = StorageError.from_os_error(exc, action=action)
        return fail(str(error), int(ExitCode.STORAGE))
    except Exception as exc:  # a bug: say so plainly, trace only on request
        return _internal_error(exc, fail)
    return int(result or 0) if isinstance(result, int) else 0


def _output_closed() -> int:
    """Later writes go nowhere; 128 + SIGPIPE, as for a command the signal stopped."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    os.close(devnull)
    return 128 + int(signal.SIGPIPE)


def _interrupted(exc: KeyboardInterrupt) -> int:
    """Make sure no child is left running, say so in one line, return 128 + the signal."""
    from phasegate.process import stop_running_children

    stop_running_children()  # the call that was running killed its own child already
    signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
    what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    if signum == signal.SIGPIPE:
        what = "stopped: the reader of its output went away (SIGPIPE)"
    from phasegate.interrupts import resume_advice

    err.print(
        f"phasegate: {what}; nothing it started is left running; {resume_advice()}",
        markup=False,
    )
    return 128 + int(signum)


def _internal_error(exc: Exception, fail: Fail) -> int:
    if os.environ.get("PHASEGATE_DEBUG"):
        traceback.print_exc()
    return fail(
        f"{exc.__class__.__name__}: {exc} (set PHASEGATE_DEBUG=1 for the traceback)",
        int(ExitCode.INTERNAL),
        kind="internal error",
    )


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
