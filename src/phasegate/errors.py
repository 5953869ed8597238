"""Typed errors and the exit codes the CLI maps them to.

Every error a user can cause is a :class:`PhasegateError` subclass carrying one
clear line of text and an exit code; the CLI prints that line and exits with the
code, never a traceback.
"""

from __future__ import annotations

import errno
from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """Documented exit codes of the ``phasegate`` command."""

    OK = 0
    INTERNAL = 1  # a bug in phasegate: please report it
    BAD_INPUT = 2  # bad arguments, names, workflow definitions or config
    WAITING = 3  # stopped for a human decision (nothing is lost; answer and run again)
    BLOCKED = 4  # a hard prerequisite, failed checks, a budget stop or a reviewer's stop
    STATE = 5  # a state file is corrupt or unreadable (it is left untouched)
    AGENT = 6  # an agent backend failed or is unusable
    BUSY = 7  # another phasegate process holds this work item
    STORAGE = 8  # cannot write: disk full, a file size limit, I/O error, read-only, no permission


#: The exit status of an agent call phasegate stopped at its timeout (the one ``timeout(1)``
#: uses): kept here, not with the agents' models, so ``status`` reads it without them.
TIMEOUT_EXIT = 124


class PhasegateError(Exception):
    """Base class of errors a user can cause or fix; ``str()`` is one line."""

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class BadInputError(PhasegateError):
    """Invalid arguments or names given on the command line."""


class AlreadyAnsweredError(BadInputError):
    """A decision was answered already (by another person, page or command), or no
    longer waits for the answer given (asked again since, or withdrawn by a run)."""


class ConfigError(PhasegateError):
    """``.phasegate/config.yaml`` is missing, malformed or inconsistent."""


class WorkflowError(PhasegateError):
    """A workflow definition is invalid (the message names the file and field)."""


class NotFoundError(PhasegateError):
    """A work item, workflow or file that was asked for does not exist."""


class StateCorruptError(PhasegateError):
    """A state or journal file cannot be read; it is never overwritten."""

    exit_code = ExitCode.STATE


class BusyError(PhasegateError):
    """Another process holds the lock of a work item."""

    exit_code = ExitCode.BUSY


class ItemRunningError(BusyError):
    """Another process is running the work item: this run did nothing (not announced)."""


class BlockedError(PhasegateError):
    """A transition is hard-blocked by a missing prerequisite."""

    exit_code = ExitCode.BLOCKED


class WaitingForHuman(PhasegateError):
    """A decision is pending and no terminal, flag or default can answer it."""

    exit_code = ExitCode.WAITING


class AgentError(PhasegateError):
    """An agent backend failed, timed out, or cannot be used."""

    exit_code = ExitCode.AGENT


class BackendUnavailable(AgentError):
    """A backend cannot run here (CLI missing, too old, no credentials, bad config)."""


#: The errors of a file write that a user fixes outside phasegate (and never a bug).
STORAGE_ERRNOS: dict[int, str] = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EFBIG: "file too large (a file size limit: see ulimit -f)",
    errno.EIO: "input/output error",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "a folder is where a file belongs",
    errno.ENOTDIR: "a file is where a folder belongs",
}


class StorageError(PhasegateError):
    """A file could not be written: disk full or too large, I/O error, read-only, no permission.

    Raised where phasegate writes (atomic files, the journal), so the message
    names the file; what was recorded before the failed write is kept.
    """

    exit_code = ExitCode.STORAGE

    @classmethod
    def from_os_error(
        cls, exc: OSError, path: Path | str | None = None, *, action: str = "write"
    ) -> StorageError:
        """The error for ``exc`` (one of :data:`STORAGE_ERRNOS`) met while acting on ``path``."""
        where = path if path is not None else exc.filename
        target = f" {where}" if where is not None else ""
        error = cls(
            f"cannot {action}{target}: {os_reason(exc)}; what was "
            "already recorded is kept: fix this and run the same command again"
        )
        error.problem = f"cannot {action}{target}: {os_reason(exc)}"
        return error

    #: What could not be done, without the advice (set by :meth:`from_os_error`).
    problem: str = ""

    def advising(self, advice: str) -> StorageError:
        """This error with ``advice`` in place of "run the same command again" (what the
        command did record, and the command that goes on from there)."""
        return StorageError(f"{self.problem or self.message}; {advice}")


def os_reason(exc: OSError) -> str:
    """Why ``exc`` happened, in words and without its file's name: ``permission denied
    (EACCES)`` (the caller names the file)."""
    reason = STORAGE_ERRNOS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    code = errno.errorcode.get(exc.errno or 0, "")
    return f"{reason} ({code})" if code else reason


def is_storage_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a file-system failure a user must fix (see :data:`STORAGE_ERRNOS`)."""
    return isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS


class Interrupted(KeyboardInterrupt):
    """phasegate was told to stop by SIGINT, SIGTERM or SIGHUP.

    A :class:`KeyboardInterrupt`, so no ``except Exception`` (a retry loop, a
    backend) swallows it. The exit code is 128 plus the signal's number.
    """

    def __init__(self, signum: int = 2) -> None:  # SIGINT
        import signal  # here: the hooks import this module, and not signal

        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)

    @property
    def signal_name(self) -> str:
        """``SIGINT``, ``SIGTERM`` or ``SIGHUP``."""
        import signal

        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """128 plus the signal's number: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP)."""
        return 128 + self.signum
