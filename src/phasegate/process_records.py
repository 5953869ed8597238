"""On-disk records of the children a run has running, so the next run can kill leftovers.

While :meth:`AgentGroups.recording` is active, every child
:func:`phasegate.process.run_process` starts gets a small JSON file in the
records directory (its pid, start time, boot, the tag its descendants carry,
and which phasegate process started it); the file is removed when the child
and its tree are gone. A phasegate killed with SIGKILL leaves its file behind:
:func:`reap_leftover_agents`, called by the next run before it dispatches
anything, kills whatever of that tree still runs. A resumed run therefore
never works alongside an agent of an earlier run.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path

from phasegate import proctree
from phasegate.state.atomic import atomic_write_text

_active: ContextVar[AgentGroups | None] = ContextVar("phasegate_agent_groups", default=None)


def active_groups() -> AgentGroups | None:
    """Where children started now are recorded (``None``: not recorded)."""
    return _active.get()


@dataclass(frozen=True)
class GroupRecord:
    """One recorded child: enough to find its tree again without mistaking a reused pid.

    ``pid`` is also the child's process group and session id (it leads both);
    ``start`` is its start time in clock ticks after boot ``boot``.
    """

    pid: int
    start: int
    boot: str
    tag: str
    command: str
    owner_pid: int
    owner_start: int

    @property
    def child(self) -> proctree.Identity:
        return proctree.Identity(self.pid, self.start)

    @property
    def owner(self) -> proctree.Identity:
        return proctree.Identity(self.owner_pid, self.owner_start)


class AgentGroups:
    """The records of running children under ``directory`` (e.g. next to a work item's lock)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @contextmanager
    def recording(self) -> Iterator[AgentGroups]:
        """Record every child started in this context (threads: run them with its copy)."""
        token = _active.set(self)
        try:
            yield self
        finally:
            _active.reset(token)

    def add(self, child: proctree.Identity, tag: str, argv: Sequence[str] | str) -> Path:
        """Record ``child``; return the record's path (removed by the caller when it is gone)."""
        me = proctree.identity(os.getpid()) or proctree.Identity(os.getpid(), 0)
        command = argv if isinstance(argv, str) else " ".join(argv[:1])
        record = GroupRecord(
            pid=child.pid,
            start=child.start,
            boot=proctree.boot_id(),
            tag=tag,
            command=os.path.basename(command.split(" ", 1)[0])[:80],
            owner_pid=me.pid,
            owner_start=me.start,
        )
        path = self.directory / f"{child.pid}-{child.start}.json"
        # Not fsync'd: after a power cut no child of this boot is left to kill.
        atomic_write_text(path, json.dumps(asdict(record)) + "\n", durable=False)
        return path

    def records(self) -> list[tuple[Path, GroupRecord | None]]:
        """Every record file and what it says (``None``: unreadable, e.g. torn by a crash)."""
        try:
            paths = sorted(self.directory.glob("*.json"))
        except OSError:
            return []
        found: list[tuple[Path, GroupRecord | None]] = []
        for path in paths:
            try:
                found.append((path, _parse(json.loads(path.read_text(encoding="utf-8")))))
            except (OSError, ValueError):
                found.append((path, None))
        return found

    def reap(self) -> list[int]:
        """Kill the trees of children whose phasegate is gone; return the pids killed.

        A record whose phasegate still runs is left alone, and one from an
        earlier boot is only removed (its processes ended with that boot).
        """
        killed: list[int] = []
        this_boot = proctree.boot_id()
        for path, record in self.records():
            if record is not None and proctree.supported():
                if record.boot == this_boot and proctree.is_alive(record.owner):
                    continue
                if record.boot == this_boot:
                    killed += proctree.kill_tree(record.child, record.tag, since=record.start)
            with contextlib.suppress(OSError):
                path.unlink()
        proctree.wait_gone(killed, within=5.0)
        return killed


def _parse(data: object) -> GroupRecord | None:
    if not isinstance(data, dict):
        return None
    texts = ("boot", "tag", "command")
    numbers = ("pid", "start", "owner_pid", "owner_start")
    if not all(isinstance(data.get(k), str) for k in texts):
        return None
    if not all(type(data.get(k)) is int and data[k] >= 0 for k in numbers):
        return None
    return GroupRecord(**{k: data[k] for k in (*numbers, *texts)})


def reap_leftover_agents(directory: Path) -> list[int]:
    """Kill what children of a dead run recorded under ``directory`` left running.

    Call it before dispatching anything, while holding the work item's run
    lock; it returns the pids it killed (empty when nothing was left).
    """
    return AgentGroups(directory).reap()
