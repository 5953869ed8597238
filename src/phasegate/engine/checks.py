"""Checks: shell commands (tests, linters, acceptance checks) run as a gate.

A check round runs every command of a node (all of them, even after a
failure), records each command as it starts (``check.started``) and its outcome
as it finishes (``check.finished``), and records the whole round under the
node's key: a resumed run reuses a round that finished instead of running it
again, and of a round a run died in, the checks that had finished.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.config import Config
from phasegate.engine.confine import inside
from phasegate.engine.item import WorkItem
from phasegate.engine.state import EngineState
from phasegate.errors import WorkflowError
from phasegate.faults import crash_point
from phasegate.process import run_process, start_error_text
from phasegate.workflow.parts import CheckRef, InlineCheck

#: How much of a failing check's output goes back to the executor.
FEEDBACK_TAIL = 4000


@dataclass(frozen=True)
class CheckOutcome:
    """One check's result; ``skipped`` when its command is not configured."""

    name: str
    command: str | None
    passed: bool
    skipped: bool = False
    exit_code: int | None = None
    output_tail: str = ""
    timed_out: bool = False
    duration_s: float = 0.0
    #: Why the command could not be started at all (its ``cwd`` folder is missing).
    error: str = ""
    #: The seconds it was given (``timeouts.check``), when it ran out of them.
    timeout_s: float | None = None

    def describe(self) -> str:
        if self.skipped:
            return (
                f"check {self.name!r} skipped: no '{self.name}' command in .phasegate/config.yaml"
            )
        if self.passed:
            return f"check {self.name!r} passed"
        if self.error:
            ran = f" ({self.command})" if self.command else ""
            return f"check {self.name!r}{ran} could not run: {self.error}"
        if self.timed_out:
            why = timed_out_text(self.timeout_s)
        else:
            why = f"failed with exit code {self.exit_code}"
            if hint := EXIT_HINTS.get(self.exit_code):
                why += f" ({hint[1]})"
        return f"check {self.name!r} ({self.command}) {why}"

    def issue(self) -> dict[str, str | None]:
        """The blocker a failing check becomes (its output's tail is the feedback)."""
        description = f"{self.describe()}:\n{self.output_tail.strip()}".rstrip(":\n")
        return {"severity": "blocker", "description": description, "location": self.command}


#: What the shell's own exit codes mean (a check is run by ``/bin/sh -c``): a short form
#: for the progress line, and the words of the issue and the block.
EXIT_HINTS: dict[int | None, tuple[str, str]] = {
    127: ("command not found", "a command it runs was not found: is it installed and on PATH?"),
    126: ("not executable", "a command it runs could not be executed: check its permissions"),
}


def timed_out_text(seconds: float | None) -> str:
    """``timed out after 2s (timeouts.check)``, naming the setting that gives it longer
    (``timed out`` when the limit is not known)."""
    return f"timed out after {seconds:g}s (timeouts.check)" if seconds else "timed out"


def _timed_out_fields(outcome: CheckOutcome) -> dict[str, Any]:
    """``{"timed_out": true, "timeout_s": N}`` for a check that ran out of time, else ``{}``."""
    return {"timed_out": True, "timeout_s": outcome.timeout_s} if outcome.timed_out else {}


@dataclass(frozen=True)
class CheckCommand:
    name: str
    command: str | None
    cwd: str | None = None
    #: A command that must run (a check node's): not configured, it fails, never skips.
    required: bool = False


@dataclass(frozen=True)
class CheckRound:
    """The commands of one check round, and where the round is recorded."""

    key: str
    path: str
    label: str
    iteration: int
    commands: tuple[CheckCommand, ...]
    #: Where the commands run when not in the item's work tree (a parallel item's worktree).
    workdir: Path | None = None


def resolve(
    checks: tuple[CheckRef, ...], config: Config, *, required: bool = False
) -> tuple[CheckCommand, ...]:
    """The commands of ``checks``: named ones come from ``config.commands``.

    ``required`` (a check node's ``run``): a named command the configuration does not
    have fails when the round runs, instead of being skipped (a gate never passes
    without running what it names).
    """
    found: list[CheckCommand] = []
    for check in checks:
        if isinstance(check, InlineCheck):
            found.append(CheckCommand(check.name, check.run, check.cwd))
        else:
            found.append(CheckCommand(check, config.commands.get(check), required=required))
    return tuple(found)


def recorded_round(item: WorkItem, round_: CheckRound) -> list[CheckOutcome] | None:
    """The outcomes of ``round_`` if a run recorded them before it died, and ran the
    commands the round has now (one changed since runs again: see :func:`finished_before`)."""
    recorded = item.recorded().checks(round_.key)
    if recorded is None:
        return None
    # As journaled: a secret in a command was masked there.
    now = item.redactor.data([{"name": c.name, "command": c.command} for c in round_.commands])
    ran = [{"name": o.get("name"), "command": o.get("command")} for o in recorded]
    if ran != now or any(_timed_out_sooner(item, o) for o in recorded):
        return None
    return [CheckOutcome(**outcome) for outcome in recorded]


def _timed_out_sooner(item: WorkItem, recorded: Mapping[str, Any]) -> bool:
    """Whether a recorded check ran out of a smaller time limit than ``timeouts.check`` is
    now: raised since, the check runs again (its outcome said only that it did not finish
    in time, not how it ends in the time it has now)."""
    limit = recorded.get("timeout_s")
    return (
        bool(recorded.get("timed_out"))
        and isinstance(limit, int | float)
        and limit < item.config.timeouts.check
    )


def run_check_round(
    item: WorkItem, state: EngineState, round_: CheckRound, *, in_worker: bool = False
) -> list[CheckOutcome]:
    """Run a round of checks, or reuse the outcomes a run recorded before it died.

    ``in_worker``: run from a parallel fan-out's worker thread, which never
    writes state (the round was looked up on the engine's thread already).
    """
    if not in_worker:
        found = recorded_round(item, round_)
        if found is not None:
            return found
        item.before_slow_work()
    earlier = finished_before(item, round_)
    started = time.monotonic()
    workdir = round_.workdir or item.workdir(state)
    outcomes: list[CheckOutcome] = []
    try:
        # After fast steps the state is committed late, should the checks take long.
        with nullcontext() if in_worker else item.waiting():
            for index, command in enumerate(round_.commands):
                outcome = earlier.get(index)
                if outcome is not None:  # it finished before the run died: not run again
                    item.record(
                        "check.reused",
                        key=round_.key,
                        index=index,
                        node=round_.path,
                        phase=round_.label,
                        check=outcome.name,
                        passed=outcome.passed,
                        skipped=outcome.skipped,
                    )
                else:
                    outcome = _run_recorded(item, round_, index, workdir, command)
                outcomes.append(outcome)
    except KeyboardInterrupt as exc:
        item.record(
            "check.abandoned",
            key=round_.key,
            node=round_.path,
            signal=getattr(exc, "signal_name", "SIGINT"),
            killed=len(getattr(exc, "killed", ())),
            sync_now=True,
        )
        raise
    if not in_worker:
        item.slow_work_done(time.monotonic() - started)
    item.record_result(
        "checks.completed",
        round_.key,
        key=round_.key,
        sync_now=False,
        node=round_.path,
        phase=round_.label,
        iteration=round_.iteration,
        outcomes=[dataclasses.asdict(outcome) for outcome in outcomes],
    )
    return outcomes


def finished_before(item: WorkItem, round_: CheckRound) -> dict[int, CheckOutcome]:
    """The checks of ``round_`` a run finished before it died, by their place in the round
    (their ``check.finished`` events; one whose name or command changed since runs again)."""
    found: dict[int, CheckOutcome] = {}
    for index, event in item.recorded().finished_checks(round_.key).items():
        if index >= len(round_.commands):
            continue
        command = round_.commands[index]
        # As journaled: a secret in the command was masked there.
        written = item.redactor.data({"check": command.name, "command": command.command})
        if (event.get("check"), event.get("command")) != (written["check"], written["command"]):
            continue
        if _timed_out_sooner(item, event):
            continue
        timeout = event.get("timeout_s")
        found[index] = CheckOutcome(
            command.name,
            command.command,
            passed=bool(event.get("passed")),
            skipped=bool(event.get("skipped")),
            exit_code=event.get("exit_code"),
            output_tail=str(event.get("output") or ""),
            timed_out=bool(event.get("timed_out")),
            duration_s=float(event.get("duration_s") or 0.0),
            error=str(event.get("error") or ""),
            timeout_s=float(timeout) if isinstance(timeout, int | float) else None,
        )
    return found


def _run_recorded(
    item: WorkItem, round_: CheckRound, index: int, workdir: Path, command: CheckCommand
) -> CheckOutcome:
    """Run one command of ``round_``, its start and its outcome journaled as they happen."""

    def started() -> None:
        item.record(
            "check.started",
            key=round_.key,
            index=index,
            node=round_.path,
            phase=round_.label,
            iteration=round_.iteration,
            check=command.name,
            command=command.command,
        )

    outcome = _run_one(item, workdir, command, started)
    # The round's key is held from its first outcome on: a commit keeps them in the tail.
    item.record_result(
        "check.finished",
        round_.key,
        key=round_.key,
        index=index,
        node=round_.path,
        phase=round_.label,
        iteration=round_.iteration,
        check=outcome.name,
        command=outcome.command,
        passed=outcome.passed,
        skipped=outcome.skipped,
        exit_code=outcome.exit_code,
        duration_s=outcome.duration_s,
        output=outcome.output_tail,
        **_error_field(outcome),
        **_timed_out_fields(outcome),
    )
    crash_point("check.finished")
    return outcome


def _error_field(outcome: CheckOutcome) -> dict[str, Any]:
    """``{"error": why}`` for a check that could not run (journaled with it), else ``{}``."""
    return {"error": outcome.error} if outcome.error else {}


def _run_one(
    item: WorkItem, workdir: Path, command: CheckCommand, started: Callable[[], None]
) -> CheckOutcome:
    """Run ``command``; ``started`` is called just before its process starts."""
    if not command.command:
        if command.required:
            return CheckOutcome(
                command.name,
                None,
                passed=False,
                error=(
                    f"no {command.name!r} command is configured; "
                    + (
                        "to run it as written, write it inline in the check's run list: "
                        f"{{name: check, run: {json.dumps(command.name)}}}"
                        if any(c.isspace() for c in command.name)
                        else f"set commands.{command.name} in .phasegate/config.yaml"
                    )
                    + " (a check node does not pass without running its commands)"
                ),
            )
        return CheckOutcome(command.name, None, passed=True, skipped=True)
    cwd = workdir / command.cwd if command.cwd else workdir
    if not inside(cwd, [workdir]):
        raise WorkflowError(
            f"check {command.name!r}: its working directory {command.cwd!r} leads outside the "
            f"work tree (to {cwd.resolve()}, through a symlink); refused"
        )
    if not cwd.is_dir():
        what = "is not a folder" if cwd.exists() else "does not exist"
        return CheckOutcome(
            command.name,
            command.command,
            passed=False,
            error=f"its working directory {command.cwd!r} {what} in the work tree",
        )
    limit = item.config.timeouts.check
    started()
    try:
        result = run_process(command.command, cwd=cwd, timeout=limit)
    except (OSError, ValueError) as exc:  # ValueError: a NUL character in the command
        return CheckOutcome(
            command.name,
            command.command,
            passed=False,
            error=f"its command could not start: {start_error_text(exc)}",
        )
    # Redacted before it is cut, so no tail of a secret survives the cut.
    output = item.redactor.tail(result.stdout + result.stderr, FEEDBACK_TAIL)
    return CheckOutcome(
        command.name,
        command.command,
        passed=result.ok,
        exit_code=result.exit_code,
        output_tail=output,
        timed_out=result.timed_out,
        duration_s=round(result.duration_s, 3),
        timeout_s=limit if result.timed_out else None,
    )
