"""Actions every workflow may use."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

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


class ImplBaseline(Action):
    """Before the first implementer call: the files already changed in the work tree
    (against the change's base commit, untracked ones included), with their digests, so
    that only what changes from then on counts as the implementation (a notes file left
    lying around is neither a change nor shown to the reviewer). Recorded once. Named
    for the change workflow, where it began; feature's implement takes it too."""

    name = "change-impl-baseline"

    def run(self, ctx: PluginContext) -> str:
        from phasegate.engine.prompting import EMPTY_TREE, PREEXISTING_KEY, file_digest

        if PREEXISTING_KEY in ctx.state.data:
            return "done"
        root = ctx.item.repo
        excludes = [":(exclude).phasegate"]
        folder = ctx.item.item_dir
        if folder.is_relative_to(root):
            excludes.append(f":(exclude,literal){folder.relative_to(root).as_posix()}")
        base = ctx.state.base_commit or EMPTY_TREE
        changed = _git_names(root, ["diff", "--name-only", "--no-renames", base], excludes)
        changed += _git_names(root, ["ls-files", "--others", "--exclude-standard"], excludes)
        before = {name: file_digest(root / name) for name in changed}
        ctx.state.data[PREEXISTING_KEY] = before
        if before:
            ctx.record("impl.baseline", files=sorted(before))
        return "done"


def _git_names(root: Path, args: list[str], excludes: Sequence[str] = ()) -> list[str]:
    import subprocess

    out = subprocess.run(
        ["git", "-C", str(root), "-c", "core.quotePath=false", *args, "--", ".", *excludes],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        return []
    return [line for line in out.stdout.splitlines() if line.strip()]


IMPL_BASELINE = ImplBaseline()
