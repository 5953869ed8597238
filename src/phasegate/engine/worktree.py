"""Git worktrees for work items: create, keep working after a move, report, remove.

An item created with ``phasegate new NAME --worktree`` gets its own checkout
at ``.phasegate/worktrees/NAME`` on branch ``phasegate/NAME``; agents work
there while the item folder (state, artifacts) stays in the main checkout.
The path is stored relative to the repository and resolved at run time, so
moving the repository does not lose it; git's own links (absolute paths in
git 2.39) are repaired with ``git worktree repair`` when a move broke them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from phasegate.errors import BadInputError, NotFoundError, WaitingForHuman
from phasegate.repo_paths import CONFIG_DIR, WORKTREES_DIR, worktree_rel

BRANCH_PREFIX = "phasegate/"


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(cwd), *args],
        capture_output=True,
        text=True,
        check=False,
        errors="replace",
    )


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "no message"


def branch_name(name: str) -> str:
    """The branch of work item ``name``'s worktree."""
    return BRANCH_PREFIX + name


def add_worktree(repo: Path, name: str) -> tuple[str, str]:
    """Create the worktree and branch of work item ``name``; return ``(relative path, branch)``.

    The worktree starts at the main checkout's HEAD, so the item's base commit
    is also its branch point.
    """
    if "--" in name:
        # .phasegate/worktrees/ITEM--LOOP--KEY is where ITEM's parallel items work.
        raise BadInputError(
            f"work item name {name!r} has '--', which names the worktrees of parallel items "
            "in .phasegate/worktrees: pick a name without '--' for an item with --worktree"
        )
    rel = worktree_rel(name)
    branch = branch_name(name)
    if not _git(repo, "rev-parse", "--verify", "-q", "HEAD").stdout.strip():
        raise BadInputError(
            f"--worktree needs a commit to branch from, and {repo} has none: commit first"
        )
    path = repo / rel
    if path.exists():
        raise BadInputError(f"{path} already exists; remove it or pick another item name")
    if _git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}").returncode == 0:
        raise BadInputError(
            f"branch {branch} already exists; delete it (git branch -D {branch}) "
            "or pick another item name"
        )
    ignore = repo / CONFIG_DIR / WORKTREES_DIR / ".gitignore"
    if not ignore.exists():
        # The worktrees sit inside the main checkout: keep them out of its git status.
        ignore.parent.mkdir(parents=True, exist_ok=True)
        ignore.write_text("*\n", encoding="utf-8")
    out = _git(repo, "worktree", "add", "-q", "-b", branch, rel, "HEAD")
    if out.returncode != 0:
        raise BadInputError(f"git worktree add {rel} failed: {_first_line(out.stderr)}")
    return rel, branch


def _is_checkout(path: Path) -> bool:
    out = _git(path, "rev-parse", "--show-toplevel")
    return out.returncode == 0 and Path(out.stdout.strip()).resolve() == path.resolve()


def ensure_worktree(repo: Path, rel: str, name: str, branch: str | None) -> Path:
    """Return work item ``name``'s worktree, repairing git's links if the repo was moved."""
    path = repo / rel
    if not path.is_dir():
        recreate = f"git worktree add {rel} {branch}" if branch else f"git worktree add {rel}"
        raise NotFoundError(
            f"worktree {rel} of work item {name!r} is missing; recreate it with: "
            f"git worktree prune && {recreate}"
        )
    if _is_checkout(path):
        return path
    if not (path / ".git").is_file():
        # Removed, then its folder made again: repaired, every file it lacks would count
        # as deleted on the item's branch.
        recreate = f"git worktree add {rel} {branch}" if branch else f"git worktree add {rel}"
        raise BadInputError(
            f"worktree {rel} of work item {name!r} is not a git checkout (its .git file is "
            f"gone: removed and made again?); move what you keep there elsewhere, then make "
            f"it again: rm -rf {rel} && git worktree prune && {recreate}"
        )
    # Moving the repository leaves git's absolute links pointing at the old place.
    repaired = _git(repo, "worktree", "repair", rel)
    if _is_checkout(path):
        return path
    raise BadInputError(
        f"worktree {rel} of work item {name!r} is not a working git checkout and "
        f"'git worktree repair' could not fix it ({_first_line(repaired.stderr)}); "
        f"see 'git worktree list' in {repo}"
    )


@dataclass(frozen=True)
class WorktreeCheck:
    """Whether removing a worktree could lose work."""

    path: Path
    branch: str | None
    exists: bool
    uncommitted: int
    unmerged: int
    target: str
    #: Where the worktree's commits are: on ``branch``, or (checked out detached or on
    #: another branch) only in the worktree's own HEAD; whether ``branch`` is gone.
    on_branch: bool = True
    branch_missing: bool = False

    @property
    def safe_to_remove(self) -> bool:
        return self.exists and self.uncommitted == 0 and self.unmerged == 0


def check_worktree(repo: Path, rel: str, branch: str | None) -> WorktreeCheck:
    """Count uncommitted changes in the worktree and branch commits the main checkout lacks."""
    path = repo / rel
    head = _git(repo, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip() or "HEAD"
    if not path.is_dir():
        return WorktreeCheck(path, branch, False, 0, 0, head)
    status = _git(path, "status", "--porcelain")
    uncommitted = len(status.stdout.splitlines()) if status.returncode == 0 else 1
    tips: list[str] = []
    missing = False
    if branch:
        ref = f"refs/heads/{branch}"
        missing = _git(repo, "rev-parse", "--verify", "-q", ref).returncode != 0
        tips += [] if missing else [ref]
    # Commits made in the worktree off its branch (a detached HEAD) would be lost with it.
    here = _git(path, "rev-parse", "--verify", "-q", "HEAD").stdout.strip()
    tips += [here] if here else []
    checked_out = _git(path, "symbolic-ref", "-q", "HEAD").stdout.strip()
    on_branch = not branch or checked_out == f"refs/heads/{branch}"
    unmerged = 1 if missing else 0
    if tips:
        count = _git(repo, "rev-list", "--count", *tips, "^HEAD")
        # An unreadable branch counts as unmerged: never assume work is safe.
        found = int(count.stdout.strip()) if count.returncode == 0 else 1
        unmerged = max(unmerged, found)
    return WorktreeCheck(path, branch, True, uncommitted, unmerged, head, on_branch, missing)


def describe(check: WorktreeCheck, rel: str) -> str:
    """Why a worktree is (not) safe to remove, in one clause."""
    problems: list[str] = []
    if check.uncommitted:
        problems.append(f"{check.uncommitted} uncommitted change(s) in {rel}")
    if check.branch_missing:
        problems.append(f"its branch {check.branch} is gone (deleted or renamed?)")
    elif check.unmerged and not check.on_branch:
        problems.append(
            f"{check.unmerged} commit(s) in {rel} not merged into {check.target} (it is not "
            f"on branch {check.branch})"
        )
    elif check.unmerged:
        problems.append(
            f"{check.unmerged} commit(s) on {check.branch} not merged into {check.target}"
        )
    return "; ".join(problems) if problems else f"{rel} is clean and merged"


def landing_steps(check: WorktreeCheck, rel: str) -> list[str]:
    """What to do, in order, so that removing the worktree loses nothing."""
    steps = [f"commit the {check.uncommitted} uncommitted change(s) in {rel}"]
    steps = steps if check.uncommitted else []
    if check.branch_missing or not check.on_branch:
        new = check.branch or "a new branch"
        steps.append(f"put its commits on a branch (in {rel}: git switch -c {new}) and merge it")
    elif check.branch:
        steps.append(f"merge branch {check.branch} into {check.target} (git merge {check.branch})")
    return steps


def git_prune(repo: Path) -> None:
    """``git worktree prune``: git forgets worktrees whose folders are gone."""
    _git(repo, "worktree", "prune")


def remove_worktree(repo: Path, rel: str, *, force: bool = False) -> None:
    """``git worktree remove`` (``--force`` discards uncommitted changes); the branch is kept."""
    args = ["worktree", "remove", *(["--force"] if force else []), rel]
    out = _git(repo, *args)
    if out.returncode != 0:
        raise BadInputError(f"git worktree remove {rel} failed: {_first_line(out.stderr)}")


def finish_worktree(
    repo: Path,
    name: str,
    rel: str,
    branch: str | None,
    confirm: Callable[[str, bool], bool] | None,
    journal: Callable[[str, bool], None],
) -> tuple[str, bool]:
    """What to do with a finished item's worktree: ``(message, removed)``, journaled
    with ``journal(message, removed)``.

    ``confirm`` is ``None`` without a terminal: then nothing is ever removed.
    With one, removal is offered only when no uncommitted change or unmerged
    commit could be lost; otherwise the message says how to proceed. No answer to
    the question (Ctrl-D: :class:`WaitingForHuman`) keeps the worktree, journaled
    as such before the error goes on.
    """
    message, removed = _finish(repo, name, rel, branch, confirm, journal)
    journal(message, removed)
    return message, removed


def _finish(
    repo: Path,
    name: str,
    rel: str,
    branch: str | None,
    confirm: Callable[[str, bool], bool] | None,
    journal: Callable[[str, bool], None],
) -> tuple[str, bool]:
    check = check_worktree(repo, rel, branch)
    later = f"phasegate worktree remove {name}"
    if not check.exists:
        return f"Worktree {rel} is already gone; merge branch {branch} if you have not.", False
    if not check.safe_to_remove:
        steps = landing_steps(check, rel)
        return (
            f"To land the work: {', then '.join(steps)}. The worktree was kept; "
            f"remove it afterwards with: {later}",
            False,
        )
    question = f"Branch {branch} is merged. Remove the worktree {rel}? (the branch is kept)"
    try:
        yes = confirm is not None and confirm(question, False)
    except WaitingForHuman:
        journal(
            f"Branch {branch} is merged; no answer to removing worktree {rel} (the "
            f"terminal's input ended): kept; remove it with: {later}",
            False,
        )
        raise
    if yes:
        remove_worktree(repo, rel)
        return f"Branch {branch} is merged; worktree {rel} removed (the branch is kept).", True
    return f"Branch {branch} is merged; remove the worktree with: {later}", False
