"""Git for a parallel foreach: a worktree and branch per item, merges in plan order.

When a parallel fan-out starts, the work tree its agents would use is
snapshotted into a commit (uncommitted and untracked files included, neither
the index nor HEAD touched): the *base*. Each item then works in its own
worktree on its own branch (``phasegate-tasks/ITEM/NODE/KEY``):

* an item without dependencies starts from the base; one with dependencies
  starts from the merge of their finished commits (so it sees their work,
  and what it starts from does not depend on timing);
* a finished item's changes are committed on its branch;
* finished items are merged, in plan order, into the fan-out's merged ref
  (``refs/phasegate/ITEM/NODE/merged``); when the fan-out ends, the difference
  between the base and the merged commit is applied to the work tree, where a
  sequential run would have left its changes (uncommitted, as agents leave them);
  a work tree changed meanwhile gets it file by file, as a three-way merge whose
  overlapping changes are left between conflict markers for a person.

Commits are made with a fixed identity and the fan-out's start time, so the
same inputs give the same commits, after a crash too. Merges use ``git
merge-tree`` (no work tree); a conflict is never resolved silently: it is
checked out in a fresh worktree for a repair (see :mod:`phasegate.engine.nodes.parallel`).
phasegate's own files (``.phasegate/`` and the item's folder) are never part
of an item's commit.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.errors import BadInputError, BlockedError
from phasegate.faults import crash_point
from phasegate.repo_paths import CONFIG_DIR, WORKTREES_DIR

BRANCH_PREFIX = "phasegate-tasks"
REF_PREFIX = "refs/phasegate"
#: Lines that mark an unresolved conflict in a file.
_MARKER = re.compile(rb"^(<{7} |={7}$|>{7} )", re.MULTILINE)
#: git's complaint about a lock file left by a killed command.
_LOCK = re.compile(r"Unable to create '([^']+\.lock)': File exists")


def slug(text: str) -> str:
    """``text`` usable in a branch and a folder name (a short hash keeps it unique)."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip(".-").replace("..", "-")
    cleaned = cleaned[:60].rstrip(".-")
    if cleaned != text or not cleaned or cleaned.endswith(".lock"):
        cleaned = f"{cleaned or 'item'}-{hashlib.sha1(text.encode()).hexdigest()[:6]}"
    return cleaned


@dataclass(frozen=True)
class Merge:
    """A merge of two commits: the commit made, or the files that conflict."""

    commit: str | None
    conflicts: tuple[str, ...] = ()


class FanoutGit:
    """The git side of one parallel foreach of one work item."""

    def __init__(
        self, repo: Path, workdir: Path, item: str, node: str, exclude: tuple[str, ...], date: str
    ) -> None:
        self.repo = repo
        self.workdir = workdir
        self.item = item
        self.node = slug(node)
        self.exclude = exclude
        self.date = date
        self.ref_base = f"{REF_PREFIX}/{slug(item)}/{self.node}"

    # -- plumbing -----------------------------------------------------------------

    def git(
        self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        # No hook runs, nothing is signed: the worktrees, commits and merges made here are
        # plumbing (a repository's post-checkout hook failing in a fresh worktree, or a
        # signing key asking for its passphrase, would stop the loop).
        plumbing = ["-c", f"core.hooksPath={os.devnull}", "-c", "commit.gpgSign=false"]
        return subprocess.run(
            ["git", *plumbing, "-C", str(cwd or self.workdir), *args],
            capture_output=True,
            text=True,
            check=False,
            errors="replace",
            env={**os.environ, **self._identity(), **(env or {})},
            stdin=subprocess.DEVNULL,
        )

    def must(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
        out = self.git(*args, cwd=cwd, env=env)
        if out.returncode != 0 and self._stale_lock_removed(out.stderr):
            out = self.git(*args, cwd=cwd, env=env)  # a run killed mid-command left a lock
        if out.returncode != 0:
            detail = (out.stderr or out.stdout).strip().splitlines()
            raise BlockedError(
                f"git {' '.join(args[:3])} failed in {cwd or self.workdir} for the parallel "
                f"items of {self.item}: {detail[0] if detail else f'exit {out.returncode}'}"
            )
        return out.stdout.strip()

    def _stale_lock_removed(self, stderr: str) -> bool:
        """Remove a lock file git names as left behind, if it is one of this repository's.

        The item's run lock is held, so no other phasegate run works here; a lock
        file git complains about was left by a run that was killed mid-command.
        """
        found = _LOCK.search(stderr)
        if found is None:
            return False
        lock = Path(found.group(1))
        if not lock.resolve().is_relative_to(self._common_dir()):
            return False
        lock.unlink(missing_ok=True)
        return True

    def _identity(self) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": "phasegate",
            "GIT_AUTHOR_EMAIL": "phasegate@localhost",
            "GIT_COMMITTER_NAME": "phasegate",
            "GIT_COMMITTER_EMAIL": "phasegate@localhost",
            "GIT_AUTHOR_DATE": self.date,
            "GIT_COMMITTER_DATE": self.date,
        }

    def _pathspec(self) -> list[str]:
        return ["--", ".", *(f":(exclude){p}" for p in self.exclude)]

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.git("merge-base", "--is-ancestor", older, newer).returncode == 0

    # -- the base -----------------------------------------------------------------

    def snapshot(self) -> str:
        """A commit of the work tree as it is now (HEAD when nothing differs)."""
        head = self.git("rev-parse", "--verify", "-q", "HEAD^{commit}").stdout.strip()
        if not head:
            raise BadInputError(
                f"{self.item}: a parallel foreach runs its items in git worktrees, and "
                f"{self.workdir} has no commit to start them from: commit first (or run "
                "with --jobs 1, or set isolation: none)"
            )
        with tempfile.TemporaryDirectory(prefix="phasegate-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.must("read-tree", "HEAD", env=env)
            self.must("add", "-A", *self._pathspec(), env=env)
            tree = self.must("write-tree", env=env)
        if tree == self.must("rev-parse", "HEAD^{tree}"):
            base = head
        else:
            base = self.must(
                "commit-tree",
                tree,
                "-p",
                head,
                "-m",
                f"phasegate: the work tree of {self.item} before its parallel items",
            )
        self.must("update-ref", f"{self.ref_base}/base", base)
        return base

    # -- one item's worktree --------------------------------------------------------

    def branch(self, key: str) -> str:
        return f"{BRANCH_PREFIX}/{slug(self.item)}/{self.node}/{slug(key)}"

    def path(self, key: str, suffix: str = "") -> Path:
        name = f"{slug(self.item)}--{self.node}--{slug(key)}{suffix}"
        return self.repo / CONFIG_DIR / WORKTREES_DIR / name

    def _ignore_worktrees(self) -> None:
        ignore = self.repo / CONFIG_DIR / WORKTREES_DIR / ".gitignore"
        if not ignore.exists():
            ignore.parent.mkdir(parents=True, exist_ok=True)
            ignore.write_text("*\n", encoding="utf-8")

    def _checkout_ok(self, path: Path) -> bool:
        out = self.git("rev-parse", "--show-toplevel", cwd=path)
        return out.returncode == 0 and Path(out.stdout.strip()).resolve() == path.resolve()

    def _drop(self, path: Path) -> None:
        """Remove a worktree (or what is left of one) and git's record of it."""
        admin = self._admin(path)
        if not path.exists() and admin is None:
            return
        foreign = self._foreign_branch(path)
        if foreign is not None:
            raise BlockedError(
                f"{self.item}: {path} is in the way of its parallel items: it is the worktree "
                f"of branch {foreign}, not one of theirs, and is not removed; move its work "
                f"elsewhere and remove it (git worktree remove {path}), then run again: "
                f"phasegate run {self.item}"
            )
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
        # Twice forced: a worktree whose creation was killed is still marked locked.
        self.git("worktree", "prune", cwd=self.repo)
        if admin is not None and admin.exists():
            shutil.rmtree(admin, ignore_errors=True)

    def _made(self, path: Path) -> bool:
        """Whether git made the worktree at ``path`` in full (its record is there, no longer
        locked as a worktree whose making was killed is)."""
        admin = self._admin(path)
        return admin is not None and not (admin / "locked").exists()

    def _gone(self, path: Path) -> BlockedError:
        """The error for the worktree at ``path``, of one of the items, removed while the
        item was under way: what is lost, and how to go on without it."""
        key = path.name.removeprefix(f"{slug(self.item)}--{self.node}--")
        branch = f"{BRANCH_PREFIX}/{slug(self.item)}/{self.node}/{key}"
        where = shlex.quote(str(path))
        return BlockedError(
            f"{self.item}: the worktree {path} was removed while {key} was under way, and "
            f"with it what its agents did there since its start; to go on from there without "
            f"that work, make it again (rm -rf {where}; git worktree prune; git worktree add "
            f"{where} {branch}), then run again: phasegate run {self.item}"
        )

    def _foreign_branch(self, path: Path) -> str | None:
        """The branch checked out at ``path`` when it is not a branch of parallel items
        (an item's own worktree, say): never removed to make room for one of theirs."""
        for listed, branch in _listed_worktrees(self.repo):
            if listed.resolve() == path.resolve() and branch is not None:
                heads = "refs/heads/"
                short = branch[len(heads) :] if branch.startswith(heads) else branch
                return None if short.startswith(f"{BRANCH_PREFIX}/") else short
        return None

    def _admin(self, path: Path) -> Path | None:
        """git's record of the worktree at ``path`` (``.git/worktrees/NAME``), if any."""
        common = self._common_dir()
        folder = common / "worktrees" / path.name
        return folder if folder.is_dir() else None

    def _common_dir(self) -> Path:
        if not hasattr(self, "_common"):
            found = self.must("rev-parse", "--git-common-dir", cwd=self.repo)
            self._common = (self.repo / found).resolve()
        return self._common

    def prepare(self, key: str, start: str, reuse: bool) -> Path:
        """The worktree of ``key`` on its branch, starting at ``start``.

        With ``reuse`` (the item was started before and not finished) a worktree
        that is still a working checkout is kept as it is, with the agents' work
        in it; a half-made one is removed and made again from its branch.
        """
        path, branch = self.path(key), self.branch(key)
        self._ignore_worktrees()
        if reuse and path.is_dir():
            if self._checkout_ok(path):
                return path
            if (path / ".git").is_file():
                # A moved repository leaves git's absolute links pointing at the old place.
                # (Not without its .git file: a folder made again by hand is no checkout,
                # and made one, every file it lacks would count as deleted.)
                self.git("worktree", "repair", str(path), cwd=self.repo)
                if self._checkout_ok(path):
                    return path
        if reuse and self._made(path):
            # Made in full, then removed (by hand): the agents' work in it is gone, and
            # making it again silently would let the item end "done" without it.
            raise self._gone(path)
        self._drop(path)
        if reuse and self.is_ancestor(start, f"refs/heads/{branch}"):
            self.must("worktree", "add", "-q", str(path), branch, cwd=self.repo)
        else:
            self.must("worktree", "add", "-q", "-B", branch, str(path), start, cwd=self.repo)
        return path

    def commit(self, path: Path, message: str) -> str:
        """Commit everything the item changed (phasegate's files aside); the commit's id.

        Committing twice is harmless: with nothing new, the branch head is returned.
        """
        if not (path.is_dir() and self._checkout_ok(path)):
            # git would look up the main checkout instead, and find the folder ignored.
            raise self._gone(path)
        self.must("add", "-A", *self._pathspec(), cwd=path)
        made = self.git("commit", "-q", "--no-verify", "-m", message, cwd=path)
        if made.returncode != 0 and self.git("diff", "--cached", "--quiet", cwd=path).returncode:
            self.must("commit", "-q", "--no-verify", "-m", message, cwd=path)  # says why
        return self.must("rev-parse", "HEAD", cwd=path)

    def remove_worktree(self, name: str) -> None:
        self._drop(self.path(name))

    def remove(self, key: str) -> None:
        self._drop(self.path(key))

    def remove_all(self, keys: list[str]) -> None:
        """Remove the worktrees and branches of ``keys`` (their work is merged), and the
        fan-out's ``base`` and ``merged`` refs: called once the merged work has landed in
        the work tree, so they hold nothing the work tree lacks (an item not listed keeps
        its branch, its work unmerged)."""
        for key in keys:
            path = self.path(key)
            if path.exists():
                shutil.rmtree(path, ignore_errors=True)
        self.git("worktree", "prune", cwd=self.repo)
        branches = [self.branch(k) for k in keys]
        for start in range(0, len(branches), 100):
            self.git("branch", "-D", *branches[start : start + 100], cwd=self.repo)
        for name in ("base", "merged"):
            self.git("update-ref", "-d", f"{self.ref_base}/{name}")

    # -- merges -----------------------------------------------------------------------

    def merge(self, ours: str, theirs: str, message: str) -> Merge:
        """``theirs`` merged into ``ours`` without a work tree (the same inputs, the same
        commit); or the files that conflict."""
        base = self.git("merge-base", ours, theirs).stdout.strip()
        if base == theirs:
            return Merge(ours)
        if base == ours:
            return Merge(theirs)
        out = self.git("merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs)
        lines = out.stdout.strip().splitlines()
        if out.returncode == 1 and lines:
            return Merge(None, tuple(dict.fromkeys(lines[1:])))
        if out.returncode != 0 or not lines:
            self.must("merge-tree", "--write-tree", ours, theirs)  # raises with git's message
        commit = self.must("commit-tree", lines[0], "-p", ours, "-p", theirs, "-m", message)
        return Merge(commit)

    def merge_all(self, start: str, commits: list[str], message: str) -> Merge:
        """``commits`` merged into ``start`` one after another (stops at a conflict)."""
        head = start
        for commit in commits:
            merged = self.merge(head, commit, message)
            if merged.commit is None:
                return Merge(None, merged.conflicts)
            head = merged.commit
        return Merge(head)

    def conflict_worktree(self, name: str, ours: str, theirs: str) -> tuple[Path, list[str]]:
        """A worktree at ``ours`` with ``theirs`` merged in and the conflicts left in the files.

        Kept across runs: when it is still mid-merge (or the merge was committed there)
        it is reused as it is.
        """
        path = self.path(name)
        self._ignore_worktrees()
        if path.is_dir() and self._checkout_ok(path):
            if self.merging(path, theirs):
                return path, self.unmerged(path)
            if self.resolved_merge(path, ours, theirs) is not None:
                return path, []
        self._drop(path)
        self.must("worktree", "add", "-q", "--detach", str(path), ours, cwd=self.repo)
        self.git("merge", "--no-ff", "--no-commit", theirs, cwd=path)
        return path, self.unmerged(path)

    def resolved_merge(self, path: Path, ours: str, theirs: str) -> str | None:
        """The merge commit of ``theirs`` into ``ours`` already made in ``path``, if any."""
        out = self.git("rev-parse", "HEAD", "HEAD^1", "HEAD^2", cwd=path)
        lines = out.stdout.split()
        if out.returncode == 0 and len(lines) == 3 and lines[1:] == [ours, theirs]:
            return lines[0]
        # Committed there by hand, then more commits on top: both sides are in HEAD.
        head = self.git("rev-parse", "-q", "--verify", "HEAD", cwd=path).stdout.strip()
        if (
            head
            and head not in (ours, theirs)
            and not self.merging(path)
            and self.is_ancestor(ours, head)
            and self.is_ancestor(theirs, head)
        ):
            return head
        return None

    def merging(self, path: Path, theirs: str | None = None) -> bool:
        """Whether a merge (of ``theirs``, when given) is under way in ``path``: not
        committed, aborted (``git merge --abort``) or reset away."""
        out = self.git("rev-parse", "-q", "--verify", "MERGE_HEAD", cwd=path)
        return out.returncode == 0 and (theirs is None or out.stdout.strip() == theirs)

    def unmerged(self, path: Path) -> list[str]:
        out = self.git("diff", "--name-only", "--diff-filter=U", cwd=path)
        return [line for line in out.stdout.splitlines() if line.strip()]

    def fingerprints(self, path: Path, files: list[str]) -> dict[str, str | None]:
        """The content hash of each of ``files`` (``None`` when absent)."""
        found: dict[str, str | None] = {}
        for name in files:
            try:
                found[name] = hashlib.sha1((path / name).read_bytes()).hexdigest()
            except (FileNotFoundError, IsADirectoryError):
                found[name] = None
        return found

    def still_conflicted(
        self, path: Path, files: list[str], initial: dict[str, str | None]
    ) -> list[str]:
        """Which of ``files`` are not resolved yet: they hold conflict markers, or git still
        marks them unmerged and nobody has touched them since (a conflict without markers,
        such as one side deleting the file, is never taken as resolved)."""
        unmerged = set(self.unmerged(path))
        now = self.fingerprints(path, files)
        left = []
        for name in files:
            try:
                marked = bool(_MARKER.search((path / name).read_bytes()))
            except (FileNotFoundError, IsADirectoryError):
                marked = False
            if marked or (name in unmerged and now.get(name) == initial.get(name)):
                left.append(name)
        return left

    def finish_merge(self, path: Path, message: str) -> str:
        """Commit a resolved merge in its worktree; the merge commit's id."""
        self.must("add", "-A", *self._pathspec(), cwd=path)
        self.must("commit", "-q", "--no-verify", "-m", message, cwd=path)
        return self.must("rev-parse", "HEAD", cwd=path)

    # -- landing ------------------------------------------------------------------------

    def record_merged(self, commit: str) -> None:
        self.must("update-ref", f"{self.ref_base}/merged", commit)

    def apply(
        self,
        base: str,
        merged: str,
        landed: Callable[[], Mapping[str, Mapping[str, Any]]] | None = None,
        landing: Callable[[str, str, bool], None] | None = None,
    ) -> dict[str, str | None]:
        """Put the difference between ``base`` and ``merged`` into the work tree.

        Applying twice is harmless (what is already in place is left alone). When
        the work tree was changed meanwhile, the merged work is put in file by file,
        as a three-way merge with the work tree's version: a file changed on one
        side only takes that side; a text file changed on both is merged, its
        overlapping changes left between conflict markers. The files left in
        conflict are returned, each with its content's hash and its index entry's when
        it holds no markers (a binary file, or one side deleting it: it was left as it was).

        A three-way merge is not idempotent (merged again, an insertion can be
        doubled, or conflict with itself): ``landing(file, hash, conflicted)`` is told
        of each one before its file is written, and ``landed()`` gives those told
        before (``{file: {"sha": hash, "conflict": bool}}``, from a run killed while
        landing): a file whose content still has the hash it was given is left as it is.
        """
        if base == merged:
            return {}
        diff = self.git("diff", "--binary", base, merged, *self._pathspec()).stdout
        if not diff.strip():
            return {}
        check = subprocess.run(
            ["git", "-C", str(self.workdir), "apply", "--check", "--whitespace=nowarn", "-"],
            input=diff,
            capture_output=True,
            text=True,
            check=False,
        )
        if check.returncode != 0:
            return self._apply_by_file(base, merged, landed() if landed else {}, landing)
        subprocess.run(
            ["git", "-C", str(self.workdir), "apply", "--whitespace=nowarn", "-"],
            input=diff,
            capture_output=True,
            text=True,
            check=True,
        )
        return {}

    def _blob(self, commit: str, name: str) -> bytes | None:
        out = subprocess.run(
            ["git", "-C", str(self.workdir), "cat-file", "blob", f"{commit}:{name}"],
            capture_output=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        return out.stdout if out.returncode == 0 else None

    def _apply_by_file(
        self,
        base: str,
        merged: str,
        landed: Mapping[str, Mapping[str, Any]],
        landing: Callable[[str, str, bool], None] | None,
    ) -> dict[str, str | None]:
        listed = self.must(
            "diff", "--name-only", "-z", "--no-renames", base, merged, *self._pathspec()
        )
        conflicts: dict[str, str | None] = {}
        for name in (n for n in listed.split("\0") if n):
            old, new = self._blob(base, name), self._blob(merged, name)
            target = self.workdir / name
            try:
                now: bytes | None = target.read_bytes() if target.exists() else None
            except (IsADirectoryError, PermissionError):
                conflicts[name] = "unreadable"
                continue
            if now == new:
                continue
            before = landed.get(name)
            if before is not None and before.get("sha") == _sha(now):
                if before.get("conflict"):  # merged by the run killed while landing
                    conflicts[name] = None
                continue
            if now == old:
                self._put(target, new)
                if new is not None and self._executable(merged, name):
                    target.chmod(target.stat().st_mode | 0o111)
                continue
            texts = [b for b in (now, old, new) if b is not None]
            if (
                len(texts) == 3
                and not any(b"\0" in b for b in texts)
                and not (now is not None and _MARKER.search(now))
            ):
                merged_text, clean = self._merge_file(now, old, new)  # type: ignore[arg-type]
                if landing is not None:
                    landing(name, _sha(merged_text), not clean)
                target.write_bytes(merged_text)
                crash_point("fanout.landed_file")
                if not clean:
                    conflicts[name] = None
                continue
            if now is not None and _MARKER.search(now):
                conflicts[name] = None
            else:
                # Left as the work tree had it: resolved once changed, or once a person
                # keeps it as it is with git add (or git rm).
                conflicts[name] = f"{_sha(now)}|{self._index_entry(name)}"
        return conflicts

    def _index_entry(self, name: str) -> str:
        """A hash of the work tree's index entry for ``name`` (mode, blob, stage)."""
        out = self.git("ls-files", "-s", "--", name)
        return hashlib.sha1(out.stdout.encode()).hexdigest()[:12]

    def _executable(self, commit: str, name: str) -> bool:
        listed = self.git("ls-tree", commit, "--", name).stdout
        return listed.startswith("100755 ")

    def _put(self, target: Path, content: bytes | None) -> None:
        if content is None:
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)

    def _merge_file(self, ours: bytes, base: bytes, theirs: bytes) -> tuple[bytes, bool]:
        """A three-way merge of one file's contents; the result and whether it is clean."""
        with tempfile.TemporaryDirectory(prefix="phasegate-merge-") as tmp:
            files = []
            for label, content in (("ours", ours), ("base", base), ("theirs", theirs)):
                path = Path(tmp) / label
                path.write_bytes(content)
                files.append(str(path))
            out = subprocess.run(
                [
                    "git",
                    "merge-file",
                    "-p",
                    "-L",
                    "work tree",
                    "-L",
                    "base",
                    "-L",
                    "parallel items",
                    *files,
                ],
                capture_output=True,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        if out.returncode < 0 or out.returncode > 127:
            raise BlockedError(
                f"{self.item}: git merge-file failed putting the merged work of its "
                f"parallel items into {self.workdir}: {out.stderr.decode(errors='replace')}"
            )
        return out.stdout, out.returncode == 0

    def unresolved(self, conflicts: dict[str, str | None]) -> list[str]:
        """Which of the files :meth:`apply` left in conflict still are: they hold conflict
        markers, or (left as they were) nobody has changed them, nor git added (or git rm'd)
        them, since."""
        left = []
        for name, fingerprint in conflicts.items():
            target = self.workdir / name
            try:
                now: bytes | None = target.read_bytes()
            except FileNotFoundError:
                now = None
            except (IsADirectoryError, PermissionError):
                left.append(name)
                continue
            marked = now is not None and bool(_MARKER.search(now))
            content, _, index = (fingerprint or "").partition("|")
            untouched = (
                fingerprint is not None
                and content == _sha(now)
                and (not index or index == self._index_entry(name))
            )
            if marked or untouched:
                left.append(name)
        return left


def _sha(content: bytes | None) -> str:
    return hashlib.sha1(content).hexdigest() if content is not None else ""


# -- worktrees left behind ------------------------------------------------------------


@dataclass(frozen=True)
class TaskWorktrees:
    """The git worktrees and branches of one work item's parallel items still in a
    repository (paths relative to it)."""

    paths: tuple[str, ...]
    branches: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.paths or self.branches)


#: While :func:`git_listings_once` is held: what git listed, by repository and listing.
_LISTED: dict[tuple[str, str], Any] | None = None


@contextmanager
def git_listings_once() -> Iterator[None]:
    """While held, git's worktree list and phasegate's task branches are read once per
    repository, for a read-only command that looks at every item (``status --json``: two
    git processes in all, not two per ended item)."""
    global _LISTED
    before = _LISTED
    _LISTED = {}
    try:
        yield
    finally:
        _LISTED = before


def _listed_worktrees(repo: Path) -> list[tuple[Path, str | None]]:
    key = (str(repo), "worktrees")
    if _LISTED is not None and key in _LISTED:
        return list(_LISTED[key])
    out = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list", "--porcelain"],
        capture_output=True,
        text=True,
        check=False,
        errors="replace",
        stdin=subprocess.DEVNULL,
    )
    found: list[tuple[Path, str | None]] = []
    for block in out.stdout.split("\n\n"):
        fields = dict(line.split(" ", 1) for line in block.splitlines() if " " in line)
        if "worktree" in fields:
            found.append((Path(fields["worktree"]), fields.get("branch")))
    if _LISTED is not None:
        _LISTED[key] = list(found)
    return found


def _task_branches(repo: Path, heads: str) -> list[str]:
    """The short names of the branches under ``heads`` (``refs/heads/.../``), in git's
    order; read for all the task branches at once while :func:`git_listings_once` is held."""
    if _LISTED is None:
        return _for_each_ref(repo, "%(refname:short)", heads).split()
    key = (str(repo), "branches")
    if key not in _LISTED:
        listed = _for_each_ref(repo, "%(refname) %(refname:short)", f"refs/heads/{BRANCH_PREFIX}/")
        _LISTED[key] = [line.split(" ", 1) for line in listed.splitlines() if " " in line]
    return [short for full, short in _LISTED[key] if full.startswith(heads)]


def _for_each_ref(repo: Path, fmt: str, pattern: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), "for-each-ref", f"--format={fmt}", pattern],
        capture_output=True,
        text=True,
        check=False,
        errors="replace",
        stdin=subprocess.DEVNULL,
    )
    return out.stdout


def task_worktrees(repo: Path, item: str) -> TaskWorktrees:
    """The worktrees (and branches) the parallel items of ``item`` left in ``repo``."""
    folder = (repo / CONFIG_DIR / WORKTREES_DIR).resolve()
    prefix = f"{slug(item)}--"
    heads = f"refs/heads/{BRANCH_PREFIX}/{slug(item)}/"
    paths: list[str] = []
    # No folder in .phasegate/worktrees: no task worktree to list (git is not asked).
    for path, branch in _listed_worktrees(repo) if _has_folders(folder) else []:
        if path.resolve().parent != folder:
            continue
        if branch.startswith(heads) if branch else _named_for(path.name, prefix):
            paths.append(path.resolve().relative_to(repo.resolve()).as_posix())
    return TaskWorktrees(tuple(paths), tuple(_task_branches(repo, heads)))


#: What follows ``ITEM--`` in the name of a worktree of ITEM's parallel items: ``NODE--KEY``
#: (a node id never holds ``--``; ``KEY`` is taken to hold none either).
_NODE_AND_KEY = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*--(?:(?!--)[A-Za-z0-9._-])+")


def _named_for(name: str, prefix: str) -> bool:
    """Whether a worktree without a branch (a conflict's) named ``name`` is one of the item
    whose names start with ``prefix`` (``ITEM--``): not one of an item named ``ITEM--MORE``."""
    return name.startswith(prefix) and _NODE_AND_KEY.fullmatch(name[len(prefix) :]) is not None


def _has_folders(folder: Path) -> bool:
    """Whether ``folder`` (where task worktrees are made) holds any folder."""
    try:
        with os.scandir(folder) as entries:
            return any(entry.is_dir(follow_symlinks=False) for entry in entries)
    except OSError:
        return False


def task_worktree_owner(repo: Path, name: str) -> str | None:
    """The item slug whose parallel items made the worktree named ``name``, if it is one."""
    folder = (repo / CONFIG_DIR / WORKTREES_DIR).resolve()
    for path, branch in _listed_worktrees(repo):
        if path.resolve().parent != folder or path.name != name:
            continue
        head = f"refs/heads/{BRANCH_PREFIX}/"
        if branch and branch.startswith(head):
            return branch[len(head) :].split("/", 1)[0]
        if name.count("--") >= 2:
            return name.rsplit("--", 2)[0]  # ITEM--NODE--KEY, ITEM itself may hold "--"
    return None


def task_refs(repo: Path, item: str) -> list[str]:
    """The refs the parallel loops of ``item`` keep while under way
    (``refs/phasegate/ITEM/NODE/base`` and ``.../merged``): left behind by a loop its
    item never finished (the item went on past it, or ended), hidden from ``git branch``."""
    return _for_each_ref(repo, "%(refname)", f"{REF_PREFIX}/{slug(item)}/").split()


def remove_task_refs(repo: Path, refs: list[str]) -> None:
    """Delete ``refs`` (see :func:`task_refs`)."""
    for ref in refs:
        subprocess.run(
            ["git", "-C", str(repo), "update-ref", "-d", ref], capture_output=True, check=False
        )


def remove_task_worktrees(repo: Path, found: TaskWorktrees) -> None:
    """Remove the worktrees and branches of ``found`` (and git's records of them)."""
    for rel in found.paths:
        shutil.rmtree(repo / rel, ignore_errors=True)
    subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True, check=False)
    branches = list(found.branches)
    for start in range(0, len(branches), 100):
        subprocess.run(
            ["git", "-C", str(repo), "branch", "-D", *branches[start : start + 100]],
            capture_output=True,
            check=False,
        )
