"""``{{ label }}`` (the node's label), ``{{ next }}`` (the label's next command) and
``{{ command }}`` in an agent's prompt template are filled, as docs/workflows.md
"Prompt templates" lists them and as a gate's question fills them."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import init_repo, make_repo

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply

WORKFLOW = """\
name: labelled
items_dir: work
default_mode: standard
modes:
  standard: {max_iterations: 1}
roles:
  writer: {access: write}
labels:
  drafting:
    description: The draft is being written.
    next: "phasegate run {{ item }} # at {{ label }}"
nodes:
  - id: a
    label: drafting
    executor: writer
    prompt: writer.md
    outputs: [{file: draft.md}]
    on: {pass: done}
  - id: done
    kind: end
"""


def _reply(request: AgentRequest) -> ScriptedReply:
    return ScriptedReply(write={"{item_dir}/draft.md": "# Draft\n"})


def test_the_label_of_the_node_fills_its_placeholder(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    folder = root / ".phasegate" / "workflows"
    (folder / "prompts" / "labelled").mkdir(parents=True)
    (folder / "labelled.yaml").write_text(WORKFLOW)
    (folder / "prompts" / "labelled" / "writer.md").write_text(
        "label=[{{ label }}] phase=[{{ phase }}] node=[{{ node }}] next=[{{ next }}]\n"
    )
    repo = make_repo(root)
    repo.new("demo", workflow="labelled", description="x")
    backend = ScriptedBackend(handler=_reply)
    assert repo.run("demo", backends={"default": backend}).status == "completed"
    assert [r.instructions for r in backend.requests] == [
        "label=[drafting] phase=[drafting] node=[a] next=[phasegate run demo # at drafting]\n"
    ]
