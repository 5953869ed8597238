"""The feature view's files (``.meta.json``, ``.review-history.md``) are brought up to date
from what changed at each state commit, yet always hold exactly what a full render of the
committed state gives (seed 000, interfaces 3 and 4); nothing unchanged is written again,
and a file someone edited or deleted is written again."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from engine_helpers import init_repo, make_repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.engine.runner import RunOptions
from phasegate.engine.state import EngineState
from phasegate.views.feature import FeatureView, _lines_json
from phasegate.views.files import ViewFile

SECRET = "view-secret-value-8731"
ARTIFACTS = {"brainstorm": "brainstorm.md", "specify": "spec.md", "design": "design.md"}


def test_view_files_equal_a_full_render_of_the_committed_state_at_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reviewers reject (notes, issues with a secret and non-ASCII text) and approve; at
    every agent call ``.meta.json`` and ``.review-history.md`` are byte for byte what a
    fresh view renders from ``.engine.json``, the secret is never in them, and the history
    is not written again when no review iteration was added."""
    monkeypatch.setenv("VIEW_TEST_API_KEY", SECRET)
    monkeypatch.setenv("PHASEGATE_COALESCE_SECONDS", "0")
    root = init_repo(tmp_path / "repo")
    repo = make_repo(root)
    repo.new("demo", description=f"Grüße {SECRET}")
    item = repo.item("demo")
    history_files: list[tuple[bytes, int, int]] = []  # (content, inode, mtime) at each call
    compared: list[str] = []

    def compare(tag: str) -> None:
        fresh_item = repo.item("demo")
        state = EngineState.decode(item.engine_path.read_bytes(), item.engine_path)
        fresh = FeatureView(fresh_item, {"state_file": ".fresh.json", "history_file": ".fresh.md"})
        fresh.render(state)
        # ... and what the plain formatter writes for the redacted document.
        plain = _lines_json(fresh_item.redactor.data(fresh.document(state)))
        assert (item.item_dir / ".meta.json").read_bytes() == plain, tag
        for name, reference in ((".meta.json", ".fresh.json"), (".review-history.md", ".fresh.md")):
            written = item.item_dir / name
            expected = item.item_dir / reference
            if not expected.exists():
                assert not written.exists(), tag
                continue
            assert written.read_bytes() == expected.read_bytes(), f"{name} at {tag}"
            assert SECRET not in written.read_text()
            expected.unlink()
        history = item.item_dir / ".review-history.md"
        if history.exists():
            found = history.stat()
            history_files.append((history.read_bytes(), found.st_ino, found.st_mtime_ns))
        compared.append(tag)

    def agent(request: AgentRequest) -> ScriptedReply:
        phase = request.labels["phase"]
        iteration = int(request.labels["iteration"])
        compare(f"{request.role} {phase} {iteration}")
        if request.role == "executor":
            return ScriptedReply(write={f"{{item_dir}}/{ARTIFACTS[phase]}": f"# {phase} ✓\n"})
        if iteration < 2:
            issue = {"severity": "blocker", "description": f"{phase}: {SECRET} ✗\nsecond line"}
            return ScriptedReply(
                structured={"approved": False, "issues": [issue], "summary": f"no {SECRET}"}
            )
        return ScriptedReply(structured={"approved": True, "issues": [], "summary": "ok"})

    backend = ScriptedBackend(handler=agent)
    repo.run("demo", backends={"default": backend}, options=RunOptions(until="specify", yes=True))
    compare("between runs")
    repo.run("demo", backends={"default": backend}, options=RunOptions(until="design", yes=True))
    compare("end")
    assert len(compared) >= 14
    for before, after in itertools.pairwise(history_files):
        if after[0] == before[0]:
            assert after[1:] == before[1:]  # not written again
    # Appended to: replaced at most when a phase's section is first placed before another's.
    assert len({inode for _, inode, _ in history_files}) <= len(ARTIFACTS)


def test_a_view_file_is_written_only_when_its_bytes_or_the_file_changed(tmp_path: Path) -> None:
    """The same bytes are not written again while the file is the one written; a file
    edited or deleted by someone else is written again; an append goes to the file as
    written, never to one someone replaced."""
    path = tmp_path / "item" / ".meta.json"
    view_file = ViewFile(path)
    assert view_file.write(b'{"a": 1}\n')  # the folder is made
    first = path.stat()
    assert not view_file.write(b'{"a": 1}\n')
    assert path.stat().st_ino == first.st_ino
    assert view_file.write(b'{"a": 2}\n')
    assert path.read_bytes() == b'{"a": 2}\n'

    path.write_bytes(b'{"a": 9}\n')  # edited in place, same size
    os.utime(path, ns=(first.st_atime_ns, first.st_mtime_ns - 10**9))
    assert view_file.write(b'{"a": 2}\n')
    assert path.read_bytes() == b'{"a": 2}\n'

    path.unlink()
    assert view_file.write(b'{"a": 2}\n')
    assert path.read_bytes() == b'{"a": 2}\n'

    assert view_file.append(b"more\n")
    assert path.read_bytes() == b'{"a": 2}\nmore\n'
    path.write_bytes(b"someone else's\n")
    assert not view_file.append(b"more\n")
    assert path.read_bytes() == b"someone else's\n"
    assert not [p for p in path.parent.iterdir() if ".tmp-" in p.name]


def test_a_history_file_edited_between_runs_is_rendered_again(tmp_path: Path) -> None:
    """A run starting on a history file that does not hold what the state says writes it
    again from the state (an edit is not appended to)."""
    root = init_repo(tmp_path / "repo")
    repo = make_repo(root)
    repo.new("demo", description="Add a greeting")

    def agent(request: AgentRequest) -> ScriptedReply:
        phase = request.labels["phase"]
        if request.role == "executor":
            return ScriptedReply(write={f"{{item_dir}}/{ARTIFACTS[phase]}": f"# {phase}\n"})
        return ScriptedReply(structured={"approved": True, "issues": [], "summary": "fine"})

    backend = ScriptedBackend(handler=agent)
    repo.run("demo", backends={"default": backend}, options=RunOptions(until="brainstorm"))
    history = repo.item("demo").item_dir / ".review-history.md"
    before = history.read_text()
    history.write_text("edited by hand\n")
    repo.run("demo", backends={"default": backend}, options=RunOptions(until="specify"))
    after = history.read_text()
    assert "edited by hand" not in after
    assert after.startswith(before)
    assert "## Phase: specify" in after


def test_no_secret_reaches_the_item_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never write secrets to disk: the brief each commit appends to the item index
    (``.phasegate/cache/index.jsonl``) carries reviewers' concerns, and is redacted like
    every other file phasegate writes."""
    monkeypatch.setenv("VIEW_TEST_API_KEY", SECRET)
    root = init_repo(tmp_path / "repo")
    repo = make_repo(root)
    repo.new("demo", description="Add a greeting")

    def agent(request: AgentRequest) -> ScriptedReply:
        if request.role == "executor":
            return ScriptedReply(write={"{item_dir}/brainstorm.md": "# Brainstorm\n"})
        issue = {"severity": "blocker", "description": f"the key {SECRET} is in the text"}
        return ScriptedReply(
            structured={"approved": False, "issues": [issue], "summary": f"no: {SECRET}"}
        )

    backend = ScriptedBackend(handler=agent)
    repo.run("demo", backends={"default": backend}, options=RunOptions(until="brainstorm"))
    index = (root / ".phasegate" / "cache" / "index.jsonl").read_text()
    assert "[REDACTED]" in index  # the concern is there, without the secret
    assert SECRET not in index
    written = [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]
    assert not [p for p in written if SECRET.encode() in p.read_bytes()]
