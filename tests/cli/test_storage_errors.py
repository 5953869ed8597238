"""A disk that is full, read-only or failing: one clear line naming the file, exit code 8.

Never "internal error (a bug)", and nothing already recorded is lost: once the
disk is fixed, the same command carries on. The faults are real: a small
tmpfs filled to the last byte or remounted read-only (in a private mount
namespace, ``unshare -Urm``), a directory without write permission, and an
I/O error injected at the ``os.write`` system-call wrapper in a child process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo

ITEM = Path("docs/features/x")

#: Runs inside a private mount namespace: a list of steps on a tmpfs, results as JSON.
SCENARIO = """\
import errno, json, os, shutil, subprocess, sys
source, mount, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
repo = os.path.join(mount, "repo")
filler = os.path.join(mount, "filler")
results = []
for step, *args in steps:
    if step == "tmpfs":
        os.makedirs(mount, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mount], check=True)
        shutil.copytree(source, repo, symlinks=True)
    elif step == "fill":
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        os.close(fd)
    elif step == "free":
        os.remove(filler)
    elif step == "mount":
        subprocess.run(["mount", "-o", "remount," + args[0], mount], check=True)
    elif step == "read":
        try:
            with open(os.path.join(repo, args[0]), "rb") as handle:
                results.append(handle.read().decode())
        except FileNotFoundError:
            results.append(None)
    elif step == "phasegate":
        done = subprocess.run(
            [sys.executable, "-m", "phasegate", *args],
            cwd=repo, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )
        results.append({"code": done.returncode, "stderr": done.stderr})
    elif step == "files":
        results.append(sorted(
            os.path.relpath(os.path.join(d, f), repo) for d, _, fs in os.walk(repo) for f in fs
        ))
print(json.dumps(results))
"""

#: Runs phasegate with os.write failing with EIO for one file (fault injection of the OS).
EIO_ON_WRITE = """\
import errno, os, sys
target = sys.argv[1]
real_write = os.write

def failing_write(fd, data):
    if os.readlink(f"/proc/self/fd/{fd}").endswith(target):
        raise OSError(errno.EIO, os.strerror(errno.EIO))
    return real_write(fd, data)

os.write = failing_write
from phasegate.cli import main
sys.exit(main(sys.argv[2:]))
"""


def phasegate(
    repo: Path, *args: str, prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the approving scripted agents and a new item ``x``."""
    root = init_repo(tmp_path / "repo")
    assert phasegate(root, "init", "--test-command", "true").returncode == 0
    with open(root / ".phasegate" / "agents.yaml", "w") as handle:
        YAML(typ="safe", pure=True).dump(approving_script(), handle)
    assert phasegate(root, "new", "x", "--mode", "quick").returncode == 0
    return root


def namespaces_work() -> bool:
    if not shutil.which("unshare") or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(["unshare", "-Urm", "true"], capture_output=True)
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(
    not namespaces_work(), reason="needs a private mount namespace (unshare -Urm)"
)


def scenario(repo: Path, tmp_path: Path, *steps: list[str]) -> list[object]:
    """Run ``steps`` on a copy of ``repo`` on a fresh 8 MiB tmpfs; return each step's result."""
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    done = subprocess.run(
        [
            "unshare",
            "-Urm",
            sys.executable,
            str(script),
            str(repo),
            str(tmp_path / "mnt"),
            json.dumps([["tmpfs"], *steps]),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    results: list[object] = json.loads(done.stdout)
    return results


def assert_storage_error(result: object, path_part: str, reason: str) -> None:
    """Exit code 8, one ``phasegate: error:`` line naming a file and the reason, no bug report."""
    assert isinstance(result, dict)
    stderr = str(result["stderr"])
    assert result["code"] == 8, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("phasegate: error:")]
    assert len(errors) == 1, stderr
    assert path_part in errors[0] and reason in errors[0], errors[0]
    assert "internal error" not in stderr and "Traceback" not in stderr


@needs_mounts
def test_run_on_a_full_disk_stops_with_exit_8_and_resumes_once_space_is_freed(
    repo: Path, tmp_path: Path
) -> None:
    """ENOSPC: exit 8 naming the file; the journal keeps every event it had, no temp file
    is left, and after space is freed the same command completes the item."""
    steps = [
        ["phasegate", "run", "x", "--until", "brainstorm"],
        ["read", str(ITEM / ".journal.jsonl")],
        ["fill"],
        ["phasegate", "run", "x"],
        ["read", str(ITEM / ".journal.jsonl")],
        ["files"],
        ["free"],
        ["phasegate", "run", "x"],
        ["phasegate", "status", "x", "--json"],
    ]
    first, journal_before, full, journal_after, files, resumed, status = scenario(
        repo, tmp_path, *steps
    )
    assert isinstance(first, dict) and first["code"] == 0, first
    assert_storage_error(full, str(ITEM), "no space left on the device (ENOSPC)")
    assert isinstance(journal_before, str) and isinstance(journal_after, str)
    assert journal_after.startswith(journal_before), "an event recorded before was lost"
    assert journal_after.endswith("\n"), "a torn journal line was left behind"
    assert isinstance(files, list) and not [f for f in files if ".tmp-" in f], files
    assert isinstance(resumed, dict) and resumed["code"] == 0, resumed
    assert isinstance(status, dict) and status["code"] == 0


@needs_mounts
def test_run_on_a_read_only_file_system_stops_with_exit_8(repo: Path, tmp_path: Path) -> None:
    """EROFS: exit 8 naming the file; remounted writable, the same command completes."""
    steps = [
        ["mount", "ro"],
        ["phasegate", "run", "x"],
        ["mount", "rw"],
        ["phasegate", "run", "x"],
    ]
    refused, resumed = scenario(repo, tmp_path, *steps)
    assert_storage_error(refused, str(tmp_path / "mnt" / "repo"), "read-only file system (EROFS)")
    assert isinstance(resumed, dict) and resumed["code"] == 0, resumed


def without_root_override() -> tuple[str, ...]:
    """A command prefix under which root, too, is refused writes to a read-only directory."""
    if os.geteuid() != 0:
        return ()
    if not shutil.which("setpriv"):
        pytest.skip("root ignores directory permissions and setpriv is not installed")
    return ("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--")


def test_run_in_a_read_only_directory_stops_with_exit_8_and_changes_nothing(repo: Path) -> None:
    """EACCES on the item's folder: exit 8 naming it; its files are byte for byte as before,
    and once the folder is writable again the same command completes."""
    folder = repo / ITEM
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    folder.chmod(0o555)
    try:
        refused = phasegate(repo, "run", "x", prefix=without_root_override())
        after = {p.name: p.read_bytes() for p in folder.iterdir()}
    finally:
        folder.chmod(0o755)
    assert_storage_error(
        {"code": refused.returncode, "stderr": refused.stderr},
        str(folder),
        "permission denied (EACCES)",
    )
    assert after == before
    assert phasegate(repo, "run", "x").returncode == 0


def test_a_write_refused_outside_the_state_files_is_still_exit_8(tmp_path: Path) -> None:
    """A file-system error from any write (here: init's config file) is exit 8, not a bug."""
    root = init_repo(tmp_path / "repo")
    (root / ".phasegate").mkdir()
    (root / ".phasegate").chmod(0o555)
    try:
        refused = phasegate(root, "init", prefix=without_root_override())
    finally:
        (root / ".phasegate").chmod(0o755)
    assert_storage_error(
        {"code": refused.returncode, "stderr": refused.stderr},
        str(root / ".phasegate"),
        "permission denied (EACCES)",
    )


def test_an_io_error_writing_the_journal_is_exit_8_naming_it(repo: Path, tmp_path: Path) -> None:
    """EIO from the OS on the journal: exit 8 naming the journal; its earlier events stay."""
    assert phasegate(repo, "run", "x", "--until", "brainstorm").returncode == 0
    journal = repo / ITEM / ".journal.jsonl"
    before = journal.read_text()
    script = tmp_path / "eio.py"
    script.write_text(EIO_ON_WRITE)
    failed = subprocess.run(
        [sys.executable, str(script), ".journal.jsonl", "run", "x"],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert_storage_error(
        {"code": failed.returncode, "stderr": failed.stderr},
        str(journal),
        "input/output error (EIO)",
    )
    assert journal.read_text() == before
    assert phasegate(repo, "run", "x").returncode == 0
