"""Actions every workflow may use."""

from __future__ import annotations

from phasegate.engine.plugin_api import Action, PluginContext


class FinishAction(Action):
    """Seed 000's finish step: the item completes at the end node that follows it.

    Completing the item (its status, the summary kept in the state, the review
    history deleted, the worktree's branch named for merging) is the end
    node's work; ``finish`` marks the place in the graph where that happens.
    """

    name = "finish"
    outcomes = ("done",)

    def run(self, ctx: PluginContext) -> str:
        return "done"


FINISH = FinishAction()


class ProceedAction(Action):
    """A waypoint: a place a workflow's command stops at and the next one continues from."""

    name = "proceed"
    outcomes = ("done",)

    def run(self, ctx: PluginContext) -> str:
        return "done"


PROCEED = ProceedAction()
