"""``phasegate hook session-start``: the context a Claude Code session starts with (seed 000 §4)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_code_helpers import (
    APPROVE,
    approving_script,
    cli,
    new_item,
    read_state,
    run_item,
)

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo, status_of
from phasegate.change.api import Changes
from phasegate.change.phases import ChangePhase, next_command
from phasegate.engine.state import read_state_file
from phasegate.errors import AgentError
from phasegate.integrations.claude_code.hook import next_step, session_context
from phasegate.integrations.claude_code.layout import layout_path, load_layout

REJECT = {
    "verdict": {
        "approved": False,
        "issues": [{"severity": "blocker", "description": "No problem statement"}],
        "summary": "unclear",
    }
}


def context(repo: Repo, cwd: Path | None = None) -> str:
    return session_context({"cwd": str(cwd or repo.root), "source": "startup"}, environ={})


def hook(cwd: Path, payload: dict[str, Any] | str, **env: str) -> subprocess.CompletedProcess[str]:
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return cli(cwd, "hook", "session-start", stdin=stdin, env=env)


def test_no_work_items_prints_a_valid_empty_output(repo: Repo) -> None:
    """Seed 000 §4: with no active item the hook prints valid JSON that adds nothing."""
    (repo.root / ".phasegate").mkdir()
    result = hook(repo.root, {"session_id": "s", "cwd": str(repo.root), "source": "startup"})
    assert (result.returncode, json.loads(result.stdout), result.stderr) == (0, {}, "")


def test_one_active_item_shows_workflow_phase_iterations_and_next_command(repo: Repo) -> None:
    """Seed 000 §4: the session learns the item's phase and the next command to run."""
    new_item(repo, "rate-limit", description="Add rate limiting")
    run_item(repo, "rate-limit", until="specify")
    result = hook(repo.root, {"session_id": "s", "cwd": str(repo.root), "source": "startup"})
    output = json.loads(result.stdout)["hookSpecificOutput"]
    text = output["additionalContext"]
    assert result.returncode == 0 and output["hookEventName"] == "SessionStart"
    assert "## rate-limit (workflow feature, mode standard)" in text
    assert "- Request: Add rate limiting" in text
    assert "- Phase: specify; next phase: design" in text
    assert "- Review iterations so far: 2" in text
    assert "- Next command: phasegate run rate-limit" in text
    assert "WARNING" not in text


def test_only_active_items_are_listed(repo: Repo) -> None:
    """Seed 000 §4 "only show active features": completed items are left out."""
    for name in ("done-one", "open-one", "done-two"):
        new_item(repo, name)
    run_item(repo, "done-one")
    run_item(repo, "done-two")
    text = context(repo)
    assert read_state(repo.root, "done-one")["status"] == "completed"
    assert text.startswith("phasegate: 1 active work item in ")
    assert "## open-one" in text
    assert "done-one" not in text and "done-two" not in text


def test_unresolved_reviewer_concerns_are_listed(repo: Repo) -> None:
    """Seed 000 §5 f: a phase that ran out of iterations shows the reviewer's concerns."""
    new_item(repo, "vague", mode="hotfix")
    script = approving_script()
    script["chain-reviewer"] = {"brainstorm": [REJECT], "*": [APPROVE]}
    run_item(repo, "vague", script, until="brainstorm")
    assert (
        "- Review iterations so far: 1\n"
        "- Unresolved reviewer concerns (1):\n"
        "  - brainstorm: [blocker] No problem statement\n"
        "- Next command: phasegate run vague"
    ) in context(repo)


def test_phase_in_progress_shows_its_review_iteration(repo: Repo) -> None:
    """Seed 000 §5 partial phases: an interrupted phase is shown with its iteration and stage, as
    ``status`` shows it."""
    new_item(repo, "half")
    script = approving_script()
    script["chain-reviewer"] = {"brainstorm": [{"fail": "reviewer crashed"}]}
    with pytest.raises(AgentError, match="reviewer crashed"):
        run_item(repo, "half", script)
    assert (
        "- Phase: brainstorm, stopped (review iteration 1 of 3, at review); no run is going "
        "on, the next run resumes it (the last run failed: chain-reviewer failed in brainstorm"
    ) in context(repo)


def test_session_outside_the_worktree_is_warned_with_its_path(repo: Repo) -> None:
    """TD4: a session started elsewhere is told where the item's worktree is."""
    new_item(repo, "wt", worktree=True)
    worktree = (repo.root / ".phasegate/worktrees/wt").resolve()
    text = context(repo)
    assert f"- Worktree: {worktree} (branch phasegate/wt)" in text
    assert (
        f"WARNING: this session's directory {repo.root.resolve()} is not the worktree of work "
        f"item wt. Work on wt belongs in {worktree} (cd {worktree})."
    ) in text


def test_session_inside_the_worktree_gets_the_items_without_a_warning(repo: Repo) -> None:
    """TD4: no warning when the session already works in the worktree (or below it)."""
    new_item(repo, "wt", worktree=True)
    inside = repo.root / ".phasegate/worktrees/wt"
    (inside / "src").mkdir()
    text = context(repo, inside / "src")
    assert "## wt (workflow feature" in text
    assert "WARNING" not in text


def test_corrupt_state_file_becomes_a_line_and_the_hook_still_succeeds(repo: Repo) -> None:
    """Architecture principle 4 for the hook: a corrupt state file never fails the session.
    ``.meta.json`` is written from ``.engine.json``: the item is shown from the engine's
    state, with a line saying the next run writes the broken file again."""
    new_item(repo, "good")
    new_item(repo, "broken")
    state = repo.root / "docs/features/broken/.meta.json"
    state.write_text('{"id": "broken", "status": ')
    result = hook(repo.root, {"cwd": str(repo.root)})
    text = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert result.returncode == 0
    assert (
        "- docs/features/broken/.meta.json cannot be read (Expecting value: "
        "line 1 column 28 (char 27)); phasegate writes it from .engine.json, and the next "
        "run writes it again."
    ) in text
    assert "## broken" in text and "- Next command: phasegate run broken" in text
    assert "## good" in text
    assert state.read_text() == '{"id": "broken", "status": '


def test_a_renamed_item_folder_is_named_not_shown_under_its_folder_name(repo: Repo) -> None:
    """A folder renamed by hand holds another item's state: the context says so, and never
    gives a command naming the folder's item that does not exist."""
    new_item(repo, "rl")
    (repo.root / "docs/features/rl").rename(repo.root / "docs/features/rl3")
    shutil.rmtree(repo.root / ".phasegate" / "cache", ignore_errors=True)
    text = context(repo)
    assert "it holds work item 'rl', not 'rl3'" in text
    assert "rename it back to rl" in text
    assert "Next command: phasegate run rl" not in text


@pytest.mark.parametrize("cache", ["kept", "deleted"])
def test_a_corrupt_engine_state_is_named_not_the_view_file_beside_it(
    repo: Repo, cache: str
) -> None:
    """With `.engine.json` broken and `.meta.json` whole, the line named `.meta.json` and
    told the session to restore that healthy file."""
    new_item(repo, "good")
    new_item(repo, "broken")
    engine = repo.root / "docs/features/broken/.engine.json"
    engine.write_text("{broken")
    if cache == "deleted":
        shutil.rmtree(repo.root / ".phasegate" / "cache")
    text = context(repo)
    assert "- Its state file docs/features/broken/.engine.json cannot be read" in text
    assert "git checkout -- docs/features/broken/.engine.json" in text
    assert "docs/features/broken/.meta.json" not in text
    assert engine.read_text() == "{broken"


@pytest.mark.parametrize("scenario", ["new", "mid-workflow", "blocked", "in-progress"])
def test_next_command_and_block_match_phasegate_status(repo: Repo, scenario: str) -> None:
    """Seed 000 §4 "next command": the hook mirrors ``phasegate status``: same next command, same
    hard block."""
    item = new_item(repo, "x")
    script = approving_script()
    if scenario == "mid-workflow":
        run_item(repo, "x", until="design")
    elif scenario == "blocked":
        run_item(repo, "x", until="create-plan")
        (item.item_dir / "plan.md").unlink()  # create-tasks needs it (hard prerequisite)
    elif scenario == "in-progress":
        script["chain-reviewer"] = {"brainstorm": [{"fail": "down"}]}
        with pytest.raises(AgentError, match="down"):
            run_item(repo, "x", script)
    expected = status_of(item, item.load())
    workflow = load_layout(repo.root)["workflows"]["feature"]
    brief = read_state_file(item.item_dir / ".engine.json").to_dict()["brief"]
    step = next_step("x", workflow, brief, item.item_dir)
    assert (step["command"], step["blocked"], step["next_phase"]) == (
        expected["nextCommand"],
        expected["blocked"],
        expected["nextPhase"],
    )
    if scenario == "blocked":
        assert step["blocked"] and step["command"].startswith("fix the block")


TINY_WORKFLOW = """\
name: tiny
items_dir: work/tiny
state_file: state.json
modes:
  standard: {max_iterations: 2}
roles:
  executor: {access: write}
  reviewer: {access: read-only}
phases:
  - {name: draft, artifact: draft.md, executor: executor, reviewer: reviewer}
  - {name: done, kind: finish}
"""


def add_tiny_workflow(root: Path, text: str = TINY_WORKFLOW) -> None:
    """A repository workflow with its own items folder and state file name."""
    prompts = root / ".phasegate/workflows/prompts/tiny"
    prompts.mkdir(parents=True)
    (prompts / "draft.md").write_text("Write {{ artifact_path }}.\n")
    (prompts / "reviewer.md").write_text("Review {{ phase }}.\n")
    (root / ".phasegate/workflows/tiny.yaml").write_text(text)


def test_items_of_a_repository_workflow_are_found(repo: Repo) -> None:
    """Seed 000 §4 "find active feature", any workflow: the cached layout follows the repo's own
    workflows, rebuilt when they change."""
    new_item(repo, "first")
    assert "tiny" not in load_layout(repo.root)["workflows"]  # cached before the change
    add_tiny_workflow(repo.root)
    Repo(repo.root).new("little", workflow="tiny")
    text = context(repo)
    assert "## little (workflow tiny, mode standard)" in text
    assert "- Phase: (not started); next phase: draft" in text
    cached = json.loads(layout_path(repo.root).read_text())
    assert cached["workflows"]["tiny"]["items_dir"] == "work/tiny"


def test_items_with_yaml_state_files_are_read(repo: Repo) -> None:
    """Seed 000 §4 for any workflow: state may be YAML (``STATE.yaml``); the hook reads that too."""
    yaml_workflow = TINY_WORKFLOW.replace(
        "state_file: state.json", "state_file: STATE.yaml\nstate_format: yaml"
    )
    add_tiny_workflow(repo.root, yaml_workflow)
    Repo(repo.root).new("yamly", workflow="tiny", description="Kept in YAML")
    assert (repo.root / "work/tiny/yamly/STATE.yaml").is_file()
    text = context(repo)
    assert "## yamly (workflow tiny, mode standard)\n- Request: Kept in YAML" in text


def test_items_of_a_workflow_with_its_own_commands_show_their_next_command(repo: Repo) -> None:
    """Seed 000 §4 for every workflow: a change (run by plan, impl, archive) shows its phase,
    where its step stands (as ``phasegate status`` says) and the command its own state
    machine names next."""
    with pytest.raises(AgentError):  # no scripted replies: the change exists, still proposed
        Changes(repo.root).plan(
            "c1", "Rename the API", backends={"default": ScriptedBackend(script={})}
        )
    assert repo.status("c1")["inProgress"]["stage"] == "execute"
    text = context(repo)
    assert (
        "## c1 (workflow change, mode standard)\n- Request: Rename the API\n"
        "- Phase: proposed, stopped (review iteration 1 of 3, at execute); no run is going "
        "on, the next run resumes it (the last run failed: proposal-author failed in proposal"
    ) in text
    assert f"\n- Next command: {next_command(ChangePhase.PROPOSED, 'c1')}" in text


def test_warm_hook_imports_no_engine_libraries(repo: Repo) -> None:
    """Seed 000 §4 runs at every session start: the hook stays off the engine's libraries,
    and off the standard library's slow imports too (typing, OpenSSL through hashlib,
    threading: 17 ms of a hook's 100)."""
    new_item(repo, "fast")
    load_layout(repo.root)  # warm the cache, as install does
    probe = (
        "import io, json, sys\n"
        "from phasegate.integrations.claude_code.hook import run_hook\n"
        f"payload = io.StringIO(json.dumps({{'cwd': {str(repo.root)!r}}}))\n"
        "out = io.StringIO()\n"
        "run_hook('session-start', payload, out)\n"
        "assert '## fast' in out.getvalue()\n"
        "heavy = {'pydantic', 'typer', 'rich', 'ruamel', 'filelock', 'click'}\n"
        "heavy |= {'typing', 'hashlib', '_hashlib', 'threading'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout.strip()) == (0, "[]"), result.stderr


def test_agents_run_by_phasegate_get_no_context(repo: Repo) -> None:
    """Seed 000 §4 informs people: an agent phasegate dispatched must not be told to drive the
    workflow it is part of."""
    new_item(repo, "busy")
    result = hook(repo.root, {"cwd": str(repo.root)}, PHASEGATE_AGENT="1")
    assert (result.returncode, json.loads(result.stdout)) == (0, {})


def test_unreadable_hook_input_falls_back_to_the_process_directory(repo: Repo) -> None:
    """Seed 000 §4 never fails the session: garbage on stdin is not an error; the hook uses its own
    working directory."""
    new_item(repo, "fallback")
    result = hook(repo.root, "this is not json")
    assert result.returncode == 0
    assert "## fallback" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
