"""The ``feature`` view keeps another phase's artifact from a node inside a ``foreach``
body too: what that node's call changed of an artifact it is given is put back and the
call fails, as for a node at the workflow's top level."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.api import Repo

WORKFLOW = """\
name: nested
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
    outputs: [spec.md, plan.md]
  - id: tasks
    kind: foreach
    items: {parser: markdown-tasks, file: plan.md}
    body:
      - id: build
        executor: executor
        inputs: [spec.md]
        outputs: ["notes/{{ task }}.md"]
      - id: task-done
        kind: end
  - id: done
    kind: end
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


def test_a_foreach_body_node_changing_a_phase_artifact_it_is_given_is_put_back(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("# sample\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    (root / ".phasegate/workflows").mkdir(parents=True)
    (root / ".phasegate/prompts/nested").mkdir(parents=True)
    (root / ".phasegate/workflows/nested.yaml").write_text(WORKFLOW)
    for phase in ("specify", "build"):
        (root / f".phasegate/prompts/nested/{phase}.md").write_text(f"Do {phase}.\n")
    (root / ".phasegate/config.yaml").write_text(
        "roles:\n  default: {backend: scripted}\nretries: {agent: 1}\n"
    )
    repo = Repo(root)
    repo.new("it", workflow="nested", description="x")
    builds: list[str] = []

    def handler(request: AgentRequest) -> ScriptedReply:
        if request.labels.get("phase") == "specify" or "specify" in str(request.labels):
            return ScriptedReply(
                write={"{item_dir}/spec.md": "the spec\n", "{item_dir}/plan.md": "- [ ] one\n"}
            )
        builds.append("build")
        if len(builds) == 1:
            (root / "work/it/spec.md").write_text("weakened\n")
        return ScriptedReply(write={"{item_dir}/notes/one.md": "notes\n"})

    repo.run("it", backends={"executor": ScriptedBackend(handler=handler)})
    assert (root / "work/it/spec.md").read_text() == "the spec\n"
    assert len(builds) == 2  # the call that changed it failed, and was made again
    lines = (root / "work/it/.journal.jsonl").read_text().splitlines()
    (violation,) = [e for e in map(json.loads, lines) if e["event"] == "agent.violation"]
    assert violation["kept"] == [
        "another phase's artifact (work/it/spec.md; what it held is copied to "
        "work/it/put-back/spec-1.md), which its phase may not change"
    ]
