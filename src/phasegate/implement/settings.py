"""The implement workflow's settings: ``workflows.implement.settings`` in the config.

```yaml
workflows:
  implement:
    settings:
      max_cycles: 3                  # review cycles per task
      review_timeout_minutes: 5      # each review's time limit
      escalation:                    # seed 004's "User Escalation Timeout Configuration"
        timeout_minutes: 5           # an unanswered escalation takes default_action (0: never)
        default_action: skip_with_warning   # or accept_as_is, abort_process
        notification_method: console # or none
        actions: [skip_with_warning, accept_as_is, abort_process]
```

Every value is checked when a run starts; a bad one names its field. Each name in
``checks`` must be a key of the config's ``commands:``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from phasegate.config import Config, config_path
from phasegate.errors import ConfigError

Action = Literal["skip_with_warning", "accept_as_is", "abort_process"]
ACTIONS: tuple[Action, ...] = ("skip_with_warning", "accept_as_is", "abort_process")


class Escalation(BaseModel):
    """What happens when a review times out or a task is escalated and nobody answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_minutes: float | None = Field(default=5.0, ge=0)
    default_action: Action = "skip_with_warning"
    notification_method: Literal["console", "none"] = "console"
    actions: tuple[Action, ...] = ACTIONS

    @model_validator(mode="after")
    def _default_offered(self) -> Escalation:
        if self.default_action not in self.actions:
            raise ValueError(
                f"default_action {self.default_action!r} is not one of actions "
                f"({', '.join(self.actions)})"
            )
        return self


class ImplementSettings(BaseModel):
    """Every setting of the implement workflow, with seed 004's defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Where ``phasegate implement ID`` looks for ``ID*/PLAN.md``.
    specs_dir: str = "docs/specs"
    #: The review-cycle state file (relative to the repository).
    state_file: str = ".the-startup/review-cycles.json"
    max_cycles: int = Field(default=3, ge=1, le=20)
    review_timeout_minutes: float = Field(default=5.0, gt=0)
    #: A reviewer's failure rate counts once it has reviewed this many times.
    failure_rate_min_reviews: int = Field(default=5, ge=1)
    #: The config commands a validation checkpoint runs (default: every command).
    checks: tuple[str, ...] | None = None
    #: Who implements a task that names no agent (default: the implementer role).
    default_agent: str | None = None
    #: Whether a task without ``review:`` metadata is reviewed.
    review_by_default: bool = True
    #: How many characters of each specification document a prompt carries.
    context_chars: int = Field(default=6000, ge=500)
    escalation: Escalation = Escalation()


def implement_settings(config: Config, repo: Path | None = None) -> ImplementSettings:
    """The settings from ``config`` (defaults where not given); a bad value is a ConfigError."""
    found = config.workflows.get("implement")
    raw = dict(found.settings) if found is not None else {}
    where = config_path(repo) if repo is not None else ".phasegate/config.yaml"
    try:
        settings = ImplementSettings.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
        raise ConfigError(
            f"{where}: workflows.implement.settings{'.' + field if field else ''}: {message}"
        ) from None
    # A check without a command would be skipped, and a checkpoint that ran nothing
    # of what it names must never count as passed: a misspelt name is refused here.
    for index, name in enumerate(settings.checks or ()):
        if name not in config.commands:
            known = ", ".join(config.commands) or "none"
            raise ConfigError(
                f"{where}: workflows.implement.settings.checks.{index}: no command {name!r} "
                f"in commands (known: {known})"
            )
    return settings
