"""Which Codex releases get the read-confining profile, and what doctor says of the others.

Before 0.169.0 a read-only role runs with ``-s read-only`` (reads unconfined),
and ``phasegate doctor`` says so instead of a plain "usable".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from backend_helpers import fake_cli, fake_settings, init_git_repo, make_request
from ruamel.yaml import YAML

from phasegate.agents.base import Access
from phasegate.agents.codex import CodexBackend

NOT_CONFINED = "before 0.169.0 its read-only roles' reads are not confined to the work tree"


def _doctor(root: Path, binary: Path, version: str) -> dict[str, object]:
    (root / ".phasegate").mkdir(exist_ok=True)
    config = {
        "roles": {"default": {"backend": "codex"}},
        "backends": {"codex": {"binary": str(binary), "env": {"FAKE_VERSION": version}}},
    }
    with open(root / ".phasegate" / "config.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(config, handle)
    ran = subprocess.run(
        [sys.executable, "-m", "phasegate", "doctor", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, "OPENAI_API_KEY": "sk-test-0123456789abcdef"},
    )
    rows = {r["backend"]: r for r in json.loads(ran.stdout)["backends"]}
    return dict(rows["codex"])


@pytest.mark.parametrize(
    ("version", "confined"), [("codex-cli 0.120.0", False), ("codex-cli 0.169.0", True)]
)
def test_doctor_says_when_reviewers_reads_are_not_confined(
    tmp_path: Path, version: str, confined: bool
) -> None:
    root = init_git_repo(tmp_path / "repo")
    row = _doctor(root, fake_cli(tmp_path / "bin", "codex"), version)
    assert row["usable"] is True
    assert (NOT_CONFINED in str(row["detail"])) is not confined


@pytest.mark.parametrize(
    ("version", "profile"), [("codex-cli 0.120.0", False), ("codex-cli 0.169.0", True)]
)
def test_read_only_sandbox_by_release(tmp_path: Path, version: str, profile: bool) -> None:
    binary = fake_cli(tmp_path / "bin", "codex")
    backend = CodexBackend(fake_settings(binary, "echo", env={"FAKE_VERSION": version}))
    work = tmp_path / "work"
    work.mkdir()
    argv = backend.arguments(make_request(work, access=Access.READ_ONLY), tmp_path)
    assert ('default_permissions="phasegate-reader"' in argv) is profile
    assert ("-s" in argv and argv[argv.index("-s") + 1] == "read-only") is not profile
