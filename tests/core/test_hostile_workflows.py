"""Hostile workflow files: every path a workflow names stays in the repository (no absolute
path, no ``..``, no symlink out of it), and YAML built to exhaust phasegate (alias bombs, deep
nesting, huge files) is refused at once with a clear error and exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from phasegate.errors import ExitCode, WorkflowError
from phasegate.workflow.loader import WorkflowProblems, load_workflow

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

HEAD = """\
name: hostile
default_mode: one
modes: {one: {max_iterations: 1}}
roles: {executor: {access: write}, reviewer: {access: read-only}}
"""
PLAIN_NODES = """\
nodes:
  - {id: build, executor: executor}
  - {id: done, kind: end}
"""


def write(folder: Path, text: str, templates: dict[str, str] | None = None) -> Path:
    prompts = folder / "prompts" / "hostile"
    prompts.mkdir(parents=True, exist_ok=True)
    if templates is None:
        templates = {"build.md": "Build {{ item }}.\n"}
    for name, body in templates.items():
        (prompts / name).write_text(body)
    path = folder / "hostile.yaml"
    path.write_text(text)
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(WorkflowError) as caught:
        load_workflow(path)
    error = caught.value
    return list(error.problems) if isinstance(error, WorkflowProblems) else [str(error)]


LINEAR = """\
name: hostile
default_mode: one
modes: {one: {max_iterations: 1}}
roles: {executor: {access: write}}
phases:
  - {name: build, artifact: b.md, executor: executor}
"""

PATHS: dict[str, tuple[str, str]] = {
    "absolute history file": (
        HEAD + "view: {plugin: feature, with: {history_file: /tmp/history.md}}\n" + PLAIN_NODES,
        "view.with.history_file: '/tmp/history.md' must be a relative path inside",
    ),
    "history file climbing out": (
        HEAD + "view: {plugin: feature, with: {history_file: ../../h.md}}\n" + PLAIN_NODES,
        "view.with.history_file: '../../h.md' must be a relative path inside",
    ),
    "absolute state file": (
        HEAD + "view: {plugin: feature, with: {state_file: /etc/meta.json}}\n" + PLAIN_NODES,
        "view.with.state_file: '/etc/meta.json' must be a relative path inside",
    ),
    "absolute state file, phase list": (
        LINEAR.replace("phases:", "state_file: /tmp/state.json\nphases:"),
        "hostile.yaml:5: state_file: '/tmp/state.json' must be a relative path inside",
    ),
    "absolute history file, phase list": (
        LINEAR.replace("phases:", "history_file: /tmp/h.md\nphases:"),
        "hostile.yaml:5: history_file: '/tmp/h.md' must be a relative path inside",
    ),
    "absolute journal": (
        HEAD + "journal_file: /tmp/j.jsonl\n" + PLAIN_NODES,
        "journal_file: '/tmp/j.jsonl' must be a relative path",
    ),
    "absolute items folder": (
        HEAD + "items_dir: /tmp/items\n" + PLAIN_NODES,
        "items_dir: '/tmp/items' must be a relative path",
    ),
    "absolute prompt": (
        HEAD
        + PLAIN_NODES.replace("executor: executor}", "executor: executor, prompt: /etc/passwd}"),
        "nodes[0].prompt: prompt template '/etc/passwd' not found",
    ),
    "prompt climbing out": (
        HEAD
        + PLAIN_NODES.replace("executor: executor}", "executor: executor, prompt: ../../x.md}"),
        "nodes[0].prompt: prompt template '../../x.md' not found",
    ),
    "absolute input": (
        HEAD
        + PLAIN_NODES.replace("executor: executor}", "executor: executor, inputs: [/etc/passwd]}"),
        "nodes[0].inputs[0].file: '/etc/passwd' must be a relative path",
    ),
    "input climbing out": (
        HEAD + PLAIN_NODES.replace("executor: executor}", "executor: executor, inputs: [../../s]}"),
        "nodes[0].inputs[0].file: '../../s' must be a relative path",
    ),
    "absolute output": (
        HEAD + PLAIN_NODES.replace("executor: executor}", "executor: executor, outputs: [/tmp/o]}"),
        "nodes[0].outputs[0].file: '/tmp/o' must be a relative path",
    ),
    "absolute check directory": (
        HEAD
        + PLAIN_NODES.replace(
            "executor: executor}", "executor: executor, checks: [{name: t, run: 'true', cwd: /}]}"
        ),
        "cwd: '/' must be a relative path",
    ),
    "check directory climbing out": (
        HEAD
        + PLAIN_NODES.replace(
            "executor: executor}",
            "executor: executor, checks: [{name: t, run: 'true', cwd: a/../..}]}",
        ),
        "cwd: 'a/../..' must be a relative path",
    ),
    "absolute file shown at a gate": (
        HEAD + "nodes:\n  - {id: g, kind: gate, question: q, show: [/etc/shadow], "
        "choices: {ok: {to: done}}}\n  - {id: done, kind: end}\n",
        "nodes[0].show: '/etc/shadow' must be a relative path",
    ),
}


@pytest.mark.parametrize("case", list(PATHS))
def test_every_path_in_a_workflow_is_confined_to_the_repository(case: str, tmp_path: Path) -> None:
    """Hostile workflow files: a path that is absolute or climbs out with '..' is refused at
    load, naming the file, line and field."""
    text, message = PATHS[case]
    found = problems(write(tmp_path / "workflows", text))
    assert any(message in p for p in found), found


def test_a_prompt_template_that_is_a_symlink_out_of_its_folder_is_refused(tmp_path: Path) -> None:
    """A template symlinked to a file outside the prompt folder is not a template: no local
    file reaches an agent's prompt that way."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the key is 42\n")
    folder = tmp_path / "workflows"
    path = write(folder, HEAD + PLAIN_NODES, templates={})
    (folder / "prompts" / "hostile" / "build.md").symlink_to(secret)
    found = problems(path)
    assert any("prompt template 'build.md' not found" in p for p in found), found


def alias_bomb() -> str:
    lines = ["name: hostile", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


EXHAUSTING: dict[str, tuple[str, str]] = {
    "alias bomb": (alias_bomb(), "expands to more than 200000 values"),
    "deep flow nesting": ("name: hostile\nx: " + "[" * 20000 + "]" * 20000 + "\n", "nests deeper"),
    "deep block nesting": (
        "name: hostile\n" + "".join("  " * i + f"k{i}:\n" for i in range(300)) + "  " * 300 + "v\n",
        "nests deeper than 64 levels",
    ),
    "oversized file": ("name: hostile\n# " + "x" * 1_200_000 + "\n", "at most 1000000 are read"),
}


@pytest.mark.parametrize("case", list(EXHAUSTING))
def test_yaml_built_to_exhaust_phasegate_is_refused_fast(case: str, tmp_path: Path) -> None:
    """Alias bombs, deep nesting and oversized files: one clear error, never a RecursionError
    or minutes of work (the alias bomb alone expands to 3.4 billion values). The bound is
    loose on purpose: it tells refused work from exhausting work on a loaded machine (a
    one-second bound failed under load); speed itself is measured in benchmarks."""
    text, message = EXHAUSTING[case]
    path = write(tmp_path / "workflows", text)
    started = time.monotonic()
    (found,) = problems(path)
    assert time.monotonic() - started < 15.0
    assert str(path) in found and message in found


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def test_validate_and_new_refuse_a_hostile_workflow_with_exit_2(tmp_path: Path) -> None:
    """The CLI: validate and new both exit 2 naming the problem; no file outside is written."""
    repo = init_repo(tmp_path / "repo")
    assert phasegate(repo, "init").returncode == 0
    outside = tmp_path / "history.md"
    text = HEAD + f"view: {{plugin: feature, with: {{history_file: {outside}}}}}\n" + PLAIN_NODES
    path = write(repo / ".phasegate" / "workflows", text)
    checked = phasegate(repo, "validate", str(path))
    assert checked.returncode == ExitCode.BAD_INPUT
    assert "view.with.history_file" in checked.stdout + checked.stderr
    created = phasegate(repo, "new", "x", "--workflow", "hostile")
    assert created.returncode == ExitCode.BAD_INPUT
    assert "Traceback" not in created.stderr
    assert not outside.exists()


# -- what the paths point at, checked when they are used --------------------------------------


def scripted_repo(root: Path) -> Path:
    repo = init_repo(root)
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    return repo


def test_an_items_folder_that_is_a_symlink_out_of_the_repository_is_refused(
    tmp_path: Path,
) -> None:
    """No state is written outside the repository through a symlinked items folder."""
    repo = scripted_repo(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "docs").mkdir()
    (repo / "docs" / "features").symlink_to(elsewhere)
    created = phasegate(repo, "new", "x")
    assert created.returncode == ExitCode.BAD_INPUT, created.stderr
    assert "leads outside the repository" in created.stderr
    assert list(elsewhere.iterdir()) == []


def test_an_input_symlinked_out_of_the_repository_never_reaches_a_prompt(tmp_path: Path) -> None:
    """An input file that is a symlink to a file outside the repository is not read into the
    agent's prompt; a note says why."""
    from engine_helpers import calls, make_repo

    from phasegate.agents.scripted import ScriptedBackend
    from phasegate.engine.runner import RunOptions

    root = init_repo(tmp_path / "repo")
    secret = tmp_path / "id_rsa"
    secret.write_text("-----SECRET KEY MATERIAL-----\n")
    repo = make_repo(root)
    repo.new("x", mode="hotfix")
    folder = root / "docs/features/x"
    (folder / "brainstorm.md").symlink_to(secret)
    backend = ScriptedBackend(script=approving_script())
    repo.run("x", backends={"default": backend}, options=RunOptions(phase="specify", yes=True))
    prompts = [r.prompt_text() for r in calls(backend)]
    assert prompts and not any("SECRET KEY MATERIAL" in p for p in prompts)
    assert any("brainstorm.md leads outside the repository" in p for p in prompts)


def test_a_check_directory_symlinked_out_of_the_work_tree_is_refused(tmp_path: Path) -> None:
    """A check never runs in a directory outside the work tree reached through a symlink."""
    repo = init_repo(tmp_path / "repo")
    workflows = repo / ".phasegate" / "workflows"
    text = HEAD + PLAIN_NODES.replace(
        "executor: executor}",
        "executor: executor, checks: [{name: t, run: 'touch ran-here', cwd: tools}]}",
    )
    write(workflows, text)
    assert phasegate(repo, "init").returncode == 0
    with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump({"executor": {"*": [{"text": "built"}]}}, handle)
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "tools").symlink_to(outside)
    assert phasegate(repo, "new", "x", "--workflow", "hostile").returncode == 0
    ran = phasegate(repo, "run", "x")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert "check 't': its working directory 'tools' leads outside the work tree" in ran.stderr
    assert not (outside / "ran-here").exists()
    journal = next(repo.rglob("x/.journal.jsonl")).read_text().splitlines()
    assert not [e for e in map(json.loads, journal) if e["event"] == "check.finished"]


def test_the_confinement_check_follows_symlinks_and_relative_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repository roots are resolved once per process, yet a root given relative to the
    current directory is resolved against the directory current at each check."""
    from phasegate.engine.confine import inside

    real = tmp_path / "real-repo"
    (real / "docs").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    link = tmp_path / "linked-repo"
    link.symlink_to(real)
    assert inside(real / "docs", [link])
    assert inside(link / "docs", [real])
    assert inside(link / "docs", [link])
    assert not inside(tmp_path / "outside", [link])
    (real / "docs" / "escape").symlink_to(tmp_path / "outside")
    assert not inside(link / "docs" / "escape", [link])
    monkeypatch.chdir(real)
    assert inside(real / "docs", [Path("docs")])
    monkeypatch.chdir(tmp_path / "outside")
    assert not inside(real / "docs", [Path("docs")])
