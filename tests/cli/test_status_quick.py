"""``phasegate status`` (the item table) starts without the engine: it finds the items
through the cached workflow layout and reads their rows from the item index, and shows
exactly what the full path (every workflow loaded, unindexed items read in full) shows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import approving_script, init_repo, make_repo

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.cli.item_rows import item_rows, quick_item_rows
from phasegate.engine.runner import RunOptions
from phasegate.integrations.claude_code.layout import layout_path

#: Modules the table must not need while the index tells it everything.
HEAVY = (
    "pydantic",
    "phasegate.config",
    "phasegate.engine.item",
    "phasegate.engine.items",
    "phasegate.workflow.model",
    "phasegate.workflow.loader",
    "ruamel",
)

CODE = f"""
import contextlib, io, json, sys
from phasegate.cli import main
with contextlib.redirect_stdout(io.StringIO()) as shown:
    code = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m.startswith({HEAVY!r}))
print(json.dumps({{"code": code, "out": shown.getvalue(), "heavy": heavy}}))
"""


def _cli(root: Path, *args: str) -> dict[str, object]:
    """``phasegate *args`` in a new process: exit code, stdout, heavy modules imported."""
    done = subprocess.run(
        [sys.executable, "-c", CODE, *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _repo_with_items(tmp_path: Path) -> Repo:
    repo = make_repo(init_repo(tmp_path / "repo"))
    backend = ScriptedBackend(script=approving_script())
    for name, until in (("fresh", None), ("halfway", "design"), ("done", "")):
        repo.new(name, description=f"Item {name}")
        if until is not None:
            options = RunOptions(until=until or None, yes=True)
            repo.run(name, backends={"default": backend}, options=options)
    return repo


def _full_table(root: Path) -> str:
    """The table the full path prints (every workflow loaded)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from phasegate.cli.status_command import _print_rows\n"
        "from phasegate.cli.item_rows import item_rows\n"
        "from phasegate.config import load_config\n"
        "from phasegate.workflow.registry import WorkflowRegistry\n"
        "root = Path(sys.argv[1])\n"
        "_print_rows(item_rows(root, WorkflowRegistry(root), load_config(root)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_the_table_loads_no_workflow_when_the_index_tells_every_row(tmp_path: Path) -> None:
    """Every item committed by phasegate: the table comes from the index and the layout
    alone (no pydantic, config model, engine or workflow loader), and it is the table the
    full path prints."""
    repo = _repo_with_items(tmp_path)
    first = _cli(repo.root, "status")  # may build the layout
    assert layout_path(repo.root).is_file()
    found = _cli(repo.root, "status")
    assert found["code"] == 0 and found["heavy"] == []
    assert found["out"] == first["out"] == _full_table(repo.root)
    assert "halfway" in str(found["out"]) and "completed" in str(found["out"])


def test_quick_rows_equal_the_full_rows_for_every_kind_of_item(tmp_path: Path) -> None:
    """Fresh, part-way and completed items, one whose state file changed since its index
    entry, a corrupt one, and a change written by hand (a workflow whose state a person
    may edit, read in full): the same rows in the same order either way."""
    repo = _repo_with_items(tmp_path)
    repo.new("edited", description="changed after its commit")
    engine = repo.item("edited").item_dir / ".engine.json"
    data = json.loads(engine.read_text(encoding="utf-8"))
    data["description"] = "edited by hand"
    engine.write_text(json.dumps(data), encoding="utf-8")
    repo.new("broken", description="corrupt")
    (repo.item("broken").item_dir / ".engine.json").write_text("{ not json", encoding="utf-8")
    change = repo.root / "changes" / "hand-made"
    change.mkdir(parents=True)
    (change / "STATE.yaml").write_text("change_id: hand-made\nphase: plan\n", encoding="utf-8")
    quick = quick_item_rows(repo.root)
    assert quick is not None
    assert quick == item_rows(repo.root, repo.registry, repo.config)
    by_id = {row["id"]: row for row in quick}
    assert set(by_id) == {"fresh", "halfway", "done", "edited", "broken", "hand-made"}
    assert "error" in by_id["broken"]


def test_a_workflow_that_no_longer_loads_sends_status_down_the_full_path(
    tmp_path: Path,
) -> None:
    """A repository workflow whose prompt template was deleted fails to load: the layout
    names the problem, so ``status`` takes the full path, which leaves that workflow's
    items out as it always has; an invalid config is still exit code 2."""
    repo = make_repo(init_repo(tmp_path / "repo"))
    workflows = repo.root / ".phasegate" / "workflows"
    source = Path(__file__).parents[2] / "src/phasegate/workflow/examples"
    example = next(source.glob("*.yaml"))
    (workflows / "prompts").mkdir(parents=True)
    (workflows / example.name).write_bytes(example.read_bytes())
    shutil.copytree(source / "prompts" / example.stem, workflows / "prompts" / example.stem)
    repo = Repo(repo.root)
    repo.new("mine", workflow=example.stem, description="of the repository's workflow")
    repo.new("plain", description="a feature")
    shown = _cli(repo.root, "status")
    assert "mine" in str(shown["out"]) and "plain" in str(shown["out"])
    for template in (workflows / "prompts" / example.stem).iterdir():
        template.unlink()
    shown = _cli(repo.root, "status")
    assert shown["code"] == 0
    assert "plain" in str(shown["out"]) and "mine" not in str(shown["out"])
    assert shown["out"] == _full_table(repo.root)
    (repo.root / ".phasegate" / "config.yaml").write_text("nonsense: [\n", encoding="utf-8")
    broken = subprocess.run(
        [sys.executable, "-m", "phasegate", "status"],
        cwd=repo.root,
        capture_output=True,
        text=True,
    )
    assert broken.returncode == 2 and "config.yaml" in broken.stderr


#: The modules of other workflows' plug-ins (their views, parsers, actions).
OTHER_WORKFLOWS = ("phasegate.change.", "phasegate.team.", "phasegate.implement.")

ITEM_CODE = """
import contextlib, io, json, sys
from phasegate.cli import main
with contextlib.redirect_stdout(io.StringIO()) as shown:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "out": shown.getvalue(), "modules": sorted(sys.modules)}))
"""


def test_status_of_one_item_loads_no_other_workflows_plug_ins(tmp_path: Path) -> None:
    """``phasegate status NAME`` looks for the item in every workflow, but a workflow with
    no folder for it is not asked through its view: the change, team and implement
    workflows' modules are not imported to show a feature item (and a hand-written change
    is still found)."""
    repo = _repo_with_items(tmp_path)
    _cli(repo.root, "status")  # the workflows are validated and cached once

    def shown(name: str) -> tuple[str, list[str]]:
        done = subprocess.run(
            [sys.executable, "-c", ITEM_CODE, "status", name],
            cwd=repo.root,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        found = json.loads(done.stdout.strip().splitlines()[-1])
        assert found["code"] == 0, found
        return found["out"], [m for m in found["modules"] if m.startswith(OTHER_WORKFLOWS)]

    out, others = shown("halfway")
    assert "halfway (feature" in out
    assert others == []
    change = repo.root / "changes" / "hand-made"
    change.mkdir(parents=True)
    (change / "STATE.yaml").write_text("change_id: hand-made\nphase: proposed\n", encoding="utf-8")
    out, others = shown("hand-made")
    assert "hand-made (change" in out
    assert "phasegate.change.view" in others
