"""A file where phasegate must make a folder, and an items folder that leads outside the
repository, are the user's to fix: one line naming the path and the problem, exit 2
(bad input), and nothing half-made left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from phasegate.errors import ExitCode


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, "PHASEGATE_DEBUG": ""},
    )


def initialised(root: Path) -> Path:
    repo = init_repo(root)
    assert phasegate(repo, "init", "--test-command", "true").returncode == 0
    return repo


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "internal error" not in lines[0]
    return lines[0]


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_new_with_a_file_where_the_items_folder_goes(tmp_path: Path) -> None:
    repo = initialised(tmp_path / "repo")
    (repo / "docs").write_text("not a folder\n")
    before = files_under(repo / ".phasegate")
    created = phasegate(repo, "new", "a1", "-d", "x")
    assert created.returncode == ExitCode.BAD_INPUT, created.stderr
    line = one_error_line(created)
    assert "docs exists and is not a folder" in line
    assert "a1" in line
    assert (repo / "docs").read_text() == "not a folder\n"
    assert files_under(repo / ".phasegate") == before  # not even a lock file


def test_new_with_a_file_where_the_item_folder_goes(tmp_path: Path) -> None:
    repo = initialised(tmp_path / "repo")
    (repo / "docs" / "features").mkdir(parents=True)
    (repo / "docs" / "features" / "a2").write_text("")
    created = phasegate(repo, "new", "a2", "-d", "x")
    assert created.returncode == ExitCode.BAD_INPUT, created.stderr
    assert "docs/features/a2 exists and is not a folder" in one_error_line(created)
    assert files_under(repo / "docs") == ["features", "features/a2"]


def test_new_with_a_dangling_symlink_where_the_item_folder_goes(tmp_path: Path) -> None:
    repo = initialised(tmp_path / "repo")
    (repo / "docs" / "features").mkdir(parents=True)
    (repo / "docs" / "features" / "a3").symlink_to(repo / "nowhere")
    created = phasegate(repo, "new", "a3", "-d", "x")
    assert created.returncode == ExitCode.BAD_INPUT, created.stderr
    assert "docs/features/a3 exists and is not a folder" in one_error_line(created)


def test_init_with_a_file_where_the_config_folder_goes(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / ".phasegate").write_text("")
    ran = phasegate(repo, "init")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert ".phasegate exists and is not a folder" in one_error_line(ran)
    assert (repo / ".phasegate").is_file()


def test_init_with_a_folder_where_the_config_file_goes(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / ".phasegate" / "config.yaml").mkdir(parents=True)
    ran = phasegate(repo, "init")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert ".phasegate/config.yaml exists and is not a file" in one_error_line(ran)
    assert files_under(repo / ".phasegate") == ["config.yaml"]


def test_init_example_with_a_file_where_its_prompts_go(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    (repo / ".phasegate" / "workflows").mkdir(parents=True)
    (repo / ".phasegate" / "workflows" / "prompts").write_text("")
    ran = phasegate(repo, "init", "--example", "review-loop")
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    assert ".phasegate/workflows/prompts exists and is not a folder" in one_error_line(ran)
    assert files_under(repo / ".phasegate") == ["workflows", "workflows/prompts"]


def test_a_configured_items_dir_outside_the_repository_names_the_key(tmp_path: Path) -> None:
    """``workflows.feature.items_dir: ../out``: refused, naming the config key; no symlink
    is blamed (there is none), and nothing is written outside."""
    repo = initialised(tmp_path / "repo")
    with open(repo / ".phasegate" / "config.yaml", "a") as handle:
        handle.write("workflows:\n  feature:\n    items_dir: ../out\n")
    created = phasegate(repo, "new", "x", "-d", "x")
    assert created.returncode == ExitCode.BAD_INPUT, created.stderr
    line = one_error_line(created)
    assert "workflows.feature.items_dir" in line
    assert "leads outside the repository" in line
    assert "symlink" not in line
    assert not (tmp_path / "out").exists()


def test_a_configured_items_dir_outside_the_repository_is_refused_by_every_command(
    tmp_path: Path,
) -> None:
    """The config is refused when it loads, not only by ``new``: ``status`` used to list
    whatever lay in the folder outside, and ``run`` to work there."""
    repo = initialised(tmp_path / "repo")
    with open(repo / ".phasegate" / "config.yaml", "a") as handle:
        handle.write("workflows:\n  feature:\n    items_dir: /tmp/out\n")
    for args in (("status",), ("run", "x"), ("new", "x", "-d", "x")):
        ran = phasegate(repo, *args)
        assert ran.returncode == ExitCode.BAD_INPUT, (args, ran.stderr)
        line = one_error_line(ran)
        assert "config.yaml: workflows.feature.items_dir: '/tmp/out' leads outside" in line
        assert "Value error" not in line


def test_an_items_folder_symlinked_out_still_blames_the_symlink(tmp_path: Path) -> None:
    repo = initialised(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "docs").symlink_to(elsewhere)
    created = phasegate(repo, "new", "x", "-d", "x")
    assert created.returncode == ExitCode.BAD_INPUT, created.stderr
    assert "through a symlink" in one_error_line(created)
    assert list(elsewhere.iterdir()) == []
