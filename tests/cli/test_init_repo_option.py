"""`phasegate init --repo DIR` with a DIR that is not there says so, as every other command
does, rather than telling the user to run `git init` in a folder that does not exist."""

from __future__ import annotations

from pathlib import Path

from cli_process import run_cli


def test_init_repo_that_does_not_exist_is_named_as_not_a_directory(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-project"
    done = run_cli(tmp_path, "init", "--repo", str(missing))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"phasegate: error: --repo {missing} is not a directory"
    assert not missing.exists()


def test_init_repo_given_a_file_is_named_as_not_a_directory(tmp_path: Path) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("x\n", encoding="utf-8")
    done = run_cli(tmp_path, "init", "--repo", str(afile))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"phasegate: error: --repo {afile} is not a directory"
