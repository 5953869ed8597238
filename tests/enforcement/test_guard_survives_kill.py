"""What an agent changed of the files its call may not change is put back even when
phasegate is killed during the call (SIGKILL: an agent with a shell can kill its parent):
the copies taken before the call are on disk, and the next run puts them back before it
does anything else, says so and journals it. A person's edit made while no run goes on
is theirs: it is kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_process import run_cli

WORKFLOW = """\
name: twophase
items_dir: work
view:
  plugin: feature
modes:
  standard: {max_iterations: 1}
roles:
  executor: {access: write}
nodes:
  - id: specify
    executor: executor
    outputs: [spec.md]
  - id: build
    executor: executor
    inputs: [spec.md]
    outputs: [notes.md]
  - id: done
    kind: end
"""

#: Run in a process of its own: the build phase's executor rewrites spec.md (another
#: phase's artifact), a prompt and .meta.json, forges a journal line, then kills phasegate
#: before its call is over.
KILLING_RUN = """
import json, os, signal, sys
from pathlib import Path
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo
root = Path(sys.argv[1])
def handler(request):
    if "build" not in str(request.labels):
        return ScriptedReply(write={"{item_dir}/spec.md": "the spec\\n"})
    (root / "work/it/spec.md").write_text("weakened\\n")
    (root / ".phasegate/prompts/twophase/build.md").write_text("do anything\\n")
    meta = root / "work/it/.meta.json"
    meta.write_text(meta.read_text().replace('"active"', '"completed"'))
    with open(root / "work/it/.journal.jsonl", "a") as handle:
        handle.write(json.dumps({"event": "forged.line", "item": "it"}) + "\\n")
    os.kill(os.getpid(), signal.SIGKILL)
Repo(root).run("it", backends={"executor": ScriptedBackend(handler=handler)})
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "README.md").write_text("# sample\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    (root / ".phasegate/workflows").mkdir(parents=True)
    (root / ".phasegate/prompts/twophase").mkdir(parents=True)
    (root / ".phasegate/workflows/twophase.yaml").write_text(WORKFLOW)
    for phase in ("specify", "build"):
        (root / f".phasegate/prompts/twophase/{phase}.md").write_text(f"Do {phase}.\n")
    (root / ".phasegate/config.yaml").write_text(
        "roles:\n  default: {backend: scripted}\n"
        "backends:\n  scripted: {script: .phasegate/agents.yaml}\n"
    )
    (root / ".phasegate/agents.yaml").write_text(
        "executor:\n"
        '  specify:\n    - write: {"{item_dir}/spec.md": "the spec\\n"}\n'
        '  build:\n    - write: {"{item_dir}/notes.md": "notes\\n"}\n'
    )
    made = run_cli(root, "new", "it", "--workflow", "twophase", "--description", "x")
    assert made.returncode == 0, made.stderr
    return root


def events(root: Path) -> list[dict[str, Any]]:
    lines = (root / "work/it/.journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def killed_in_build(root: Path) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", KILLING_RUN, str(root)], capture_output=True, timeout=120
    )
    assert killed.returncode == -9, killed.stderr
    # Left as the agent made them: the copies taken before the call are on disk.
    assert (root / "work/it/spec.md").read_text() == "weakened\n"


def test_what_an_agent_changed_before_killing_phasegate_is_put_back_by_the_next_run(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "repo")
    killed_in_build(root)
    again = run_cli(root, "run", "it")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "put back" in again.stderr and "killed" in again.stderr
    assert "work/it/spec.md" in again.stderr
    assert (root / "work/it/spec.md").read_text() == "the spec\n"
    assert (root / ".phasegate/prompts/twophase/build.md").read_text() == "Do build.\n"
    found = events(root)
    assert not [e for e in found if e["event"] == "forged.line"]
    (restored,) = [e for e in found if e["event"] == "guard.restored"]
    assert "work/it/spec.md" in restored["paths"]
    assert ".phasegate/prompts/twophase/build.md" in restored["paths"]
    assert restored["forged_events"] == ["forged.line"]
    meta = json.loads((root / "work/it/.meta.json").read_text())
    assert meta["status"] == "completed"  # the run itself completed the item
    from phasegate.engine.protect_pending import record_folder

    assert not (record_folder(root) / "twophase--it.guard").exists()


def test_a_persons_edit_made_while_no_run_goes_on_is_kept(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    assert run_cli(root, "run", "it", "--phase", "specify").returncode == 0
    (root / "work/it/spec.md").write_text("the person's spec\n")
    again = run_cli(root, "run", "it")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "put back" not in again.stderr
    assert (root / "work/it/spec.md").read_text() == "the person's spec\n"
    assert not [e for e in events(root) if e["event"] == "guard.restored"]
