"""Find and kill the whole process tree of a child, on Linux by walking ``/proc``.

Every child phasegate starts leads its own session and carries a tag in its
environment (``PHASEGATE_PROCESS_TAGS``), which its descendants inherit. The
tree of a child is every process that, at the moment of the kill, descends
from it, is in its session, or carries its tag; so a grandchild that called
``setsid`` is found through its parent while that lives and through its tag
after. (A process that both leaves the session and clears its environment
after its parent exited is out of reach without cgroups, which phasegate does
not require.)

A kill freezes every member with SIGSTOP, scans again until no new member
shows up (a frozen process cannot fork), and then sends SIGKILL to all of
them, so nothing escapes by forking during the kill.

The module needs only the standard library because it is also a script: the
watchdog that each phasegate process starts once (``python -I -S
proctree.py``). phasegate tells it on its stdin about every child it starts
(``+ PID START TAG``) and every child it is done with (``- PID``); when
phasegate's end of the pipe closes, i.e. phasegate exited or died (even by
SIGKILL), the watchdog kills the trees of the children still listed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

#: The environment variable holding the tags of every phasegate child a process descends from.
TAG_VARIABLE = "PHASEGATE_PROCESS_TAGS"
_TAG_ENTRY = TAG_VARIABLE.encode() + b"="
PROC = Path("/proc")
#: How many freeze rounds a kill makes at most (each finds the children forked meanwhile).
MAX_ROUNDS = 50


@dataclass(frozen=True)
class ProcInfo:
    """One process as ``/proc/PID/stat`` describes it."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int  # clock ticks after boot
    state: str


@dataclass(frozen=True)
class Identity:
    """A process named so that a reused pid is not mistaken for it."""

    pid: int
    start: int


def supported() -> bool:
    """Whether process trees can be walked here (Linux with ``/proc``)."""
    return sys.platform.startswith("linux") and (PROC / "self" / "stat").exists()


def new_tag() -> str:
    """A tag no other child carries."""
    return secrets.token_hex(8)


def tagged_environment(env: dict[str, str], tag: str) -> dict[str, str]:
    """``env`` with ``tag`` added to the tags it already carries (nested phasegates)."""
    inherited = env.get(TAG_VARIABLE, "").split()
    return {**env, TAG_VARIABLE: " ".join([*inherited, tag])}


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 1 << 20)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_info(pid: int) -> ProcInfo | None:
    """``pid``'s stat line, or ``None`` when it is gone."""
    raw = _read(f"/proc/{pid}/stat")
    if raw is None:
        return None
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return ProcInfo(
            pid=pid,
            ppid=int(fields[1]),
            pgid=int(fields[2]),
            sid=int(fields[3]),
            start=int(fields[19]),
            state=fields[0].decode("ascii", "replace"),
        )
    except (IndexError, ValueError):
        return None


def identity(pid: int) -> Identity | None:
    """The identity of the live process ``pid``."""
    info = read_info(pid)
    return Identity(pid, info.start) if info is not None else None


def is_alive(who: Identity) -> bool:
    """Whether ``who`` still runs (the same process, not a reuse of its pid; zombies are gone)."""
    info = read_info(who.pid)
    return info is not None and info.start == who.start and info.state not in ("Z", "X")


def boot_id() -> str:
    """This boot's id (process start times are only comparable within one boot)."""
    try:
        return (PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()
    except OSError:
        return ""


def snapshot() -> dict[int, ProcInfo]:
    """Every process visible now, by pid (zombies included)."""
    found: dict[int, ProcInfo] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir(PROC):
            if name.isdigit():
                info = read_info(int(name))
                if info is not None:
                    found[info.pid] = info
    return found


def carries_tag(pid: int, tag: str) -> bool:
    """Whether ``pid`` started with ``tag`` among its environment's phasegate tags."""
    environ = _read(f"/proc/{pid}/environ")
    if environ is None:
        return False
    for entry in environ.split(b"\0"):
        if entry.startswith(_TAG_ENTRY):
            return tag.encode() in entry[len(_TAG_ENTRY) :].split()
    return False


def members(root: Identity | None, tag: str | None, *, since: int) -> set[int]:
    """The pids of ``root``'s tree now: descendants, its session, and carriers of ``tag``.

    Session and descendants count only while ``root`` is the same process (its
    pid, and so its session id, cannot have been reused then); carriers of the
    tag must have started at or after ``since``. Never this process.
    """
    procs = snapshot()
    live = {pid: p for pid, p in procs.items() if p.state not in ("Z", "X")}
    found: set[int] = set()
    root_info = procs.get(root.pid) if root is not None else None
    if root is not None and root_info is not None and root_info.start == root.start:
        children: dict[int, list[int]] = {}
        for info in procs.values():
            children.setdefault(info.ppid, []).append(info.pid)
        stack = [root.pid]
        while stack:
            pid = stack.pop()
            found.add(pid)
            stack.extend(c for c in children.get(pid, ()) if c not in found)
        found.update(pid for pid, p in live.items() if p.sid == root.pid)
    if tag:
        found.update(pid for pid, p in live.items() if p.start >= since and carries_tag(pid, tag))
    found.discard(os.getpid())
    return {pid for pid in found if pid in live}


def _signal(pid: int, signum: int) -> bool:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def terminate_tree(root: Identity | None, tag: str | None, *, since: int) -> list[int]:
    """Ask the tree to stop (SIGTERM to every member), without waiting; return their pids."""
    return sorted(pid for pid in members(root, tag, since=since) if _signal(pid, signal.SIGTERM))


def kill_tree(root: Identity | None, tag: str | None, *, since: int) -> list[int]:
    """Freeze every member of the tree, then SIGKILL them all; return their pids."""
    frozen: set[int] = set()
    for _ in range(MAX_ROUNDS):
        new = members(root, tag, since=since) - frozen
        if not new:
            break
        frozen.update(pid for pid in new if _signal(pid, signal.SIGSTOP))
    for pid in frozen:
        _signal(pid, signal.SIGKILL)
    return sorted(frozen)


def wait_gone(pids: list[int], within: float) -> bool:
    """Wait until no pid in ``pids`` is alive (zombies count as gone)."""
    deadline = time.monotonic() + within
    while True:
        alive = [pid for pid in pids if _alive_pid(pid)]
        if not alive:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _alive_pid(pid: int) -> bool:
    info = read_info(pid)
    return info is not None and info.state not in ("Z", "X")


def watch() -> int:
    """The watchdog: follow the children listed on stdin; at its end, kill those still listed."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    children: dict[int, tuple[Identity, str]] = {}
    pending = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(0, 65536):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                _follow(children, line.decode("ascii", "replace").split())
    for child, tag in children.values():
        kill_tree(child, tag, since=child.start)
    return 0


def _follow(children: dict[int, tuple[Identity, str]], words: list[str]) -> None:
    try:
        if len(words) == 4 and words[0] == "+":
            pid, start = int(words[1]), int(words[2])
            children[pid] = (Identity(pid, start), words[3])
        elif len(words) == 2 and words[0] == "-":
            children.pop(int(words[1]), None)
    except ValueError:
        pass


if __name__ == "__main__":
    sys.exit(watch())
