"""``phasegate hook pre-tool-use``: agents cannot hand-edit phasegate's state files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from claude_code_helpers import cli, new_item

from phasegate.api import Repo
from phasegate.config import Config
from phasegate.integrations.claude_code.guard import pre_tool_use


def edit(path: Path | str, cwd: Path, tool: str = "Edit") -> dict[str, Any]:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {
        "hook_event_name": "PreToolUse",
        "cwd": str(cwd),
        "tool_name": tool,
        "tool_input": {key: str(path), "old_string": "a", "new_string": "b"},
    }


def reason(answer: dict[str, Any] | None) -> str:
    assert answer is not None, "the call was allowed"
    output = answer["hookSpecificOutput"]
    assert (output["hookEventName"], output["permissionDecision"]) == ("PreToolUse", "deny")
    return str(output["permissionDecisionReason"])


def test_edit_of_a_state_file_is_denied_with_the_command_to_run(repo: Repo) -> None:
    """Seed 000 risks (hooks back up the workflow): the denial names the command to run."""
    new_item(repo, "rate-limit")
    target = repo.root / "docs/features/rate-limit/.meta.json"
    text = reason(pre_tool_use(edit(target, repo.root)))
    assert text.startswith(f"{target.resolve()} is the .meta.json of work item 'rate-limit'")
    assert "run `phasegate status rate-limit`" in text
    assert "`phasegate run rate-limit` to advance it" in text


def test_journal_and_review_history_are_guarded_for_every_file_tool(repo: Repo) -> None:
    """Seed 000 risks: Write, MultiEdit and NotebookEdit are judged like Edit, for all of an item's
    records."""
    new_item(repo, "x")
    folder = repo.root / "docs/features/x"
    for name, tool in [
        (".journal.jsonl", "Write"),
        (".engine-archive.jsonl", "Edit"),
        (".review-history.md", "MultiEdit"),
        (".meta.json", "NotebookEdit"),
    ]:
        assert f"the {name} of work item 'x'" in reason(
            pre_tool_use(edit(folder / name, folder, tool))
        )


def test_artifacts_and_other_files_may_be_edited(repo: Repo) -> None:
    """Seed 000 risks: only phasegate's records are guarded; the phase artifacts are the agent's
    work."""
    new_item(repo, "x")
    for target in ("docs/features/x/spec.md", "src/.meta.json", "README.md"):
        assert pre_tool_use(edit(repo.root / target, repo.root)) is None


def test_reading_a_state_file_is_allowed(repo: Repo) -> None:
    """Seed 000 risks, without deadlock: reading state is allowed."""
    new_item(repo, "x")
    payload = edit(repo.root / "docs/features/x/.meta.json", repo.root, tool="Read")
    assert pre_tool_use(payload) is None


def test_relative_paths_are_resolved_against_the_session_directory(repo: Repo) -> None:
    """Seed 000 risks: a relative ``file_path`` is judged where it points, not by its spelling."""
    new_item(repo, "x")
    folder = repo.root / "docs/features"
    assert "work item 'x'" in reason(pre_tool_use(edit("x/../x/.meta.json", folder)))


def test_lock_files_are_guarded(repo: Repo) -> None:
    """Seed 000 risks: anything under .phasegate/locks belongs to phasegate's processes."""
    new_item(repo, "x")
    target = repo.root / ".phasegate/locks/feature--x.lock"
    assert "under .phasegate/locks" in reason(pre_tool_use(edit(target, repo.root, "Write")))


def test_the_worktree_copy_of_a_state_file_is_guarded(repo: Repo) -> None:
    """Seed 000 risks: a state file edited in an item worktree would be merged back over the real
    one."""
    new_item(repo, "wt", worktree=True)
    copy = repo.root / ".phasegate/worktrees/wt/docs/features/wt/.meta.json"
    assert "work item 'wt'" in reason(pre_tool_use(edit(copy, copy.parent)))


def test_state_files_of_a_configured_items_dir_are_guarded(repo: Repo) -> None:
    """Seed 000 risks, any workflow: the guard follows ``workflows.<name>.items_dir`` from the
    config."""
    (repo.root / ".phasegate").mkdir()
    (repo.root / ".phasegate/config.yaml").write_text("workflows:\n  feature: {items_dir: plans}\n")
    custom = Repo(
        repo.root, Config.model_validate({"workflows": {"feature": {"items_dir": "plans"}}})
    )
    new_item(custom, "x")
    assert "work item 'x'" in reason(
        pre_tool_use(edit(repo.root / "plans/x/.meta.json", repo.root))
    )
    assert pre_tool_use(edit(repo.root / "docs/features/x/.meta.json", repo.root)) is None


def test_hook_command_denies_and_allows_through_its_json_output(repo: Repo) -> None:
    """Seed 000 risks: the console command prints the deny decision, and nothing when the call may
    go ahead."""
    new_item(repo, "x")
    denied = cli(
        repo.root,
        "hook",
        "pre-tool-use",
        stdin=json.dumps(edit(repo.root / "docs/features/x/.meta.json", repo.root)),
    )
    allowed = cli(
        repo.root,
        "hook",
        "pre-tool-use",
        stdin=json.dumps(edit(repo.root / "docs/features/x/spec.md", repo.root)),
    )
    assert denied.returncode == 0 and "work item 'x'" in reason(json.loads(denied.stdout))
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")
