"""Leaving lean mode (seed 003, INTAKE_LEAN): "if the Coder discovers complexity, exit
lean mode and restart from full INTAKE".

In lean mode the Coder that finds the change too complex for one task does not
implement it: it writes why in ``lean-exit.md`` of the session folder. The
action ``team-lean-exit-check`` (after the Coder) then ends the task with
outcome ``too-complex`` instead of sending it to review, and
``team-restart-full`` switches the session to full mode and starts it again at
INTAKE (every full-mode state and both gates follow; the earlier lean work stays
in the work tree and the files of the session folder). In full mode
``lean-exit.md`` means nothing.
"""

from __future__ import annotations

from phasegate.engine.plugin_api import Action, PluginContext
from phasegate.engine.prompting import read_file

LEAN_EXIT_FILE = "lean-exit.md"


def lean_exit_reason(ctx: PluginContext) -> str | None:
    """Why the Coder found a lean session too complex (``None``: it did not, or not lean)."""
    if ctx.state.mode != "lean":
        return None
    text = (read_file(ctx.item_dir / LEAN_EXIT_FILE) or "").strip()
    return text or None


class LeanExitCheck(Action):
    """After the Coder: ``too-complex`` when lean mode's Coder wrote lean-exit.md."""

    name = "team-lean-exit-check"
    outcomes = ("continue", "too-complex")

    def run(self, ctx: PluginContext) -> str:
        reason = lean_exit_reason(ctx)
        if reason is None:
            return "continue"
        ctx.record("team.too_complex", reason=reason.splitlines()[0][:200])
        return "too-complex"


class RestartFull(Action):
    """The session leaves lean mode: it is in full mode from now on."""

    name = "team-restart-full"
    outcomes = ("done",)

    def run(self, ctx: PluginContext) -> str:
        self.replay(ctx, "done")
        return "done"

    def replay(self, ctx: PluginContext, outcome: str) -> None:
        """The switch is engine state: a resume after a crash before it was committed
        (the outcome already journaled) makes it again."""
        if ctx.state.mode != "full":
            ctx.state.d["mode"] = "full"
            ctx.record("team.lean_exit", mode="full")


LEAN_EXIT_CHECK = LeanExitCheck()
RESTART_FULL = RestartFull()
