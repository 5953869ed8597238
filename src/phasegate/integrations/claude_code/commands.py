"""The slash commands ``phasegate install claude-code`` writes to ``.claude/commands/``.

Each command has Claude run the phasegate CLI, so the workflow (transitions,
iterations, state) is enforced by code; the prompt only says how to run it
and how to pass its result and questions on. Every file carries
:data:`MARKER`, so uninstall removes only files phasegate wrote.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

MARKER = "phasegate-managed"
PREFIX = "phasegate-"
_MARK_LINE = (
    f"<!-- {MARKER}: written by `phasegate install claude-code`; "
    "`phasegate uninstall claude-code` removes it. -->"
)

_RUN_ADVICE = """\
phasegate decides whether the phase may start, runs the agents and the reviewer, and
records the result. Do not write the phase's artifacts or edit phasegate's state files
yourself: the CLI is the only way to advance the item.

Report the outcome to the user from the command's output:
- exit status 0: say what completed and the next command it printed;
- exit status 3: a human decision is needed. Show the user the question; once they have
  answered, run the command again with the option the message names (--yes, --partial ...);
- exit status 4: a hard prerequisite is missing; say which phase must run first;
- any other failure: show the error line as it is.

The command may run for several minutes: give the Bash tool a 10-minute timeout. If it is
cut off, run it again: phasegate resumes where it stopped. If the session context warned
that this directory is not the item's worktree and you have not passed that warning on
yet, mention it once."""


def _frontmatter(description: str, hint: str, tools: Sequence[str]) -> str:
    # JSON strings are valid YAML scalars: safe for text holding ": " or brackets.
    return (
        "---\n"
        f"description: {json.dumps(description)}\n"
        f"argument-hint: {json.dumps(hint)}\n"
        f"allowed-tools: {json.dumps(', '.join(tools))}\n"
        "---\n"
        f"{_MARK_LINE}\n\n"
    )


def status_command(cmd: str) -> str:
    """``/phasegate-status [ITEM]``: the CLI's output is put in the prompt as it is."""
    return _frontmatter(
        "phasegate: where work items stand (phase, iterations, concerns, next command)",
        "[ITEM]",
        [f"Bash({cmd} status:*)"],
    ) + (
        f"Output of `phasegate status $ARGUMENTS`:\n\n!`{cmd} status $ARGUMENTS`\n\n"
        "Summarise this for the user: for each work item its phase, unresolved reviewer "
        "concerns and the next command. Do not run anything else.\n"
    )


def run_command(cmd: str, phase: str | None = None, description: str = "") -> str:
    """``/phasegate-run ITEM`` (the whole workflow) or ``/phasegate-PHASE ITEM``."""
    suffix = f" --phase {phase}" if phase else ""
    if phase:
        summary = f"phasegate: run the {phase} phase of a work item"
        if description:
            summary += f" ({description.rstrip('.')})"
        what = f"the {phase} phase of the phasegate work item"
    else:
        summary = "phasegate: run a work item through its workflow (or resume it)"
        what = "the phasegate work item"
    return _frontmatter(
        summary,
        "ITEM [--yes] [--partial continue|fresh|review]",
        [f"Bash({cmd} run:*)", f"Bash({cmd} status:*)"],
    ) + (
        f"Run {what} named in these arguments: $ARGUMENTS\n\n"
        f"If no item name was given, run `{cmd} status` and ask the user which item.\n"
        "Otherwise run exactly this command with the Bash tool:\n\n"
        f"    {cmd} run $ARGUMENTS{suffix}\n\n"
        f"{_RUN_ADVICE}\n"
    )


def command_files(cmd: str, phases: Sequence[tuple[str, str]]) -> dict[str, str]:
    """File name -> content of every slash command, for the ``(name, description)`` phases."""
    files = {
        f"{PREFIX}status.md": status_command(cmd),
        f"{PREFIX}run.md": run_command(cmd),
    }
    for name, description in phases:
        files[f"{PREFIX}{name}.md"] = run_command(cmd, name, description)
    return files
