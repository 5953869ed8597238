"""Work items with their own git worktree: created, used by agents, moved, finished."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from claude_code_helpers import (
    approving_script,
    cli,
    git,
    init_repo,
    make_repo,
    new_item,
    read_state,
    run_item,
)
from ruamel.yaml import YAML

from phasegate.api import Repo

WT = ".phasegate/worktrees/x"


class ConfirmingAsker:
    """A person at a terminal who answers yes, and the questions they were asked."""

    interactive = True

    def __init__(self) -> None:
        self.questions: list[str] = []

    def choose(self, question: str, choices: Sequence[str], default: str) -> str:
        self.questions.append(question)
        return default

    def confirm(self, question: str, default: bool) -> bool:
        self.questions.append(question)
        return True


def test_new_with_worktree_records_its_relative_path_and_branch(repo: Repo) -> None:
    """Seed 000 "track worktree location": a worktree and branch, stored relative to the repo."""
    result = cli(repo.root, "new", "x", "--worktree")
    assert result.returncode == 0, result.stderr
    assert f"Worktree: {WT} (branch phasegate/x)" in result.stdout
    state = read_state(repo.root, "x")
    assert (state["worktree"], state["branch"]) == (WT, "phasegate/x")
    assert git(repo.root / WT, "rev-parse", "--abbrev-ref", "HEAD").strip() == "phasegate/x"
    untracked = git(repo.root, "status", "--porcelain", "--untracked-files=all")
    assert ".phasegate/worktrees" not in untracked


def test_new_with_worktree_needs_a_commit_to_branch_from(tmp_path: Path) -> None:
    """Principle 4, bad input: no commit yet gives one clear line, exit 2, and no work item left
    behind."""
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    result = cli(root, "new", "x", "--worktree")
    assert result.returncode == 2
    assert "--worktree needs a commit to branch from" in result.stderr
    assert not (root / "docs/features/x/.meta.json").exists()


def test_agents_run_in_the_worktree_and_write_the_item_folder_in_the_main_checkout(
    repo: Repo,
) -> None:
    """Principle 5: agents work in the item's worktree; artifacts stay in the item folder."""
    item = new_item(repo, "x", worktree=True)
    backend, _ = run_item(repo, "x", until="implement")
    worktree = (repo.root / WT).resolve()
    assert {r.workdir for r in backend.requests} == {worktree}
    assert all(r.extra_dirs == (item.item_dir,) for r in backend.requests)
    assert (worktree / "app.py").read_text() == "print('hi')\n"
    assert not (repo.root / "app.py").exists()
    assert (item.item_dir / "spec.md").exists()
    review = next(r for r in backend.requests if r.role == "final-reviewer")
    assert "New file `app.py`:\n\n```\nprint('hi')\n```" in review.prompt_text()


def test_a_moved_repository_keeps_working_in_its_worktree(tmp_path: Path) -> None:
    """Seed 000 risk "worktree path changes": relative path, git links repaired on run."""
    old = make_repo(init_repo(tmp_path / "old"))
    new_item(old, "x", worktree=True)
    moved = tmp_path / "moved"
    shutil.move(str(old.root), str(moved))
    assert git(moved, "worktree", "list").count(str(tmp_path / "old")) >= 1  # stale links
    backend, _ = run_item(make_repo(moved), "x", until="implement")
    assert {r.workdir for r in backend.requests} == {(moved / WT).resolve()}
    assert (moved / WT / "app.py").exists()
    assert git(moved / WT, "rev-parse", "--show-toplevel").strip() == str((moved / WT).resolve())


def test_finish_without_a_terminal_names_the_branch_and_keeps_the_worktree(repo: Repo) -> None:
    """Seed 000 TD5 finish and principle 4: name the branch to merge, never drop work silently."""
    init = cli(repo.root, "init", "--test-command", "true")
    assert init.returncode == 0, init.stderr
    with open(repo.root / ".phasegate/agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert cli(repo.root, "new", "x", "--worktree").returncode == 0
    result = cli(repo.root, "run", "x")
    assert result.returncode == 0, result.stderr
    assert (
        f"worktree: To land the work: commit the 1 uncommitted change(s) in {WT}, then merge "
        "branch phasegate/x into main (git merge phasegate/x). The worktree was kept; remove "
        "it afterwards with: phasegate worktree remove x"
    ) in " ".join(result.stderr.split())
    assert (repo.root / WT / "app.py").exists()


def test_interactive_finish_offers_removal_when_nothing_can_be_lost(repo: Repo) -> None:
    """Seed 000 TD5 finish: with a terminal, a clean and merged worktree is offered for removal."""
    new_item(repo, "x", worktree=True)
    script = approving_script()
    script["executor"]["implement"] = [{"text": "nothing needed changing"}]
    asker = ConfirmingAsker()
    _, outcome = run_item(repo, "x", script, asker=asker)
    assert asker.questions == [
        f"Branch phasegate/x is merged. Remove the worktree {WT}? (the branch is kept)"
    ]
    assert outcome.message.endswith(f"worktree {WT} removed (the branch is kept).")
    assert not (repo.root / WT).exists()
    assert git(repo.root, "branch", "--list", "phasegate/x").strip() == "phasegate/x"


def test_interactive_finish_never_offers_to_remove_unmerged_work(repo: Repo) -> None:
    """Seed 000 TD5 finish: uncommitted or unmerged work is kept; the person is told what to do
    instead."""
    new_item(repo, "x", worktree=True)
    asker = ConfirmingAsker()
    _, outcome = run_item(repo, "x", asker=asker)
    assert not any("Remove the worktree" in q for q in asker.questions)
    assert "merge branch phasegate/x into main" in outcome.message
    assert (repo.root / WT / "app.py").exists()


def test_worktree_remove_refuses_unmerged_commits_unless_forced(repo: Repo) -> None:
    """Seed 000 TD5 finish: removal needs the branch merged, or an explicit --force; the branch
    always stays."""
    new_item(repo, "x", worktree=True)
    (repo.root / WT / "feature.py").write_text("x = 1\n")
    git(repo.root / WT, "add", "feature.py")
    git(repo.root / WT, "commit", "-q", "-m", "feature")
    refused = cli(repo.root, "worktree", "remove", "x")
    assert refused.returncode == 2
    assert "1 commit(s) on phasegate/x not merged into main" in refused.stderr
    assert (repo.root / WT).is_dir()
    forced = cli(repo.root, "worktree", "remove", "x", "--force")
    assert forced.returncode == 0, forced.stderr
    assert not (repo.root / WT).exists()
    assert git(repo.root, "log", "-1", "--format=%s", "phasegate/x").strip() == "feature"


def test_worktree_remove_after_merge_needs_no_force(repo: Repo) -> None:
    """Seed 000 TD5 finish: once merged, the worktree goes without --force."""
    new_item(repo, "x", worktree=True)
    (repo.root / WT / "feature.py").write_text("x = 1\n")
    git(repo.root / WT, "add", "feature.py")
    git(repo.root / WT, "commit", "-q", "-m", "feature")
    git(repo.root, "merge", "-q", "--ff-only", "phasegate/x")
    result = cli(repo.root, "worktree", "remove", "x")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Removed {WT}; branch phasegate/x is kept.\n"


def test_commands_run_inside_a_worktree_find_the_main_checkouts_items(repo: Repo) -> None:
    """Seed 000 "track worktree location": from inside an item worktree, phasegate works on the
    main checkout's items."""
    new_item(repo, "x", worktree=True)
    (repo.root / WT / "src").mkdir()
    result = cli(repo.root / WT / "src", "status", "x", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["stateFile"] == str(repo.root / "docs/features/x/.meta.json")
    assert data["worktree"] == WT


def test_removing_the_worktree_of_an_active_item_says_how_to_make_it_again(repo: Repo) -> None:
    """The item is not done: `worktree remove` used to say only "Removed", `status` went on
    advising `phasegate run x`, and the run then stopped on the missing worktree. The
    removal warns, `status` names the command that makes it again, and it works."""
    new_item(repo, "x", worktree=True)
    removed = cli(repo.root, "worktree", "remove", "x")
    assert removed.returncode == 0, removed.stderr
    again = f"git worktree add {WT} phasegate/x"
    assert f"work item 'x' is active: its next run works in {WT}; make it again first: " in (
        removed.stderr
    )
    shown = json.loads(cli(repo.root, "status", "x", "--json").stdout)
    assert shown["nextCommand"].startswith(f"git worktree prune && {again} (its worktree")
    assert shown["nextCommand"].endswith("then: phasegate run x")
    assert cli(repo.root, "worktree", "remove", "x").stdout == (
        f"{WT} is already gone; its next run needs it again: {again}.\n"
    )
    git(repo.root, "worktree", "prune")
    git(repo.root, *again.split()[1:])
    shown = json.loads(cli(repo.root, "status", "x", "--json").stdout)
    assert shown["nextCommand"] == "phasegate run x"


def test_init_from_inside_an_item_worktree_works_on_the_main_checkout(repo: Repo) -> None:
    """It wrote a config and an example workflow inside the worktree, which no other command
    reads: the next `new -w review-loop` said the workflow was unknown."""
    new_item(repo, "x", worktree=True)
    inside = repo.root / WT
    ran = cli(inside, "init", "--example", "review-loop")
    assert ran.returncode == 0, ran.stderr
    assert (repo.root / ".phasegate" / "workflows" / "review-loop.yaml").is_file()
    assert not (inside / ".phasegate" / "workflows" / "review-loop.yaml").exists()
    made = cli(inside, "new", "rl1", "-w", "review-loop", "-d", "x")
    assert made.returncode == 0, made.stderr
