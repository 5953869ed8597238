"""Each workflow keeps its work items in a folder of its own: two workflows of a
repository whose items folders are one are refused when they are loaded, naming
both and the folder, whether the folder is the default, set in the workflow file
or set by the config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from phasegate.errors import ExitCode, WorkflowError
from phasegate.workflow.example_files import copy_example
from phasegate.workflow.registry import BUILTIN_DIR, WorkflowRegistry


def _one_step(name: str, items_dir: str | None = None) -> str:
    folder = f"items_dir: {items_dir}\n" if items_dir else ""
    return f"""\
name: {name}
{folder}modes:
  standard: {{max_iterations: 1}}
roles:
  executor: {{access: write}}
nodes:
  - id: {name}-step
    executor: executor
    outputs: [out.md]
    on: {{pass: done}}
  - id: done
    kind: end
"""


def _add(root: Path, name: str, items_dir: str | None = None) -> Path:
    """Write repository workflow ``name`` (one agent node, then the end) into ``root``."""
    folder = root / ".phasegate" / "workflows"
    prompts = folder / "prompts" / name
    prompts.mkdir(parents=True, exist_ok=True)
    (prompts / f"{name}-step.md").write_text("Do {{ item }}.\n", encoding="utf-8")
    path = folder / f"{name}.yaml"
    path.write_text(_one_step(name, items_dir), encoding="utf-8")
    return path


def _config(root: Path, text: str) -> None:
    (root / ".phasegate" / "config.yaml").write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def cli(argv: list[str]) -> int:
    from phasegate.cli import main

    return main(argv)


def test_two_workflows_in_the_default_folder_are_refused_naming_both(repo: Path) -> None:
    alpha, beta = _add(repo, "alpha"), _add(repo, "beta")
    registry = WorkflowRegistry(repo)
    for name, path in (("alpha", alpha), ("beta", beta)):
        with pytest.raises(WorkflowError) as caught:
            registry.get(name)
        message = str(caught.value)
        assert message.startswith(f"{path}: items_dir: workflows 'alpha' and 'beta' ")
        assert "both keep their work items in 'work'" in message
        assert "items_dir" in message.split(";", 1)[1] and "\n" not in message
        assert caught.value.exit_code == ExitCode.BAD_INPUT == 2


def test_the_refusal_names_the_line_of_an_items_dir_written_in_the_file(repo: Path) -> None:
    _add(repo, "alpha", "./work/")  # the same folder, spelt another way
    beta = _add(repo, "beta", "work")
    with pytest.raises(WorkflowError, match=r"in 'work'") as caught:
        WorkflowRegistry(repo).get("beta")
    assert str(caught.value).startswith(f"{beta}:2: items_dir: workflows 'alpha' and 'beta' ")


def test_workflows_with_folders_of_their_own_load(repo: Path) -> None:
    _add(repo, "alpha")
    _add(repo, "beta", "beta-work")
    registry = WorkflowRegistry(repo)
    assert registry.get("alpha").name == "alpha"
    assert registry.get("beta").name == "beta"


def test_the_configs_items_dir_parts_them(repo: Path) -> None:
    _add(repo, "alpha")
    _add(repo, "beta")
    _config(repo, "workflows:\n  beta: {items_dir: beta-work}\n")
    registry = WorkflowRegistry(repo)
    assert registry.get("alpha").name == "alpha"
    assert registry.get("beta").name == "beta"


def test_the_configs_items_dir_can_join_them_and_is_named(repo: Path) -> None:
    _add(repo, "alpha")
    _add(repo, "beta", "beta-work")
    _config(repo, "workflows:\n  beta: {items_dir: work}\n")
    with pytest.raises(WorkflowError) as caught:
        WorkflowRegistry(repo).get("beta")
    config = repo / ".phasegate" / "config.yaml"
    assert str(caught.value).startswith(
        f"{config}: workflows.beta.items_dir: workflows 'alpha' and 'beta' both keep"
    )


def test_a_workflow_that_does_not_load_takes_no_folder(repo: Path) -> None:
    _add(repo, "alpha")
    broken = _add(repo, "beta")
    broken.write_text(_one_step("beta").replace("kind: end", "kind: nosuch"), encoding="utf-8")
    registry = WorkflowRegistry(repo)
    assert registry.get("alpha").name == "alpha"
    with pytest.raises(WorkflowError, match="unknown node kind"):
        registry.get("beta")


def test_builtins_and_the_example_have_folders_of_their_own(repo: Path) -> None:
    """The built-in workflows and the review-loop example (which keeps its items in
    ``work``) load side by side; a repository workflow replacing a built-in by name is
    that workflow, not a second one in its folder."""
    copy_example("review-loop", repo)
    _add(repo, "feature", "docs/features")  # replaces the built-in feature workflow
    registry = WorkflowRegistry(repo)
    names = sorted({p.stem for p in BUILTIN_DIR.glob("*.yaml")} | {"review-loop"})
    assert registry.names() == names
    for name in names:
        assert registry.get(name).name == name
    assert registry.get("feature").source == "repo"


def test_cli_workflows_lists_both_as_invalid(repo: Path, capsys: pytest.CaptureFixture) -> None:
    _add(repo, "alpha")
    _add(repo, "beta")
    assert cli(["workflows", "--repo", str(repo)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "invalid" in line]
    assert len(lines) == 2
    assert all("workflows 'alpha' and 'beta' both keep their work items in" in x for x in lines)
    assert "feature (built-in)" in out


def test_cli_validate_refuses_a_shared_folder(repo: Path, capsys: pytest.CaptureFixture) -> None:
    alpha = _add(repo, "alpha")
    _add(repo, "beta")
    assert cli(["validate", str(alpha)]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert f"{alpha}: items_dir: workflows 'alpha' and 'beta' both keep" in err
    _add(repo, "beta", "beta-work")
    assert cli(["validate", str(alpha)]) == 0
    assert "ok: workflow 'alpha'" in capsys.readouterr().out


def test_cli_run_refuses_instead_of_taking_anothers_item(
    repo: Path, capsys: pytest.CaptureFixture
) -> None:
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    _add(repo, "alpha")
    _add(repo, "beta")
    _config(repo, "roles: {default: {backend: auto}}\n")
    code = cli(["new", "x", "-w", "alpha", "-d", "t", "--repo", str(repo)])
    err = capsys.readouterr().err
    assert code == ExitCode.BAD_INPUT
    assert "workflows 'alpha' and 'beta' both keep their work items in 'work'" in err
    assert not (repo / "work").exists()


def test_cli_status_warns_of_the_workflows_it_cannot_list(
    repo: Path, capsys: pytest.CaptureFixture
) -> None:
    """`status` still lists the items of the workflows that load, and says on stderr which
    workflows' items it cannot list and why (rather than "no work items")."""
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "i"], check=True)
    (repo / ".phasegate").mkdir()
    _config(repo, "roles: {default: {backend: auto}}\n")
    assert cli(["new", "f1", "-d", "t", "--repo", str(repo)]) == 0
    _add(repo, "alpha")
    _add(repo, "beta")
    capsys.readouterr()
    for extra in ([], ["--json"]):
        assert cli(["status", *extra, "--repo", str(repo)]) == 0
        captured = capsys.readouterr()
        assert "f1" in captured.out
        warnings = captured.err.strip().splitlines()
        assert len(warnings) == 2, captured.err
        for line, name in zip(warnings, ("alpha", "beta"), strict=True):
            assert line.startswith("phasegate: warning: ")
            assert line.endswith(f"(the items of workflow {name!r} are not listed)")
