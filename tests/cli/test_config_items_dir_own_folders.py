"""``workflows.NAME.items_dir`` naming phasegate's own folder (``.phasegate`` itself, or
its ``locks``, ``cache``...) or git's (``.git``) is refused as a config error: an item
named ``locks`` would be phasegate's lock folder, and items in ``.git`` are never
committed. A folder of its own under ``.phasegate`` (implement's default) is accepted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli


@pytest.mark.parametrize("folder", [".phasegate", ".phasegate/locks", ".git/items", "./.git"])
def test_items_dir_in_phasegates_or_gits_own_folder_is_refused(tmp_path: Path, folder: str) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = tmp_path / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_text(
        f"roles:\n  default: {{backend: auto}}\nworkflows:\n  feature: {{items_dir: {folder!r}}}\n",
        encoding="utf-8",
    )
    done = run_cli(tmp_path, "new", "rate-limit", "--description", "x")
    assert done.returncode == 2, done.stdout
    line = done.stderr.strip()
    assert line.startswith(f"phasegate: error: {config}: workflows.feature.items_dir: ")
    assert "\n" not in line
    assert "own folder" in line
    assert not list(tmp_path.rglob("rate-limit"))


@pytest.mark.parametrize("folder", ["work/.items", ".phasegate/features"])
def test_an_items_dir_of_the_project_or_its_own_under_phasegate_is_accepted(
    tmp_path: Path, folder: str
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    config = tmp_path / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_text(
        f"roles:\n  default: {{backend: auto}}\nworkflows:\n  feature: {{items_dir: {folder}}}\n",
        encoding="utf-8",
    )
    done = run_cli(tmp_path, "new", "rate-limit", "--description", "x")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / folder / "rate-limit").is_dir()
