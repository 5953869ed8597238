"""What an agent is shown is built afresh for every call: the template as it is on disk
now, every placeholder filled with its value, and no file outside the repository shown
through a symlink (docs/workflows.md "Prompt templates"; the engine's prompt building)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from engine_helpers import calls, init_repo, loop_workflow, make_repo

from phasegate.agents.base import AgentRequest, PromptPart
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.engine import template_text as template_module
from phasegate.engine.confine import inside
from phasegate.engine.template_text import inside_any, template_text

EVERY_PLACEHOLDER = (
    "{{ artifact_path }}|{{item}}|{{ phase }}|{{node}}|{{iteration}}/{{max_iterations}}|"
    "{{role}}|{{artifact}}|{{item_dir}}|{{mode}}|{{description}}|"
    "{{workflow}}\n"
)

WORKFLOW = loop_workflow(2)


def _repo(tmp_path: Path, executor_prompt: str) -> tuple[Path, Path]:
    root = init_repo(tmp_path / "repo")
    folder = root / ".phasegate" / "workflows"
    prompts = folder / "prompts" / "loop"
    prompts.mkdir(parents=True)
    (prompts / "executor.md").write_text(executor_prompt)
    (prompts / "reviewer.md").write_text("Review {{ phase }} in {{ artifact_path }}.\n")
    (folder / "loop.yaml").write_text(WORKFLOW)
    return root, prompts / "executor.md"


def _agent(request: AgentRequest) -> ScriptedReply:
    phase, iteration = request.labels["phase"], int(request.labels["iteration"])
    if request.role == "executor":
        return ScriptedReply(write={f"{{item_dir}}/{phase}.md": f"# {phase} {iteration}\n"})
    approved = iteration >= 2
    issues = [] if approved else [{"severity": "blocker", "description": "more"}]
    return ScriptedReply(structured={"approved": approved, "issues": issues, "summary": "s"})


def test_every_placeholder_of_an_executor_prompt_is_filled_with_its_value(
    tmp_path: Path,
) -> None:
    """Each template variable gets its value for the call (the iteration and budget of
    the call, paths relative to where the agent works); names a call cannot fill
    (``task`` outside a foreach) are empty."""
    root, _ = _repo(tmp_path, EVERY_PLACEHOLDER)
    repo = make_repo(root)
    repo.new("demo", workflow="loop", description="Add a greeting")
    backend = ScriptedBackend(handler=_agent)
    assert repo.run("demo", backends={"default": backend}).status == "completed"
    shown = [r.instructions for r in calls(backend, "executor", "p1")]
    assert shown == [
        "work/demo/p1.md|demo|p1|p1|1/3|executor|p1.md|work/demo|standard|Add a greeting|loop\n",
        "work/demo/p1.md|demo|p1|p1|2/3|executor|p1.md|work/demo|standard|Add a greeting|loop\n",
    ]
    reviews = [r.instructions for r in calls(backend, "reviewer", "p2")]
    assert reviews == ["Review p2 in work/demo/p2.md.\n"] * 2


def test_a_prompt_template_edited_between_runs_is_used_by_the_next_call(tmp_path: Path) -> None:
    """Templates are read for every call: an edit made after one run (in the same
    process, as the dashboard or a library user runs items) is what the next call is
    shown, even when it keeps the file's size."""
    root, template = _repo(tmp_path, "First wording for {{ phase }}.\n")
    repo = make_repo(root)
    repo.new("one", workflow="loop", description="x")
    repo.new("two", workflow="loop", description="x")
    backend = ScriptedBackend(handler=_agent)
    assert repo.run("one", backends={"default": backend}).status == "completed"
    template.write_text("Other wording for {{ phase }}.\n")
    assert repo.run("two", backends={"default": backend}).status == "completed"
    shown = [(r.labels["item"], r.instructions) for r in calls(backend, "executor", "p2")]
    assert shown == [
        ("one", "First wording for p2.\n"),
        ("one", "First wording for p2.\n"),
        ("two", "Other wording for p2.\n"),
        ("two", "Other wording for p2.\n"),
    ]


def test_a_template_rewritten_with_the_same_size_and_time_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kept template is only kept while its file is unchanged: a rewrite that keeps
    its size and modification time (set back by a tool) still changes its change time."""
    monkeypatch.setattr(template_module, "SETTLED_NS", 0)  # keep even a fresh file
    path = tmp_path / "t.md"
    path.write_text("version one\n")
    fixed = time.time_ns() - 10_000_000_000
    os.utime(path, ns=(fixed, fixed))
    assert template_text(path) == "version one\n"
    time.sleep(0.05)  # more than one tick of the file system's clock
    path.write_text("version two\n")
    os.utime(path, ns=(fixed, fixed))
    assert template_text(path) == "version two\n"


def test_a_template_replaced_by_another_file_is_read_again(tmp_path: Path) -> None:
    """Replacing a template (a new file renamed over it) is seen at once, whatever its
    times say."""
    path = tmp_path / "t.md"
    path.write_text("old text\n")
    assert template_text(path) == "old text\n"
    other = tmp_path / "new.md"
    other.write_text("new text\n")
    stat = path.stat()
    os.utime(other, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    other.replace(path)
    assert template_text(path) == "new text\n"


def test_inside_agrees_with_the_path_confinement_check_through_symlinks(tmp_path: Path) -> None:
    """Whether a file may be shown is decided with symlinks followed, the root's
    included, exactly as the confinement check decides it."""
    repo = tmp_path / "repo"
    (repo / "work" / "it").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("x")
    (repo / "work" / "it" / "a.md").write_text("a")
    (repo / "work" / "it" / "out.md").symlink_to(outside / "secret.md")
    (repo / "work" / "dir").symlink_to(outside)
    (repo / "work" / "it" / "in.md").symlink_to(repo / "work" / "it" / "a.md")
    (tmp_path / "alias").symlink_to(repo)
    paths = [
        repo / "work" / "it" / "a.md",
        repo / "work" / "it" / "out.md",
        repo / "work" / "dir" / "secret.md",
        repo / "work" / "it" / "missing.md",
        repo / "work" / "it" / "in.md",
        tmp_path / "alias" / "work" / "it" / "a.md",
        repo / "work" / "it" / ".." / ".." / ".." / "outside" / "secret.md",
        outside / "secret.md",
        repo,
    ]
    root_sets = [[repo, repo / "work" / "it"], [tmp_path / "alias"], [repo / "work" / "it"]]
    for roots in root_sets:
        for path in paths:
            assert inside_any(str(path), roots) == inside(path, roots), (path, roots)
    assert not inside_any(str(repo / "work" / "it" / "out.md"), [repo])
    assert inside_any(str(tmp_path / "alias" / "work" / "it" / "a.md"), [repo])


def test_the_text_of_a_request_is_the_same_each_time_it_is_asked() -> None:
    """A request's prompt text (sent to the agent, counted for tokens) is its parts in
    order, however often it is asked for."""
    request = AgentRequest(
        role="r",
        prompt=(PromptPart("One", "body  \n"), PromptPart("Two", "b2")),
        workdir=Path("."),
        instructions=" Do it. ",
    )
    expected = "Do it.\n\n## One\n\nbody\n\n## Two\n\nb2\n"
    assert request.prompt_text() == expected
    assert request.prompt_text() == expected
    assert request == AgentRequest(
        role="r",
        prompt=(PromptPart("One", "body  \n"), PromptPart("Two", "b2")),
        workdir=Path("."),
        instructions=" Do it. ",
    )
