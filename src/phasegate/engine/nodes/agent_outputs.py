"""An agent node's outputs, checked in code: missing, empty or invalid artifacts (seed 000)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate.engine.plugin_api import ItemParser, plugin
from phasegate.engine.prompting import PromptFor, read_file
from phasegate.verdicts.model import Issue, Verdict
from phasegate.workflow.model import AgentNode

if TYPE_CHECKING:
    from phasegate.engine.run import Run


def missing_outputs(run: Run, node: AgentNode, prompts: PromptFor, policy: str) -> list[str]:
    """The outputs with ``policy`` that are absent, empty, hold too few items or are invalid."""
    return [
        f"{rel}: {problem}" if problem else rel
        for rel, problem in output_problems(run, node, prompts, policy)
    ]


def output_problems(
    run: Run, node: AgentNode, prompts: PromptFor, policy: str
) -> list[tuple[str, str | None]]:
    """``(output, problem)`` per output that is wrong; ``problem`` is ``None`` when it is
    absent or empty, else what its parser found wrong with it."""
    found: list[tuple[str, str | None]] = []
    node_path = prompts.path
    for output, name in zip(node.outputs, prompts.outputs(), strict=True):
        if output.missing != policy:
            continue
        path = prompts.item_path(name)
        rel = run.rel(node_path, path)
        if name.endswith("/"):
            if not path.is_dir() or not any(p.is_file() for p in path.rglob("*")):
                found.append((rel, None))
            continue
        text = read_file(path)
        if text is None or not text.strip():
            found.append((rel, None))
            continue
        if output.parser is not None:
            parser: ItemParser = plugin("parsers", output.parser)
            problems = parser.problems(prompts.ctx, path)
            if not problems and parser.count(path) < output.min_items:
                problems = ["it lists no items"]
            found += [(rel, problem) for problem in problems]
    return found


def output_examples(run: Run, node: AgentNode, prompts: PromptFor) -> dict[str, str]:
    """Valid examples of the outputs whose parsers offer one (the ``auto`` backend writes them)."""
    examples: dict[str, str] = {}
    for output, name in zip(node.outputs, prompts.outputs(), strict=True):
        if output.parser is None:
            continue
        path = run.item.item_dir / name
        text = plugin("parsers", output.parser).example(prompts.ctx, path)
        if text is not None:
            examples[run.item.relative(path, run.state)] = text
    return examples


def previous_missing(run: Run, node: AgentNode) -> bool:
    """Whether the previous artifact the node requires is missing or empty."""
    if not (node.previous and node.previous_required):
        return False
    return not (read_file(run.item.item_dir / node.previous) or "").strip()


def precheck(run: Run, path: str, node: AgentNode, prompts: PromptFor) -> Verdict | None:
    """Seed 000 interface 2's error cases, decided in code without asking a reviewer."""
    from phasegate.engine.prompting import implementation_changes
    from phasegate.errors import BlockedError
    from phasegate.workflow.transitions import lost_previous, producers

    problems: list[str] = []
    if previous_missing(run, node):
        lost = lost_previous(
            run.workflow, node, run.artifacts(), run.completed_nodes(), run.item.name
        )
        if lost is not None:
            # Made, then deleted while this node went on: no verdict can make it again.
            raise BlockedError(f"{run.label(path)} cannot go on: {lost}")
        made_by = producers(run.workflow, str(node.previous))
        hint = f" (run the {made_by[0]} phase first)" if made_by else ""
        if made_by and not run.workflow.commands:
            # The command that makes it: a plain run goes on past this node instead.
            hint = f" (run the {made_by[0]} phase first: {_phase_command(run, made_by[0])})"
        problems.append(f"The previous artifact {node.previous} is missing or empty{hint}.")
    for name, problem in output_problems(run, node, prompts, "revise"):
        if problem is None:
            problems.append(f"The artifact {name} is missing or empty.")
        else:
            problems.append(f"The artifact {name} is not valid: {problem}.")
    if node.reviews_code and not node.outputs and not implementation_changes(run, path).strip():
        problems.append("No implementation changes were found in the work tree.")
    if not problems:
        return None
    return Verdict(
        word="REJECTED",
        issues=tuple(Issue(severity="blocker", description=p) for p in problems),
        summary=" ".join(problems),
        source="engine",
    )


def _phase_command(run: Run, node_id: str) -> str:
    return f"phasegate run {run.item.name} --phase {node_id}"
