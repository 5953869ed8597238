"""Stopping phasegate stops its agent: no process of the agent's tree outlives phasegate.

Each test runs ``phasegate run`` with an agent CLI stand-in (a real process
tree: the agent, its child, and a grandchild that calls ``setsid``, each
appending to a log file every 50 ms), stops phasegate with a signal once the
whole tree is writing, and checks that nothing writes after phasegate is gone
(issue rule: interrupting phasegate stops its agent, its grandchildren
included).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

#: A stand-in agent CLI: prints a version, else becomes a writer tree that works forever.
FAKE_AGENT = """\
import os, subprocess, sys
if "--version" in sys.argv:
    print("fake-agent 9.9.9")
    sys.exit(0)
writer, log = os.environ["FAKE_AGENT_WRITER"], os.environ["FAKE_AGENT_LOG"]
subprocess.Popen([sys.executable, writer, log, "child"])
os.execv(sys.executable, [sys.executable, writer, log, "agent"])
"""

#: One writer of the tree: the child also starts the grandchild, which calls setsid.
WRITER = """\
import os, subprocess, sys, time
log, label = sys.argv[1], sys.argv[2]
if label == "child":
    subprocess.Popen([sys.executable, __file__, log, "grandchild"])
if label == "grandchild":
    os.setsid()  # leaves the agent's session and process group
while True:
    with open(log, "a") as handle:
        handle.write(f"{label} {os.getpid()}\\n")
    time.sleep(0.05)
"""


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def writers(log: Path) -> dict[str, int]:
    """Which writer (agent, child, grandchild) wrote, and its pid."""
    found: dict[str, int] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            label, _, pid = line.partition(" ")
            if pid.isdigit():
                found[label] = int(pid)
    return found


@pytest.fixture
def agent_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose every role runs the stand-in agent; returns (repo, log)."""
    repo = init_repo(tmp_path / "repo")
    binary = tmp_path / "bin" / "fake-agent"
    binary.parent.mkdir()
    binary.write_text(f"#!{sys.executable}\n{FAKE_AGENT}")
    binary.chmod(0o755)
    writer = tmp_path / "bin" / "writer.py"
    writer.write_text(WRITER)
    log = tmp_path / "writes.log"
    (repo / ".phasegate").mkdir()
    (repo / ".phasegate" / "config.yaml").write_text(
        "version: 1\n"
        "roles:\n  default: {backend: claude}\n"
        f"backends:\n  claude:\n    binary: {binary}\n"
        f"    env: {{FAKE_AGENT_LOG: {log}, FAKE_AGENT_WRITER: {writer}}}\n"
        "timeouts: {agent: 600, check: 600}\n"
    )
    created = subprocess.run(
        [sys.executable, "-m", "phasegate", "new", "x", "--mode", "quick"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert created.returncode == 0, created.stderr
    return repo, log


def start_run(repo: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """``phasegate run x`` in the background; its stderr goes to a file."""
    stderr = tmp_path / "stderr.txt"
    with open(stderr, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "phasegate", "run", "x"],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    return proc, stderr


def wait_for_tree(log: Path, proc: subprocess.Popen[bytes]) -> dict[str, int]:
    """Wait until the agent, its child and the setsid grandchild all write."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = writers(log)
        if {"agent", "child", "grandchild"} <= found.keys():
            return found
        assert proc.poll() is None, "phasegate ended before its agent started"
        time.sleep(0.05)
    raise AssertionError(f"the agent tree never started: {writers(log)}")


def assert_nothing_writes(log: Path, pids: dict[str, int], within: float) -> None:
    """Every writer is gone within ``within`` seconds, and the log stops growing."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and any(is_running(pid) for pid in pids.values()):
        time.sleep(0.02)
    alive = {label: pid for label, pid in pids.items() if is_running(pid)}
    size = log.stat().st_size
    time.sleep(0.5)
    try:
        assert not alive, f"still running after phasegate was gone: {alive}"
        assert log.stat().st_size == size, "the agent's tree still writes after phasegate is gone"
    finally:
        for pid in pids.values():
            if is_running(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("signum", "code", "message"),
    [
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
        (signal.SIGINT, 130, "interrupted"),
        (signal.SIGHUP, 129, "stopped by SIGHUP"),
    ],
    ids=["SIGTERM", "SIGINT", "SIGHUP"],
)
def test_stop_signal_kills_the_agents_whole_tree_before_phasegate_exits(
    agent_repo: tuple[Path, Path],
    tmp_path: Path,
    signum: signal.Signals,
    code: int,
    message: str,
) -> None:
    """After SIGTERM, SIGINT or SIGHUP the agent, its child and its setsid grandchild are
    killed before phasegate exits with 128 + the signal and one line saying what happened."""
    repo, log = agent_repo
    proc, stderr = start_run(repo, tmp_path)
    pids = wait_for_tree(log, proc)
    proc.send_signal(signum)
    returncode = proc.wait(timeout=30)
    assert_nothing_writes(log, pids, within=0.5)
    text = stderr.read_text()
    assert returncode == code, text
    assert (
        f"phasegate: {message}; nothing it started is left running; "
        "run the same command again to resume"
    ) in text
    assert "Traceback" not in text and "internal error" not in text
    # The call it stopped is dispatched by the next run, not by this one, which exits.
    assert "was stopped with phasegate; the next run dispatches it again" in text
    assert "dispatching it again" not in text


def test_sigkill_of_phasegate_still_kills_the_agents_whole_tree(
    agent_repo: tuple[Path, Path], tmp_path: Path
) -> None:
    """phasegate cannot clean up after SIGKILL: the kernel (PR_SET_PDEATHSIG) and its
    watchdog do, so neither the agent nor its setsid grandchild outlives it."""
    repo, log = agent_repo
    proc, _ = start_run(repo, tmp_path)
    pids = wait_for_tree(log, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert_nothing_writes(log, pids, within=5.0)
