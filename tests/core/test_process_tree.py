"""A child's whole process tree never outlives the call that started it, nor phasegate.

Real processes throughout: a writer tree (the child, its own child, and a
grandchild that calls ``setsid``, each appending to a log every 50 ms) is
started through :func:`phasegate.process.run_process` by a driver script, and
the tests check what is left running, and whether anything still writes,
after the driver is interrupted or killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from phasegate.process import AgentGroups, reap_leftover_agents, run_process
from phasegate.proctree import identity

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

#: One writer of the tree; the "child" starts the grandchild, which calls setsid.
WRITER = """\
import os, subprocess, sys, time
log, label = sys.argv[1], sys.argv[2]
if label == "agent":
    subprocess.Popen([sys.executable, __file__, log, "child"])
if label == "child":
    subprocess.Popen([sys.executable, __file__, log, "grandchild"])
if label == "grandchild":
    os.setsid()  # leaves the agent's session and process group
while True:
    with open(log, "a") as handle:
        handle.write(f"{label} {os.getpid()}\\n")
    time.sleep(0.05)
"""

#: Runs the writer tree through run_process the way the CLI does (stop signals raise).
DRIVER = """\
import json, sys
from pathlib import Path
from phasegate.interrupts import stop_signals_raise
from phasegate.process import AgentGroups, ProcessInterrupted, run_process

writer, log, records = sys.argv[1], sys.argv[2], sys.argv[3]
with stop_signals_raise(), AgentGroups(Path(records)).recording():
    try:
        run_process([sys.executable, writer, log, "agent"], cwd=Path(log).parent, timeout=600)
    except ProcessInterrupted as exc:
        print(json.dumps({
            "signal": exc.signal_name,
            "exit_code": exc.exit_code,
            "interrupted": exc.result.interrupted,
            "killed": list(exc.killed),
            "records": sorted(p.name for p in Path(records).glob("*.json")),
        }))
        sys.exit(exc.exit_code)
"""


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def writers(log: Path) -> dict[str, int]:
    found: dict[str, int] = {}
    if log.exists():
        for line in log.read_text().splitlines():
            label, _, pid = line.partition(" ")
            if pid.isdigit():
                found[label] = int(pid)
    return found


def wait_for_tree(log: Path, driver: subprocess.Popen[str]) -> dict[str, int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = writers(log)
        if {"agent", "child", "grandchild"} <= found.keys():
            return found
        assert driver.poll() is None, driver.communicate()
        time.sleep(0.05)
    raise AssertionError(f"the tree never started: {writers(log)}")


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        if is_running(pid):
            os.kill(pid, signal.SIGKILL)


def still_writes(log: Path) -> bool:
    size = log.stat().st_size
    time.sleep(0.4)
    return log.stat().st_size != size


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(writer script, log, records directory)."""
    writer = tmp_path / "writer.py"
    writer.write_text(WRITER)
    return writer, tmp_path / "writes.log", tmp_path / "records"


def start_driver(tree: tuple[Path, Path, Path], tmp_path: Path) -> subprocess.Popen[str]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    return subprocess.Popen(
        [sys.executable, str(driver), *(str(p) for p in tree)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def watchdog_of(pid: int) -> int:
    """The pid of the watchdog process that ``pid`` started."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"proctree.py" in cmdline:
            return int(entry.name)
    raise AssertionError(f"process {pid} has no watchdog")


def test_interrupted_run_process_kills_the_tree_and_says_so(
    tree: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """A stop signal during run_process kills the child's tree (setsid grandchild included)
    before ProcessInterrupted is raised; the exception names the signal and the pids."""
    _, log, _ = tree
    driver = start_driver(tree, tmp_path)
    pids = wait_for_tree(log, driver)
    driver.send_signal(signal.SIGTERM)
    out, err = driver.communicate(timeout=30)
    try:
        assert driver.returncode == 143, err
        report = json.loads(out)
        assert report["signal"] == "SIGTERM" and report["interrupted"] is True
        assert set(pids.values()) <= set(report["killed"])
        assert not any(is_running(pid) for pid in pids.values())
        assert not still_writes(log)
        assert report["records"] == [], "the record outlived the child it describes"
    finally:
        kill_all(list(pids.values()))


def test_a_running_child_is_recorded_and_the_record_removed_when_it_ends(
    tmp_path: Path,
) -> None:
    """While recording, each running child has a record (pid and start time) in the
    directory; once the call returned, none is left."""
    records = tmp_path / "records"
    with AgentGroups(records).recording():
        # The record is written just after the child starts: the child waits to see it.
        wait_then_list = (
            f"for i in $(seq 100); do ls {records} 2>/dev/null | grep -q . && break; "
            f"sleep 0.05; done; ls {records}; echo $$"
        )
        result = run_process(["sh", "-c", wait_then_list], cwd=tmp_path, timeout=30)
    *listed, child_pid = result.stdout.split()
    assert len(listed) == 1 and listed[0].startswith(f"{child_pid}-"), result.stdout
    assert list(records.glob("*.json")) == []


def test_next_run_kills_what_a_killed_run_left_behind(
    tree: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """phasegate and its watchdog both killed with SIGKILL: the kernel stops the agent
    itself, and reap_leftover_agents kills the rest of its tree (the setsid grandchild
    included) from the record, so a resumed run never works alongside it."""
    _, log, records = tree
    driver = start_driver(tree, tmp_path)
    pids = wait_for_tree(log, driver)
    watchdog = watchdog_of(driver.pid)
    try:
        os.kill(watchdog, signal.SIGKILL)
        driver.kill()
        driver.communicate(timeout=30)
        deadline = time.monotonic() + 5
        while is_running(pids["agent"]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not is_running(pids["agent"]), "PR_SET_PDEATHSIG did not stop the agent"
        assert is_running(pids["grandchild"]) and still_writes(log), "nothing was left over"
        assert len(list(records.glob("*.json"))) == 1

        killed = reap_leftover_agents(records)

        assert {pids["child"], pids["grandchild"]} <= set(killed)
        assert not any(is_running(pid) for pid in pids.values())
        assert not still_writes(log)
        assert list(records.glob("*.json")) == []
    finally:
        kill_all(list(pids.values()))


def test_a_record_whose_phasegate_still_runs_is_left_alone(tmp_path: Path) -> None:
    """reap_leftover_agents never kills the children of a phasegate that is alive."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        me = identity(sleeper.pid)
        assert me is not None
        AgentGroups(tmp_path).add(me, "tag-of-a-live-run", ["sleep"])  # owner: this process
        assert reap_leftover_agents(tmp_path) == []
        assert is_running(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_record_whose_pid_was_reused_kills_nothing(tmp_path: Path) -> None:
    """A recorded pid now held by another process (other start time) is not killed."""
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        me = identity(bystander.pid)
        assert me is not None
        path = AgentGroups(tmp_path).add(
            type(me)(me.pid, me.start - 1), "tag-nobody-carries", ["agent"]
        )
        record = json.loads(path.read_text())
        record["owner_pid"], record["owner_start"] = 999_999_999, 1  # a phasegate long gone
        path.write_text(json.dumps(record))
        assert reap_leftover_agents(tmp_path) == []
        assert is_running(bystander.pid)
        assert not path.exists()
    finally:
        bystander.kill()
        bystander.wait()


def test_an_unreadable_record_is_dropped_without_killing(tmp_path: Path) -> None:
    """A record torn by a crash names nothing that could be killed safely: it is removed."""
    (tmp_path / "123-456.json").write_text('{"pid": 1, "sta')
    assert reap_leftover_agents(tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_a_child_that_exits_leaves_no_setsid_grandchild_behind(tmp_path: Path) -> None:
    """When the child ends on its own, a grandchild that left its session is killed too."""
    code = (
        "import os, subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', "
        "'import os, time; os.setsid(); time.sleep(60)']); print(p.pid)"
    )
    result = run_process([sys.executable, "-c", code], cwd=tmp_path, timeout=30)
    grandchild = int(result.stdout.split()[0])
    try:
        deadline = time.monotonic() + 5
        while is_running(grandchild) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not is_running(grandchild)
    finally:
        kill_all([grandchild])
