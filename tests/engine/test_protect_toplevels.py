"""What git says of the work tree a call confined to its outputs works in is asked once
per run: its top again as soon as the folder's own ``.git`` is made, removed or replaced,
the engine state files it tracks again as soon as its index changes (and each time while
the index changed within the racy window): what is kept never outlives what it was found
from."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from phasegate.engine import protect_outputs
from phasegate.engine.protect_cache import SETTLED_NS
from phasegate.engine.protect_outputs import GitFacts
from phasegate.engine.state import ENGINE_FILE


def git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders git was asked about."""
    found: list[str] = []
    ask = protect_outputs._toplevel

    def counting(workdir: Path) -> str | None:
        found.append(os.fspath(workdir))
        return ask(workdir)

    monkeypatch.setattr(protect_outputs, "_toplevel", counting)
    return found


def test_a_work_trees_top_is_asked_once(tmp_path: Path, asked: list[str]) -> None:
    repo = Path(os.path.realpath(tmp_path)) / "repo"
    git_init(repo)
    tops = GitFacts()
    assert [tops.toplevel(repo) for _ in range(3)] == [os.fspath(repo)] * 3
    assert len(asked) == 1


def test_a_git_folder_removed_or_made_is_asked_again(tmp_path: Path, asked: list[str]) -> None:
    repo = Path(os.path.realpath(tmp_path)) / "repo"
    git_init(repo)
    tops = GitFacts()
    assert tops.toplevel(repo) == os.fspath(repo)
    shutil.rmtree(repo / ".git")
    outside = protect_outputs._toplevel(repo)  # whatever git says without it
    assert outside != os.fspath(repo)
    del asked[:]
    assert tops.toplevel(repo) == outside
    assert tops.toplevel(repo) == outside
    git_init(repo)
    assert tops.toplevel(repo) == os.fspath(repo)
    assert len(asked) == 3


def test_a_git_folder_replaced_by_a_file_is_asked_again(tmp_path: Path, asked: list[str]) -> None:
    repo = Path(os.path.realpath(tmp_path)) / "repo"
    git_init(repo)
    tops = GitFacts()
    assert tops.toplevel(repo) == os.fspath(repo)
    shutil.rmtree(repo / ".git")
    (repo / ".git").write_text("gitdir: /nowhere\n")  # not a repository any more
    assert tops.toplevel(repo) != os.fspath(repo)
    assert len(asked) == 2


def test_a_folder_below_the_top_is_asked_each_time(tmp_path: Path, asked: list[str]) -> None:
    repo = Path(os.path.realpath(tmp_path)) / "repo"
    git_init(repo)
    below = repo / "sub"
    below.mkdir()
    tops = GitFacts()
    assert [tops.toplevel(below) for _ in range(2)] == [os.fspath(repo)] * 2
    assert len(asked) == 2


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The ``git ls-files`` questions asked."""
    found: list[list[str]] = []
    run = protect_outputs._git_answer

    def counting(cwd: str, args: list[str]) -> bytes | None:
        if args[0] == "ls-files":
            found.append(args)
        return run(cwd, args)

    monkeypatch.setattr(protect_outputs, "_git_answer", counting)
    return found


def settle() -> None:
    time.sleep(SETTLED_NS / 1e9 + 0.05)


def test_the_tracked_states_are_asked_again_when_the_index_changes(
    tmp_path: Path, listed: list[list[str]]
) -> None:
    repo = Path(os.path.realpath(tmp_path)) / "repo"
    git_init(repo)
    first = repo / "work" / "a" / ENGINE_FILE
    first.parent.mkdir(parents=True)
    first.write_text("{}")
    git(repo, "add", "-A")
    settle()
    facts = GitFacts()
    top = os.fspath(repo)
    assert facts.tracked_states(top) == (os.fspath(first),)
    assert facts.tracked_states(top) == (os.fspath(first),)
    assert len(listed) == 1  # the index kept its signature
    second = repo / "work" / "b" / ENGINE_FILE
    second.parent.mkdir(parents=True)
    second.write_text("{}")
    git(repo, "add", "-A")  # a new index: seen at once, settled or not
    assert set(facts.tracked_states(top)) == {os.fspath(first), os.fspath(second)}
    assert set(facts.tracked_states(top)) == {os.fspath(first), os.fspath(second)}
    git(repo, "rm", "-q", "--cached", os.fspath(first))
    assert facts.tracked_states(top) == (os.fspath(second),)


def test_an_index_changed_within_the_racy_window_is_asked_each_time(
    tmp_path: Path, listed: list[list[str]]
) -> None:
    """An index written within the same clock tick as a change git made could keep its
    signature: until it settled, git is asked again at each call."""
    repo = Path(os.path.realpath(tmp_path)) / "repo"
    git_init(repo)
    state = repo / "work" / "a" / ENGINE_FILE
    state.parent.mkdir(parents=True)
    state.write_text("{}")
    git(repo, "add", "-A")
    soon = time.time_ns() + 60 * 10**9  # as if just written, however slowly this test runs
    os.utime(repo / ".git" / "index", ns=(soon, soon))
    facts = GitFacts()
    top = os.fspath(repo)
    assert facts.tracked_states(top) == (os.fspath(state),)
    assert facts.tracked_states(top) == (os.fspath(state),)
    assert len(listed) == 2


def test_what_git_failed_to_say_is_asked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Path(os.path.realpath(tmp_path)) / "repo"
    git_init(repo)
    state = repo / "work" / "a" / ENGINE_FILE
    state.parent.mkdir(parents=True)
    state.write_text("{}")
    git(repo, "add", "-A")
    settle()
    run = protect_outputs._git_answer
    monkeypatch.setattr(protect_outputs, "_git_answer", lambda cwd, args: None)
    facts = GitFacts()
    assert facts.tracked_states(os.fspath(repo)) == ()
    monkeypatch.setattr(protect_outputs, "_git_answer", run)
    assert facts.tracked_states(os.fspath(repo)) == (os.fspath(state),)
