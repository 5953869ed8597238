"""The ``phasegate`` command as a user runs it: real subprocesses, no terminal, real git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo


def phasegate(
    repo: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the CLI like a script would: no terminal, stdin closed."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def write_script(repo: Path, script: dict[str, object]) -> None:
    yaml = YAML(typ="safe", pure=True)
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        yaml.dump(script, handle)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An initialised repo with the approving scripted agents."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    write_script(root, approving_script())
    return root


def test_init_writes_config_and_is_idempotent(tmp_path: Path) -> None:
    """`phasegate init` writes .phasegate/config.yaml once and never overwrites it."""
    root = init_repo(tmp_path / "r")
    first = phasegate(root, "init")
    assert first.returncode == 0, first.stderr
    config = root / ".phasegate" / "config.yaml"
    before = config.read_bytes()
    assert b"roles:" in before
    second = phasegate(root, "init")
    assert second.returncode == 0 and "left unchanged" in second.stdout
    assert config.read_bytes() == before


def test_init_outside_a_git_repository_is_bad_input(tmp_path: Path) -> None:
    """Exit code 2 and one line naming the directory."""
    result = phasegate(tmp_path, "init")
    assert result.returncode == 2
    assert "not inside a git repository" in result.stderr
    assert "Traceback" not in result.stderr


def test_new_run_status_walk_the_whole_workflow(repo: Path) -> None:
    """The main user story: new, run to the end, status --json."""
    created = phasegate(
        repo,
        "new",
        "rate-limit",
        "--workflow",
        "feature",
        "--mode",
        "standard",
        "--description",
        "Add rate limiting",
    )
    assert created.returncode == 0, created.stderr
    ran = phasegate(repo, "run", "rate-limit")
    assert ran.returncode == 0, ran.stderr
    assert "▶ specify" in ran.stderr and "rate-limit complete" in ran.stderr
    status = json.loads(phasegate(repo, "status", "rate-limit", "--json").stdout)
    assert status["status"] == "completed"
    assert status["nextCommand"] is None
    assert [p["status"] for p in status["phases"]] == ["completed"] * 8


def test_status_shows_phase_iterations_concerns_and_next_command(repo: Path) -> None:
    """status: phase, next command, iterations, unresolved reviewer concerns."""
    script = approving_script()
    script["chain-reviewer"] = {
        "specify": [
            {
                "verdict": {
                    "approved": False,
                    "summary": "thin",
                    "issues": [
                        {"severity": "blocker", "description": "No criteria", "location": None}
                    ],
                }
            }
        ],
        "*": [{"verdict": {"approved": True, "issues": [], "summary": "ok"}}],
    }
    write_script(repo, script)
    phasegate(repo, "new", "x", "--mode", "quick")
    assert phasegate(repo, "run", "x", "--until", "specify").returncode == 0
    data = json.loads(phasegate(repo, "status", "x", "--json").stdout)
    assert data["currentPhase"] == "specify"
    assert data["nextPhase"] == "design"
    assert data["nextCommand"] == "phasegate run x"
    specify = next(p for p in data["phases"] if p["name"] == "specify")
    assert specify["iterations"] == 2 and specify["review"] == "concerns"
    assert data["unresolvedConcerns"] == [{"phase": "specify", "note": "[blocker] No criteria"}]
    text = phasegate(repo, "status", "x").stdout
    assert "Unresolved reviewer concerns" in text and "Next: phasegate run x" in text
    listing = phasegate(repo, "status").stdout
    assert "x" in listing and "feature" in listing


def test_implement_without_spec_is_hard_blocked(repo: Path) -> None:
    """Seed 000 interface 1: /implement without spec.md is blocked (exit 4), state unchanged."""
    phasegate(repo, "new", "x")
    state_file = repo / "docs/features/x/.meta.json"
    before = state_file.read_bytes()
    result = phasegate(repo, "run", "x", "--phase", "implement")
    assert result.returncode == 4
    assert (
        "cannot start implement: spec.md is missing or empty (hard prerequisite)" in result.stderr
    )
    assert state_file.read_bytes() == before


def test_skipping_phases_needs_confirmation_without_a_terminal(repo: Path) -> None:
    """Skipping phases warns; with no terminal and no --yes it stops as waiting (exit 3)."""
    phasegate(repo, "new", "x")
    waiting = phasegate(repo, "run", "x", "--phase", "design")
    assert waiting.returncode == 3
    assert "skipping brainstorm, specify" in waiting.stderr and "--yes" in waiting.stderr
    confirmed = phasegate(repo, "run", "x", "--phase", "design", "--yes")
    assert confirmed.returncode == 0, confirmed.stderr
    data = json.loads(phasegate(repo, "status", "x", "--json").stdout)
    design = next(p for p in data["phases"] if p["name"] == "design")
    assert design["status"] == "completed"


def test_partial_phase_continues_by_default_without_a_terminal(repo: Path) -> None:
    """Seed 000 step 2: a started phase is detected; no terminal -> the documented default."""
    script = approving_script()
    script["executor"]["specify"] = [{"fail": {"exit": 1, "error": "model overloaded"}}]
    write_script(repo, script)
    phasegate(repo, "new", "x")
    failed = phasegate(repo, "run", "x")
    assert failed.returncode == 6
    assert "failed in phase specify after 2 attempts: model overloaded" in failed.stderr
    write_script(repo, approving_script())
    resumed = phasegate(repo, "run", "x")
    assert resumed.returncode == 0, resumed.stderr
    assert "partial-phase: continue (by default)" in resumed.stderr


def test_partial_phase_fresh_and_review_choices(repo: Path) -> None:
    """--partial fresh restarts at iteration 1; --partial review skips the executor."""
    script = approving_script()
    script["chain-reviewer"] = {
        "specify": [{"fail": "reviewer down"}],
        "*": [{"verdict": {"approved": True, "summary": "ok"}}],
    }
    write_script(repo, script)
    phasegate(repo, "new", "x")
    assert phasegate(repo, "run", "x").returncode == 6
    write_script(repo, approving_script())
    log = repo / "calls.jsonl"
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "script: .phasegate/agents.yaml",
            "script: .phasegate/agents.yaml\n    calls_log: calls.jsonl",
        )
    )
    reviewed = phasegate(repo, "run", "x", "--partial", "review", "--until", "specify")
    assert reviewed.returncode == 0, reviewed.stderr
    roles = [json.loads(line)["role"] for line in log.read_text().splitlines()]
    assert roles == ["chain-reviewer"]
    bad = phasegate(repo, "run", "x", "--partial", "sideways")
    assert bad.returncode == 2 and "--partial must be one of" in bad.stderr


def test_corrupt_state_file_is_reported_and_left_untouched(repo: Path) -> None:
    """A half-written state file gives a clear error with its path (exit 5), never overwritten
    (the engine's: ``.meta.json`` is written from it, see test_item_folders.py)."""
    phasegate(repo, "new", "x")
    state_file = repo / "docs/features/x/.engine.json"
    state_file.write_text('{"id": "x", "phases": {')
    before = state_file.read_bytes()
    for args in (("run", "x"), ("status", "x")):
        result = phasegate(repo, *args)
        assert result.returncode == 5, result.stderr
        assert str(state_file) in result.stderr and "corrupt" in result.stderr
        assert "Traceback" not in result.stderr
    assert state_file.read_bytes() == before
    listing = phasegate(repo, "status")
    assert listing.returncode == 0 and "unreadable" in listing.stdout


@pytest.mark.parametrize(
    "name",
    ["../escape", "a/b", "/abs", "a\\b", "..", "bad\x07name", "", "-dash", "sp ace"],
)
def test_unsafe_work_item_names_are_rejected(repo: Path, name: str) -> None:
    """Names with separators, '..', absolute paths or control characters are bad input."""
    result = phasegate(repo, "new", "--", name)
    assert result.returncode == 2
    assert "work item name" in result.stderr
    assert not (repo / "docs").exists()


def test_new_rejects_duplicates_unknown_workflows_and_modes(repo: Path) -> None:
    """Bad input to `new` is one line and exit 2."""
    assert phasegate(repo, "new", "x").returncode == 0
    dup = phasegate(repo, "new", "x")
    assert dup.returncode == 2 and "already exists" in dup.stderr
    wf = phasegate(repo, "new", "y", "--workflow", "nope")
    assert wf.returncode == 2 and "unknown workflow 'nope'" in wf.stderr
    mode = phasegate(repo, "new", "z", "--mode", "turbo")
    assert mode.returncode == 2 and "unknown mode 'turbo'" in mode.stderr


def test_run_of_an_unknown_item_says_how_to_create_it(repo: Path) -> None:
    result = phasegate(repo, "run", "ghost")
    assert result.returncode == 2
    assert "no work item named 'ghost'" in result.stderr and "phasegate new ghost" in result.stderr


def test_an_item_asked_for_in_the_wrong_workflow_is_pointed_to_its_own(repo: Path) -> None:
    """``logs x -w team`` for an item of ``feature`` used to offer ``phasegate new x``."""
    assert phasegate(repo, "new", "x").returncode == 0
    for command in ("logs", "status", "run"):
        wrong = phasegate(repo, command, "x", "--workflow", "team")
        assert wrong.returncode == 2, wrong.stderr
        assert "no work item named 'x' in workflow 'team'" in wrong.stderr
        assert "it is an item of workflow 'feature': use --workflow feature" in wrong.stderr
        assert "phasegate new" not in wrong.stderr
    absent = phasegate(repo, "status", "y", "--workflow", "team")
    assert "create it with 'phasegate new y --workflow team'" in absent.stderr
    change = phasegate(repo, "status", "y", "--workflow", "change")
    assert 'create it with: phasegate plan y "DESCRIPTION"' in change.stderr


def test_a_second_run_on_the_same_item_is_busy(repo: Path) -> None:
    """Two phasegate processes never interleave on one item: the second exits 7 at once."""
    script = approving_script()
    script["executor"]["brainstorm"][0]["sleep"] = 5
    write_script(repo, script)
    phasegate(repo, "new", "x")
    first = subprocess.Popen(
        [sys.executable, "-m", "phasegate", "run", "x", "--until", "brainstorm"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        journal = repo / "docs/features/x/.journal.jsonl"
        for _ in range(200):
            if journal.exists() and "agent.dispatched" in journal.read_text():
                break
            subprocess.run(["sleep", "0.05"], check=True)
        second = phasegate(repo, "run", "x")
        assert second.returncode == 7
        assert "is being run by another phasegate process" in second.stderr
    finally:
        first.wait(timeout=60)
    assert first.returncode == 0


def test_workflows_lists_builtins_and_flags_a_broken_repo_workflow(repo: Path) -> None:
    (repo / ".phasegate" / "workflows").mkdir()
    (repo / ".phasegate" / "workflows" / "broken.yaml").write_text("name: broken\nphases: []\n")
    result = phasegate(repo, "workflows")
    assert result.returncode == 0
    assert "feature (built-in)" in result.stdout
    assert "broken (repo, invalid)" in result.stdout


def test_workflows_shows_each_modes_phases_in_the_order_a_run_takes(repo: Path) -> None:
    """Seed 003's state machine: full mode INTAKE -> ... -> DONE, lean mode INTAKE_LEAN ->
    IMPLEMENT_LOOP -> INTEGRATE -> DONE (not the file order of the labels)."""
    result = phasegate(repo, "workflows")
    assert result.returncode == 0, result.stderr
    full = "INTAKE → DESIGN → APPROVE_DESIGN → PLAN → REVIEW_STRATEGY → IMPLEMENT_LOOP → "
    assert f"phases (full): {full}INTEGRATE → RELEASE → DONE\n" in result.stdout
    assert "phases (lean): INTAKE_LEAN → IMPLEMENT_LOOP → INTEGRATE → DONE\n" in result.stdout
    listed = phasegate(repo, "workflows", "--json")
    (team,) = [w for w in json.loads(listed.stdout) if w["name"] == "team"]
    assert team["paths"]["lean"] == ["INTAKE_LEAN", "IMPLEMENT_LOOP", "INTEGRATE", "DONE"]


def test_config_errors_name_the_file_and_field(repo: Path) -> None:
    (repo / ".phasegate" / "config.yaml").write_text("timeouts:\n  agent: -1\n")
    result = phasegate(repo, "run", "x")
    assert result.returncode == 2
    assert "config.yaml: timeouts.agent:" in result.stderr


def test_invalid_yaml_in_the_config_is_one_line_naming_file_and_line(repo: Path) -> None:
    """A duplicate key is reported like a workflow file's: ``file:line: invalid YAML: ...``,
    without the parser's quoted lines or its advice on suppressing the check."""
    config = repo / ".phasegate" / "config.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\nroles:\n" in text  # the one `phasegate init` writes
    text += "roles:\n  executor: {backend: claude}\nroles:\n  reviewer: {backend: claude}\n"
    config.write_text(text, encoding="utf-8")
    second = [n for n, line in enumerate(text.splitlines(), start=1) if line == "roles:"][1]
    result = phasegate(repo, "status")
    assert result.returncode == 2
    (message,) = result.stderr.splitlines()
    assert message.startswith(
        f"phasegate: error: {config.resolve()}:{second}:1: invalid YAML: "
        'found duplicate key "roles"'
    )
    assert "<unicode string>" not in message and "yaml.dev" not in message


def test_help_explains_commands_and_exit_codes(repo: Path) -> None:
    result = phasegate(repo, "--help")
    assert result.returncode == 0
    for word in ("init", "new", "run", "status", "workflows", "validate", "Exit codes"):
        assert word in result.stdout
    run_help = phasegate(repo, "run", "--help").stdout
    assert "--partial" in run_help and "--no-review" in run_help and "--yes" in run_help


def test_secrets_never_reach_state_journal_history_or_prompts(repo: Path) -> None:
    """A key in the environment that an agent echoes is redacted everywhere phasegate writes."""
    secret = "sk-test-" + "s3cr3t" * 6
    script = approving_script()
    script["executor"]["brainstorm"] = [
        {
            "write": {"{item_dir}/brainstorm.md": f"# B\nkey is {secret}\n"},
            "text": f"used key {secret}",
        }
    ]
    script["chain-reviewer"] = {
        "brainstorm": [
            {
                "verdict": {
                    "approved": False,
                    "issues": [
                        {"severity": "warning", "description": f"leaked {secret}", "location": None}
                    ],
                    "summary": f"saw {secret}",
                }
            }
        ],
        "*": [{"verdict": {"approved": True, "summary": "ok"}}],
    }
    write_script(repo, script)
    config = repo / ".phasegate" / "config.yaml"
    config.write_text(
        config.read_text().replace(
            "script: .phasegate/agents.yaml",
            "script: .phasegate/agents.yaml\n    calls_log: calls.jsonl",
        )
    )
    phasegate(repo, "new", "x", "--mode", "quick")
    result = phasegate(repo, "run", "x", "--until", "brainstorm", env={"MY_API_KEY": secret})
    assert result.returncode == 0, result.stderr
    folder = repo / "docs/features/x"
    for written in (".meta.json", ".journal.jsonl", ".review-history.md"):
        text = (folder / written).read_text()
        assert secret not in text, written
        assert "[REDACTED]" in text, written
    assert secret not in result.stderr
