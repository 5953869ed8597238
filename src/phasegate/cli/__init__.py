"""The command-line interface: thin adapter over the engine.

:func:`main` turns every :class:`~phasegate.errors.PhasegateError` into one
line on stderr and its documented exit code; a traceback is shown only for a
bug, and only with ``PHASEGATE_DEBUG=1``.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import typer

from phasegate.cli.app import app, err
from phasegate.errors import ExitCode, PhasegateError

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
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="phasegate", standalone_mode=False)
    except PhasegateError as exc:
        err.print(f"phasegate: error: {exc}", markup=False)
        return int(exc.exit_code)
    except typer.Abort:
        err.print("phasegate: aborted", markup=False)
        return int(ExitCode.WAITING)
    except typer.Exit as exc:
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
    except KeyboardInterrupt:
        err.print("phasegate: interrupted; run the same command again to resume", markup=False)
        return 130
    except Exception as exc:  # a bug: say so plainly, trace only on request
        if os.environ.get("PHASEGATE_DEBUG"):
            traceback.print_exc()
        err.print(
            f"phasegate: internal error: {exc.__class__.__name__}: {exc} "
            "(set PHASEGATE_DEBUG=1 for the traceback)",
            markup=False,
        )
        return int(ExitCode.INTERNAL)
    return int(result or 0) if isinstance(result, int) else 0


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())
