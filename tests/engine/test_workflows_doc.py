"""docs/workflows.md and the code cannot drift apart.

- every field of every workflow model has a row in its field table, and every
  row names a field the model has (the rule "every field of a workflow YAML
  is read by code, and documented");
- the worked example printed in the page is the shipped file, byte for byte;
- its console sessions give the output shown when run as shown;
- its example plug-in, installed through an entry point, is found by
  ``validate`` and runs; without it, ``validate`` says what the page says.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel
from review_loop_helpers import ITEM, WORKFLOW, make_repo, script, words

from phasegate.workflow import model, phases
from phasegate.workflow.example_files import EXAMPLES_DIR, copy_example

#: The repository the page's examples are run in.
SHOP = "/src/shop"
DOC = Path(__file__).resolve().parents[2] / "docs" / "workflows.md"
TEXT = DOC.read_text(encoding="utf-8")
NODE_MODELS = (
    model.AgentNode,
    model.GateNode,
    model.ForeachNode,
    model.CheckNode,
    model.ActionNode,
    model.EndNode,
)
#: The table of a model documents these fields (the rest are documented elsewhere).
OWN_FIELDS: dict[str, tuple[type[BaseModel], type[BaseModel] | None]] = {
    **{cls.__name__: (cls, model._Node) for cls in NODE_MODELS},
    "LinearWorkflow": (phases.LinearWorkflow, model.Workflow),
    "Phase": (phases.Phase, None),
}


def field_names(cls: type[BaseModel]) -> set[str]:
    """The names a YAML file uses for ``cls``'s fields (``with``, not ``with_``)."""
    return {info.alias or name for name, info in cls.model_fields.items()}


def documented(marker: str) -> set[str]:
    """The first-column names of the table that follows ``<!-- fields: marker -->``."""
    found = re.search(rf"<!-- fields: {re.escape(marker)} -->\n((?:\|.*\n)+)", TEXT)
    assert found is not None, f"docs/workflows.md has no field table for {marker}"
    rows = found.group(1).splitlines()[2:]  # the header and its rule
    return {re.match(r"\| `([^`]+)` \|", row).group(1) for row in rows}


def workflow_models() -> list[type[BaseModel]]:
    """Every model a workflow file is read into (model.py, and the phases shorthand)."""
    found = [
        cls
        for module in (model, phases)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseModel) and cls.__module__ == module.__name__
    ]
    return [cls for cls in found if cls.__name__ != "_Strict"]


@pytest.mark.parametrize("cls", workflow_models(), ids=lambda cls: cls.__name__)
def test_every_field_of_every_workflow_model_is_documented(cls: type[BaseModel]) -> None:
    """Each model's table lists exactly its fields: none missing, none the code lacks."""
    fields = field_names(cls)
    _, base = OWN_FIELDS.get(cls.__name__, (cls, None))
    if base is not None:
        fields -= field_names(base)
    if cls is model._Node:
        fields.add("kind")  # every kind has it; documented once with the common fields
    assert documented(cls.__name__) == fields


def test_every_node_kind_has_its_section() -> None:
    """The node kinds the model accepts are the ones the page describes."""
    kinds = {cls.model_fields["kind"].annotation.__args__[0] for cls in NODE_MODELS}
    assert kinds == {"agent", "gate", "foreach", "check", "action", "end"}
    for kind in kinds:
        assert f"`{kind}`" in TEXT


def block(marker: str) -> str:
    """The fenced block that follows ``<!-- marker -->``."""
    found = re.search(rf"<!-- {re.escape(marker)} -->\n```[a-z]*\n(.*?)```\n", TEXT, re.S)
    assert found is not None, f"docs/workflows.md has no block {marker!r}"
    return found.group(1)


def test_the_worked_example_is_the_shipped_file() -> None:
    """The YAML the page walks through is what `init --example review-loop` copies."""
    assert block("example: review-loop.yaml") == (EXAMPLES_DIR / f"{WORKFLOW}.yaml").read_text()


def phasegate_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, **(extra or {})}


def replay(repo: Path, session: str, env: dict[str, str] | None = None) -> None:
    """Run each ``$ command`` of a console block; its shown lines must be in its output,
    in order (``...`` stands for lines left out), and it must exit 0 unless the block
    shows its exit code with ``echo $?``."""
    commands: list[tuple[str, list[str]]] = []
    for line in session.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif line.strip() != "..." and commands:
            commands[-1][1].append(line)
    code = 0
    for index, (command, shown) in enumerate(commands):
        if command == "echo $?":
            assert shown == [str(code)]
            continue
        argv = shlex.split(command, comments=True)
        assert argv[0] == "phasegate"
        done = subprocess.run(
            [sys.executable, "-m", "phasegate", *argv[1:]],
            cwd=repo,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            env=phasegate_env(env),
        )
        code = done.returncode
        printed = (done.stdout + done.stderr).splitlines()
        position = 0
        for wanted in shown:
            assert wanted in printed[position:], (command, wanted, printed)
            position = printed.index(wanted, position) + 1
        following = commands[index + 1 : index + 2]
        if not (following and following[0][0] == "echo $?"):
            assert code == 0, (command, done.stderr)


def test_the_console_sessions_print_what_the_page_shows(tmp_path: Path) -> None:
    """Copy, validate and list the example; run it with `auto`; stop at its gate, list the
    decision, answer it, and run on: each command as shown, with the output shown."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    replay(repo, block("console: start"))
    config = repo / ".phasegate" / "config.yaml"
    text = config.read_text()
    assert "  default: {backend: scripted}\n" in text
    config.write_text(text.replace("{backend: scripted}", "{backend: auto}"))
    replay(repo, block("console: auto"))
    critic = [words("REJECTED", "Limit per API key instead"), words("APPROVED")]
    gated = make_repo(tmp_path / "gated", script(critic))
    replay(gated, block("console: gate"))
    status = subprocess.run(
        [sys.executable, "-m", "phasegate", "status", ITEM, "--json"],
        cwd=gated,
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"label": "done"' in status.stdout


def test_validate_reports_the_broken_example_as_the_page_shows(tmp_path: Path) -> None:
    """The page's two problems, word for word (file, line, field, message)."""
    repo = make_repo(tmp_path / "repo", None, backend="auto")
    path = repo / ".phasegate" / "workflows" / f"{WORKFLOW}.yaml"
    text = path.read_text()
    text = text.replace("    on: {pass: tasks, rejected: decide}\n", "    on: {pass: tasks}\n")
    text = text.replace("{parser: markdown-tasks,", "{parser: markdown-todo,")
    path.write_text(text)
    command, *shown = block("output: broken example").replace(SHOP, str(repo)).splitlines()
    argv = shlex.split(command.removeprefix("$ "))
    done = subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=repo,
        capture_output=True,
        text=True,
        env=phasegate_env(),
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == shown


def install_doc_plugin(site: Path) -> None:
    """Install the page's plug-in as pip would: its module, and a distribution whose
    entry_points.txt holds the page's entry point."""
    site.mkdir()
    (site / "my_phasegate_plugins.py").write_text(block("example: plug-in module"))
    toml = block("example: plug-in entry point").splitlines()
    group = re.fullmatch(r'\[project\.entry-points\."(.+)"\]', toml[0]).group(1)
    name, value = (part.strip().strip('"') for part in toml[1].split("=", 1))
    dist = site / "my_phasegate_plugins-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-phasegate-plugins\n")
    (dist / "entry_points.txt").write_text(f"[{group}]\n{name} = {value}\n")


def with_architect(repo: Path) -> Path:
    """The example with the page's second reviewer, `when: big-plan`."""
    path = repo / ".phasegate" / "workflows" / f"{WORKFLOW}.yaml"
    text = path.read_text()
    critic = (
        "    reviewers:\n      - role: critic\n        prompt: critic.md\n        reader: words\n"
        "        on: {APPROVED: pass, NEEDS_REVISION: revise, REJECTED: rejected, "
        "UNCLEAR: revise}\n"
    )
    assert critic in text
    text = text.replace(critic, block("example: plug-in use"))
    text = text.replace(
        "  reviewer:\n",
        "  architect:\n    description: Reviews big plans.\n    access: read-only\n  reviewer:\n",
    )
    path.write_text(text)
    (path.parent / "prompts" / WORKFLOW / "architect.md").write_text("Review the plan.\n")
    return path


@pytest.mark.parametrize("tasks", [2, 6])
def test_the_example_plugin_registered_through_an_entry_point(tmp_path: Path, tasks: int) -> None:
    """Without the package `validate` says what the page shows; installed, the workflow
    validates and the architect reviews only a plan of more than five tasks."""
    agents = script([words("APPROVED")])
    plan = "# Plan\n\n## Tasks\n\n" + "".join(f"- [ ] T{n} step {n}\n" for n in range(1, tasks + 1))
    agents["planner"]["plan"][0]["write"] = {"{item_dir}/plan.md": plan}
    agents["architect"] = {"plan": [{"verdict": {"approved": True, "summary": "ok", "issues": []}}]}
    agents["developer"]["*"] = [{"write": {"{item_dir}/reports/{task}.md": "done\n"}}]
    agents["reviewer"]["*"] = [{"verdict": {"approved": True, "summary": "ok", "issues": []}}]
    repo = make_repo(tmp_path / "repo", agents)
    relative = with_architect(repo).relative_to(repo)
    missing = subprocess.run(
        [sys.executable, "-m", "phasegate", "validate", str(relative)],
        cwd=repo,
        capture_output=True,
        text=True,
        env=phasegate_env(),
    )
    assert missing.returncode == 2
    shown = block("output: plug-in missing").strip().replace(SHOP, str(repo))
    assert shown in missing.stderr.splitlines()
    site = tmp_path / "site"
    install_doc_plugin(site)
    installed = phasegate_env({"PYTHONPATH": str(site)})
    for args in (["validate", str(relative)], ["run", ITEM]):
        done = subprocess.run(
            [sys.executable, "-m", "phasegate", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=installed,
        )
        assert done.returncode == 0, done.stderr
    roles = (repo / ".phasegate" / "calls.jsonl").read_text()
    assert ('"role": "architect"' in roles) is (tasks > 5)


def test_copying_the_example_writes_the_files_the_page_names(tmp_path: Path) -> None:
    """The prompts the page links to are the ones `init --example` copies."""
    copied = copy_example(WORKFLOW, tmp_path)
    names = sorted(p.name for p in copied.written)
    assert names == ["critic.md", "implement.md", "plan.md", "review-loop.yaml", "review.md"]
    assert "prompts/review-loop/" in TEXT
