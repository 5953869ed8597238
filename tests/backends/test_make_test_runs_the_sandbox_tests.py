"""``make test`` runs the sandbox tests: it installs bwrap and socat, and Codex still runs.

Claude Code's sandbox (``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB``) needs ``bwrap`` and
``socat`` on Linux, so ``make test`` installs Debian's bubblewrap and socat when
either is missing, as it installs chromium. With a system ``bwrap``, Codex will
not create its sandbox helper in a CODEX_HOME in the temporary folder, so the
tests' CODEX_HOMEs live outside it, one per test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from backend_helpers import codex_settings

from phasegate.testing import Reply, Script, StubLLMServer

REPO = Path(__file__).resolve().parents[2]
linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the sandbox packages are for Linux"
)


def _fake_path(tmp_path: Path, *present: str) -> tuple[dict[str, str], Path]:
    """A PATH holding only uname, id, a recording apt-get and sudo, and ``present``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "apt-get.log"
    for tool in ("uname", "id"):
        real = shutil.which(tool)
        assert real is not None
        (bin_dir / tool).symlink_to(real)
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    (bin_dir / "sudo").write_text('#!/bin/sh\nexec "$@"\n')
    for name in present:
        (bin_dir / name).write_text("#!/bin/sh\n")
    for script in bin_dir.iterdir():
        if not script.is_symlink():
            script.chmod(0o755)
    return {**os.environ, "PATH": str(bin_dir)}, log


def _make(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    return subprocess.run(
        [make, "--no-print-directory", "-C", str(REPO), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@linux_only
def test_the_sandbox_target_installs_bubblewrap_and_socat_when_missing(tmp_path: Path) -> None:
    env, log = _fake_path(tmp_path, "bwrap")  # socat missing
    done = _make("sandbox", env=env)
    assert done.returncode == 0, done.stderr
    assert "Installing Debian's bubblewrap and socat" in done.stdout
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq bubblewrap socat"]


@linux_only
def test_the_sandbox_target_does_nothing_when_both_are_there(tmp_path: Path) -> None:
    env, log = _fake_path(tmp_path, "bwrap", "socat")
    done = _make("sandbox", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert not log.exists()


def test_make_test_installs_them(tmp_path: Path) -> None:
    env, _ = _fake_path(tmp_path)
    dry = _make("-n", "test", env=env)  # prints what it would run, runs nothing
    assert dry.returncode == 0, dry.stderr
    assert "apt-get install -y -qq bubblewrap socat" in dry.stdout


def test_the_tests_codex_home_is_outside_the_temporary_folder(tmp_path: Path) -> None:
    """One per test HOME, the same for the same HOME, never under $TMPDIR or /tmp."""
    with StubLLMServer(Script(default=Reply(text="ok"))) as stub:
        first = Path(codex_settings(stub, tmp_path / "a")["config_dir"])
        again = Path(codex_settings(stub, tmp_path / "a")["config_dir"])
        other = Path(codex_settings(stub, tmp_path / "b")["config_dir"])
    assert first == again != other
    for folder in (first, other):
        assert folder.is_dir()
        assert not folder.resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())
        assert not folder.resolve().is_relative_to("/tmp")
