"""Checks: shell commands (tests, linters) that must pass before a reviewer is asked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from phasegate.config import Config
from phasegate.process import run_process
from phasegate.redact import Redactor
from phasegate.workflow.model import InlineCheck, Phase

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

    def describe(self) -> str:
        if self.skipped:
            return (
                f"check {self.name!r} skipped: no '{self.name}' command in .phasegate/config.yaml"
            )
        if self.passed:
            return f"check {self.name!r} passed"
        why = "timed out" if self.timed_out else f"failed with exit code {self.exit_code}"
        return f"check {self.name!r} ({self.command}) {why}"


def resolve_command(check: str | InlineCheck, config: Config) -> tuple[str, str | None]:
    """``(name, command)`` of a check; named checks come from ``config.commands``."""
    if isinstance(check, InlineCheck):
        return check.name, check.run
    return check, config.commands.get(check)


def run_checks(
    phase: Phase, config: Config, workdir: Path, redactor: Redactor
) -> list[CheckOutcome]:
    """Run every check of ``phase`` in ``workdir`` (all of them, even after a failure)."""
    outcomes: list[CheckOutcome] = []
    for check in phase.checks:
        name, command = resolve_command(check, config)
        if not command:
            outcomes.append(CheckOutcome(name, None, passed=True, skipped=True))
            continue
        result = run_process(command, cwd=workdir, timeout=config.timeouts.check)
        output = redactor.text((result.stdout + result.stderr)[-FEEDBACK_TAIL:])
        outcomes.append(
            CheckOutcome(
                name,
                command,
                passed=result.ok,
                exit_code=result.exit_code,
                output_tail=output,
                timed_out=result.timed_out,
                duration_s=round(result.duration_s, 3),
            )
        )
    return outcomes
