"""A document phase of the feature workflow may change its artifact and nothing else:
code its executor writes, another phase's artifact it edits, a person's file it changes
or deletes are put back when its call ends and journaled as ``agent.violation``; the call
stands (its artifact is reviewed). What the person had before the call is kept as it was."""

from __future__ import annotations

import json
from pathlib import Path

from engine_helpers import approving_script, calls, git, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.engine.runner import RunOptions

ITEM = Path("docs/features/item")


def _violations(repo: Path) -> list[dict[str, object]]:
    lines = (repo / ITEM / ".journal.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == "agent.violation"]


def test_a_spec_executor_cannot_write_code_or_edit_the_brainstorm(git_repo: Path) -> None:
    (git_repo / "lib.py").write_text("KEEP = 1\n")
    git(git_repo, "add", "lib.py")
    git(git_repo, "commit", "-q", "-m", "lib")
    (git_repo / "README.md").write_text("# sample\n\nthe person's unsaved edit\n")
    (git_repo / "notes.txt").write_text("the person's notes\n")
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    script = approving_script()
    script["executor"]["specify"] = [
        {
            "write": {
                "{item_dir}/spec.md": "# Spec\nR1\n",
                "src/evil.py": "import os\n",
                "{item_dir}/brainstorm.md": "rewritten by the spec phase\n",
                "README.md": "# replaced\n",
            },
            "delete": ["lib.py", "notes.txt"],
        }
    ]
    backend = ScriptedBackend(script=script)
    repo.run("item", backends={"default": backend}, options=RunOptions(until="specify"))
    (found,) = _violations(git_repo)
    assert found["role"] == "executor" and found["reverted"] is True
    assert sorted(found["outside_outputs"]) == [  # type: ignore[call-overload]
        "README.md",
        "docs/features/item/brainstorm.md",
        "lib.py",
        "notes.txt",
        "src/evil.py",
    ]
    assert "files other than its outputs (" in str(found["kept"])
    # Nothing is lost: what the call wrote is copied aside before it is put back (a person
    # editing the same file meanwhile finds their edit there).
    copies = git_repo / ".phasegate/cache/put-back" / str(found["attempt"])
    assert f"what it wrote is copied in .phasegate/cache/put-back/{found['attempt']}" in str(
        found["kept"]
    )
    assert (copies / "README.md").read_text() == "# replaced\n"
    assert (copies / "src/evil.py").read_text() == "import os\n"
    assert not (git_repo / "src/evil.py").exists()
    assert (git_repo / ITEM / "brainstorm.md").read_text() == "# Brainstorm\nproblem\n"
    assert (git_repo / "README.md").read_text() == "# sample\n\nthe person's unsaved edit\n"
    assert (git_repo / "lib.py").read_text() == "KEEP = 1\n"
    assert (git_repo / "notes.txt").read_text() == "the person's notes\n"
    assert (git_repo / ITEM / "spec.md").read_text() == "# Spec\nR1\n"  # its own output
    # The call stands: its spec is reviewed, without the code it wrote.
    (review,) = calls(backend, "chain-reviewer", "specify")
    assert "rewritten by the spec phase" not in review.prompt_text()


def test_a_document_phase_that_writes_only_its_artifact_runs_as_before(git_repo: Path) -> None:
    (git_repo / "notes.txt").write_text("the person's notes\n")
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    backend = ScriptedBackend(script=approving_script())
    repo.run("item", backends={"default": backend}, options=RunOptions(until="create-tasks"))
    assert _violations(git_repo) == []
    assert (git_repo / ITEM / "tasks.md").is_file()
    assert (git_repo / "notes.txt").read_text() == "the person's notes\n"


def test_implement_may_still_write_code(git_repo: Path) -> None:
    repo = make_repo(git_repo)
    repo.new("item", mode="standard")
    backend = ScriptedBackend(script=approving_script())
    repo.run("item", backends={"default": backend}, options=RunOptions(until="implement"))
    assert _violations(git_repo) == []
    assert (git_repo / "app.py").read_text() == "print('hi')\n"


def test_a_folder_made_to_look_like_another_item_shelters_nothing(git_repo: Path) -> None:
    """Other items' folders are their runs' own (found before the call): one the agent
    makes by writing an engine state next to its code is not."""
    repo = make_repo(git_repo)
    repo.new("other", mode="standard")
    repo.new("item", mode="standard")
    script = approving_script()
    script["executor"]["specify"] = [
        {
            "write": {
                "{item_dir}/spec.md": "# Spec\nR1\n",
                "src/.engine.json": "{}\n",
                "src/evil.py": "import os\n",
            }
        }
    ]
    backend = ScriptedBackend(script=script)
    repo.run("item", backends={"default": backend}, options=RunOptions(until="specify"))
    assert not (git_repo / "src/evil.py").exists()
    assert not (git_repo / "src/.engine.json").exists()
    assert (git_repo / "docs/features/other/.engine.json").is_file()
    (found,) = _violations(git_repo)
    assert sorted(found["outside_outputs"]) == [  # type: ignore[call-overload]
        "src/.engine.json",
        "src/evil.py",
    ]
