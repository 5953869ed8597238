"""Dispatch rules (seed 003): core agents, context_files, copilot-instructions.md, and what
``phasegate status``, ``decisions`` and the SessionStart hook say about a waiting gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from team_helpers import (
    DESCRIPTION,
    ITEM,
    SESSION,
    cli,
    in_process,
    make_team_repo,
    part,
    run_through,
    status_json,
    task_entries,
    task_json,
    tasks_yaml,
    team_repo_api,
    team_script,
)

from phasegate.engine.plugin_api import PluginContext
from phasegate.errors import WaitingForHuman
from phasegate.team.done import agents_missing

GATES = {"UD_APPROVE_DESIGN": "approved", "UD_REVIEW_STRATEGY": "per-batch"}


def _calm_tasks() -> list[dict[str, Any]]:
    """Two tasks no rule makes QA or Security apply to (documentation only, no risk)."""
    tasks = task_entries()
    tasks[0].update(
        title="Describe the limit", goal="Explain it", risk_flags=["none"], files=["docs/a.md"]
    )
    return tasks


def test_full_run_dispatches_every_core_agent_verified_from_the_journal(tmp_path: Path) -> None:
    """Dispatch rules: every core agent runs at least once in a full run ("Security can be
    OK no findings, but must be run"): when no task needed QA or Security, the final pass
    runs them; the Definition of Done checks the journal for all nine."""
    script = team_script()
    calm = _calm_tasks()
    script["planner"]["plan"] = [{"write": {"{item_dir}/tasks.yaml": tasks_yaml(calm)}}]
    script["coder"]["code:T1"][0]["write"]["{item_dir}/tasks.yaml"] = tasks_yaml(
        calm, T1="implemented"
    )
    script["coder"]["code:T2"][0]["write"]["{item_dir}/tasks.yaml"] = tasks_yaml(
        calm, T1="completed", T2="implemented"
    )
    root = tmp_path / "repo"
    repo, agents = in_process(root, script)
    assert run_through(repo, agents, **GATES).status == "completed"
    by_role = {r.role: r.labels["path"] for r in agents.requests}
    assert by_role["qa"] == "final-qa" and by_role["security"] == "final-security"
    assert sorted(status_json(root)["agents_run"]) == sorted(
        [
            "spec-agent",
            "architect",
            "planner",
            "coder",
            "reviewer",
            "qa",
            "security",
            "integrator",
            "docs",
        ]
    )


def test_missing_core_agents_fail_the_definition_of_done() -> None:
    """Dispatch rules, verified before DONE: the journal of a session that never dispatched
    some core agents names them (lean mode needs Coder and Reviewer only)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        lean_script = team_script()
        lean_script["spec-agent"]["intake-lean"] = [
            {
                "write": {
                    **lean_script["spec-agent"]["intake"][0]["write"],
                    "{item_dir}/tasks.yaml": tasks_yaml(task_entries()[:1]),
                }
            }
        ]
        lean_script["coder"]["code:T1"][0]["write"]["{item_dir}/tasks.yaml"] = tasks_yaml(
            task_entries()[:1], T1="implemented"
        )
        lean_script["coder"]["code:T1"][0]["write"]["docs/limit.md"] = "# Limit\n"
        repo, agents = in_process(Path(folder) / "repo", lean_script, mode="lean")
        assert run_through(repo, agents).status == "completed"
        item = repo.item(ITEM)
        state = item.load()
        ctx = PluginContext(item, state, "dod-verify", None, None, {})
        assert agents_missing(ctx) == []
        state["mode"] = "full"
        assert agents_missing(ctx) == [
            "core agents never dispatched: Architect, Planner, Integrator, Docs"
        ]


def test_context_files_follow_the_matrix_and_design_specs_reach_coder_reviewer_qa(
    tmp_path: Path,
) -> None:
    """Context files enforcement: every dispatch carries context_files; a Designer's spec is
    in the Coder's, the Reviewer's and QA's (omitting it is a violation)."""
    script = team_script()
    script["designer"] = {
        "design-specs": [{"write": {"{item_dir}/design-specs/form.md": "# Form\n"}}]
    }
    root = tmp_path / "repo"
    make_team_repo(root, script)
    repo = team_repo_api(root)
    repo.new(ITEM, workflow="team", description="Show the limit on the login form")
    from phasegate.agents.scripted import ScriptedBackend

    agents = ScriptedBackend(script=script)
    run_through(repo, agents, **GATES)
    design = f"{SESSION.as_posix()}/design-specs/form.md"
    for request in agents.requests:
        files = task_json(request)["context_files"]
        assert f"{SESSION.as_posix()}/spec.md" in files or request.labels["path"] == "intake"
        if request.role in ("coder", "reviewer", "qa"):
            assert design in files, (request.role, request.labels["path"])
    security = next(r for r in agents.requests if r.role == "security")
    assert design not in task_json(security)["context_files"]
    planner = next(r for r in agents.requests if r.role == "planner")
    assert f"{SESSION.as_posix()}/architecture.md" in task_json(planner)["context_files"]


def test_copilot_instructions_reach_every_dispatch_with_the_precedence_rule(
    tmp_path: Path,
) -> None:
    """Project-level instructions: detected at session start and kept in status.json's
    runtime_flags; then every dispatch prompt says to read the file, lowest in precedence."""
    root = tmp_path / "repo"
    make_team_repo(root)
    (root / ".github").mkdir()
    (root / ".github" / "copilot-instructions.md").write_text("Use tabs.\n")
    repo = team_repo_api(root)
    repo.new(ITEM, workflow="team", description=DESCRIPTION)
    assert status_json(root)["runtime_flags"]["copilot_instructions_exists"] is True
    from phasegate.agents.scripted import ScriptedBackend

    agents = ScriptedBackend(script=team_script())
    run_through(repo, agents, **GATES)
    assert agents.requests
    for request in agents.requests:
        line = part(request, "Project instructions: .github/copilot-instructions.md")
        assert "Read .github/copilot-instructions.md before you start" in line
        assert "(4) .github/copilot-instructions.md" in line


def test_copilot_flag_missing_after_resume_is_checked_again(tmp_path: Path) -> None:
    """Project-level instructions: a status.json that lost runtime_flags makes phasegate check
    the file system again and persist the answer before the next dispatch."""
    root = tmp_path / "repo"
    repo, agents = in_process(root, team_script())
    with pytest.raises(WaitingForHuman):
        run_through(repo, agents)
    assert status_json(root)["runtime_flags"]["copilot_instructions_exists"] is False
    assert not part(agents.requests[-1], "Project instructions")
    (root / ".github").mkdir()
    (root / ".github" / "copilot-instructions.md").write_text("Use tabs.\n")
    path = root / SESSION / "status.json"
    document = json.loads(path.read_text())
    del document["runtime_flags"]
    path.write_text(json.dumps(document))
    with pytest.raises(WaitingForHuman, match="UD-REVIEW-STRATEGY"):
        run_through(repo, agents, UD_APPROVE_DESIGN="approved")
    assert status_json(root)["runtime_flags"]["copilot_instructions_exists"] is True
    planner = next(r for r in agents.requests if r.role == "planner")
    assert "Read .github/copilot-instructions.md" in part(planner, "Project instructions")


def _hook(repo: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "phasegate", "hook", "session-start"],
        cwd=repo,
        input=json.dumps({"session_id": "s", "cwd": str(repo), "source": "startup"}),
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    text: str = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    return text


def test_status_decisions_and_hook_show_the_pending_gate_and_the_answer_command(
    tmp_path: Path,
) -> None:
    """A waiting gate is visible everywhere a person or an agent looks: ``phasegate status``,
    ``phasegate decisions`` and the SessionStart hook name it and the exact command that
    answers it (the recommended choice when the gate has one)."""
    repo = make_team_repo(tmp_path / "repo")
    assert cli(repo, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0
    assert cli(repo, "run", ITEM).returncode == 3
    command = f"phasegate answer {ITEM} UD-APPROVE-DESIGN approved"
    status = cli(repo, "status", ITEM)
    assert status.returncode == 0 and command in status.stdout
    as_json = json.loads(cli(repo, "status", ITEM, "--json").stdout)
    assert as_json["currentState"] == "APPROVE_DESIGN"
    assert as_json["pendingDecisions"][0]["command"] == command
    assert as_json["nextCommand"] == command
    decisions = cli(repo, "decisions", ITEM).stdout
    assert "UD-APPROVE-DESIGN" in decisions and f"answer: {command}" in decisions
    context = _hook(repo)
    assert "Waiting for a decision: UD-APPROVE-DESIGN" in context
    assert f"Answer with: {command}" in context

    assert cli(repo, "answer", ITEM, "UD-APPROVE-DESIGN", "approved").returncode == 0
    assert cli(repo, "run", ITEM).returncode == 3
    strategy = f"phasegate answer {ITEM} UD-REVIEW-STRATEGY per-batch"  # the recommendation
    assert json.loads(cli(repo, "status", ITEM, "--json").stdout)["nextCommand"] == strategy
    assert f"Answer with: {strategy}" in _hook(repo)


def test_agents_cannot_edit_status_json_or_the_approval_history(tmp_path: Path) -> None:
    """status.json is phasegate's (agents never write it): the Claude Code guard denies an
    agent's edit of it and of approve-design-history.jsonl, and allows the session's
    artifacts the agents own."""
    from phasegate.integrations.claude_code.guard import pre_tool_use

    root = make_team_repo(tmp_path / "repo")
    assert cli(root, "new", ITEM, "-w", "team", "-d", DESCRIPTION).returncode == 0

    def write(name: str) -> dict[str, Any] | None:
        payload = {
            "hook_event_name": "PreToolUse",
            "cwd": str(root),
            "tool_name": "Write",
            "tool_input": {"file_path": str(root / SESSION / name), "content": "{}"},
        }
        found: dict[str, Any] | None = pre_tool_use(payload)
        return found

    for name in ("status.json", "approve-design-history.jsonl"):
        denied = write(name)
        assert denied is not None
        assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert write("spec.md") is None
