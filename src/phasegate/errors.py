"""Typed errors and the exit codes the CLI maps them to.

Every error a user can cause is a :class:`PhasegateError` subclass carrying one
clear line of text and an exit code; the CLI prints that line and exits with the
code, never a traceback.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Documented exit codes of the ``phasegate`` command."""

    OK = 0
    INTERNAL = 1  # a bug in phasegate: please report it
    BAD_INPUT = 2  # bad arguments, names, workflow definitions or config
    WAITING = 3  # stopped for a human decision (nothing is lost; answer and run again)
    BLOCKED = 4  # a hard prerequisite or a reviewer's stop blocks progress
    STATE = 5  # a state file is corrupt or unreadable (it is left untouched)
    AGENT = 6  # an agent backend failed or is unusable
    BUSY = 7  # another phasegate process holds this work item


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
    """A decision was answered already (by another person, page or command)."""


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
