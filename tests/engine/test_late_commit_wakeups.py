"""The late-commit thread (see ItemCommits.waiting) is woken only when a new deadline is
earlier than the one it already waits until; a later deadline is found when it wakes.
Whatever the order of the deadlines, the held-back commit is written once the last one
armed has passed, and never while no deadline is armed."""

from __future__ import annotations

import threading
import time
from typing import Any

from phasegate.engine.item_commits import _LateCommit


class _Commits:
    def __init__(self) -> None:
        self.flushed: list[float] = []
        self.done = threading.Event()

    def flush(self) -> None:
        self.flushed.append(time.monotonic())
        self.done.set()


def _late() -> tuple[_LateCommit, _Commits]:
    commits = _Commits()
    late = _LateCommit(commits)  # type: ignore[arg-type]
    return late, commits


def test_later_deadlines_armed_meanwhile_are_honoured_when_the_thread_wakes() -> None:
    late, commits = _late()
    # Fast work: armed and disarmed again and again, each deadline later than the last.
    for step in range(20):
        late.arm(time.monotonic() + 0.5 + step * 0.01)
        late.disarm()
    assert not commits.flushed
    last = time.monotonic() + 0.3
    late.arm(last)  # slow work: its deadline is after the one the thread sleeps until
    assert commits.done.wait(5)
    assert commits.flushed[0] >= last
    late.disarm()


def test_an_earlier_deadline_wakes_a_thread_waiting_for_a_later_one() -> None:
    late, commits = _late()
    late.arm(time.monotonic() + 60)
    time.sleep(0.05)  # the thread now waits until the far deadline
    soon = time.monotonic() + 0.05
    late.arm(soon)
    assert commits.done.wait(5), "the earlier deadline was not seen"
    assert commits.flushed[0] >= soon
    late.disarm()


def test_a_disarmed_deadline_commits_nothing() -> None:
    late, commits = _late()
    late.arm(time.monotonic() + 0.5)
    late.disarm()
    time.sleep(0.7)
    assert commits.flushed == []
    late.arm(time.monotonic() + 0.05)  # the thread waits without a deadline: woken
    assert commits.done.wait(5)
    late.disarm()


def test_a_failed_late_commit_is_kept_for_the_engine_thread() -> None:
    class Failing:
        def flush(self) -> None:
            raise OSError("disk full")

    late = _LateCommit(Failing())  # type: ignore[arg-type]
    late.arm(time.monotonic() + 0.02)
    deadline = time.monotonic() + 5
    while late.failure is None and time.monotonic() < deadline:
        time.sleep(0.01)
    late.disarm()
    failure: Any = late.failure
    assert isinstance(failure, OSError)
