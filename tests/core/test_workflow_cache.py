"""The cache of validated workflows (``.phasegate/cache/workflows.json``): a workflow that
loaded once is read back without parsing or checking it again while nothing it depends on
changed; a changed file is loaded again, and a cache that cannot be used is rebuilt.

Each load runs in a new process, as each ``phasegate`` command does (and because a
plug-in registered at run time by another test turns the cache off in its process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phasegate.workflow.cache import cache_path

LOAD = """
import json, sys
from pathlib import Path
from phasegate.errors import WorkflowError
from phasegate.workflow.registry import WorkflowRegistry
try:
    loaded = WorkflowRegistry(Path(sys.argv[1])).get(sys.argv[2])
    found = {"workflow": loaded.workflow.model_dump(mode="json"),
             "prompts": [str(p) for p in loaded.prompt_path]}
except WorkflowError as exc:
    found = {"error": str(exc)}
found["parsed"] = "phasegate.workflow.loader" in sys.modules
print(json.dumps(found))
"""


def load(repo: Path, name: str = "demo", *before: str) -> dict[str, Any]:
    """Workflow ``name`` of ``repo`` loaded in a new process (``parsed``: whether the YAML
    was read and checked rather than taken from the cache)."""
    code = "\n".join(before) + LOAD
    done = subprocess.run(
        [sys.executable, "-c", code, str(repo), name],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


@pytest.fixture
def repo(tmp_path: Path, write_workflow: Any, demo_yaml: str) -> Path:
    """A repository with its own workflow ``demo`` (and its prompt templates)."""
    root = tmp_path / "repo"
    write_workflow(demo_yaml, directory=root / ".phasegate" / "workflows")
    return root


def test_a_workflow_that_loaded_once_is_read_back_from_the_cache(repo: Path) -> None:
    """The second process builds the same workflow without reading the YAML."""
    first = load(repo)
    assert first["parsed"] and cache_path(repo).is_file()
    second = load(repo)
    assert not second["parsed"]
    assert second == {**first, "parsed": False}


def test_an_edited_workflow_file_is_loaded_again(repo: Path) -> None:
    """A changed YAML file is read again (its bytes are part of the key)."""
    load(repo)
    path = repo / ".phasegate" / "workflows" / "demo.yaml"
    path.write_text(
        path.read_text().replace("A small workflow for tests.", "Edited."), encoding="utf-8"
    )
    again = load(repo)
    assert again["parsed"] and again["workflow"]["description"] == "Edited."
    assert not load(repo)["parsed"]


def test_a_deleted_prompt_template_is_not_served_from_the_cache(repo: Path) -> None:
    """The workflow is refused, naming the template, exactly as without a cache."""
    load(repo)
    (repo / ".phasegate" / "workflows" / "prompts" / "demo" / "draft.md").unlink()
    refused = load(repo)
    assert refused["parsed"] and "draft.md" in refused["error"]
    cache_path(repo).unlink()
    assert load(repo)["error"] == refused["error"]


def test_an_edited_prompt_template_is_checked_again(repo: Path) -> None:
    """A template given an unknown placeholder is refused, though its workflow is cached."""
    load(repo)
    draft = repo / ".phasegate" / "workflows" / "prompts" / "demo" / "draft.md"
    draft.write_text("Write {{ no_such_value }} at length.\n", encoding="utf-8")
    refused = load(repo)
    assert "no_such_value" in refused["error"]


@pytest.mark.parametrize(
    "spoil",
    [
        lambda text: "{ not json",
        lambda text: "",
        lambda text: json.dumps({"format": 999, "workflows": json.loads(text)["workflows"]}),
        # The key matches, but the data is not a workflow: it is loaded in full instead.
        lambda text: json.dumps(
            {
                "format": 1,
                "workflows": {
                    name: {**entry, "data": {"name": "demo", "nodes": "nonsense"}}
                    for name, entry in json.loads(text)["workflows"].items()
                },
            }
        ),
    ],
    ids=["not JSON", "empty", "another format", "data that does not validate"],
)
def test_a_cache_that_cannot_be_used_is_ignored_and_rebuilt(repo: Path, spoil: Any) -> None:
    """The workflow loads in full as if there were no cache, and the cache is written anew."""
    first = load(repo)
    path = cache_path(repo)
    path.write_text(spoil(path.read_text(encoding="utf-8")), encoding="utf-8")
    again = load(repo)
    assert again == first
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == 1
    assert not load(repo)["parsed"]


def test_no_cache_is_kept_where_phasegate_has_no_folder(tmp_path: Path) -> None:
    """A repository without ``.phasegate`` is left as it is (built-in workflows load)."""
    plain = tmp_path / "plain"
    plain.mkdir()
    assert "workflow" in load(plain, "feature")
    assert not (plain / ".phasegate").exists()


def test_a_plug_in_registered_at_run_time_turns_the_cache_off(repo: Path) -> None:
    """A registered object, not an installed entry point, decides validity: no cache is
    read or written in that process."""
    register = (
        "from phasegate import plugins\nplugins.register('selectors', 'pick-someone', object())\n"
    )
    assert load(repo, "demo", register)["parsed"]
    assert not cache_path(repo).exists()
    load(repo)
    assert load(repo, "demo", register)["parsed"]
