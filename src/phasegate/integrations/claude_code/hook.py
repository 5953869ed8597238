"""``phasegate hook session-start``: tell a Claude Code session where the work stands.

Claude Code runs this at the start of every session (seed 000 §4) with a
JSON object on stdin (``session_id``, ``cwd``, ``source``...) and injects the
``additionalContext`` of the JSON printed on stdout. The context lists the
*active* work items only: workflow, current phase, review iterations so far,
unresolved reviewer concerns and the next command (as ``phasegate status``
computes it), and warns once per session when the session's directory is not
the item's worktree (TD4).

A hook must never break the session: every failure becomes a line of
context and the exit status is always 0. Only the standard library is
imported here (see :mod:`phasegate.integrations.claude_code.layout`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any, TextIO

from phasegate.integrations.claude_code.layout import Layout, load_layout, state_files
from phasegate.repo_paths import CONFIG_DIR, find_repo_quick

#: Set in the environment of agents phasegate runs itself: their sessions get no context
#: (they must not drive the workflow they are a step of).
AGENT_ENV = "PHASEGATE_AGENT"
EVENTS = ("session-start", "pre-tool-use")
DETAILED_ITEMS = 10
MAX_CONCERNS = 3
DONE = frozenset({"completed", "complete", "done", "archived", "finished"})


def read_state(path: Path, fmt: str) -> dict[str, Any]:
    """Parse a state file; ``ValueError`` with a short reason when it cannot be used."""
    raw = path.read_bytes()
    if not raw.strip():
        raise ValueError("it is empty")
    try:
        if fmt == "yaml":  # rare: only workflows that chose YAML state pay for the parser
            from ruamel.yaml import YAML

            data = YAML(typ="safe", pure=True).load(raw.decode("utf-8"))
        else:
            data = json.loads(raw.decode("utf-8"))
    except Exception as exc:
        raise ValueError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if not isinstance(data, dict):
        raise ValueError("it does not hold an object")
    return data


def expected_next(
    workflow: dict[str, Any],
    current: str | None,
    completed: Collection[str],
    skipped: Collection[str],
) -> list[str]:
    """Mirror of :func:`phasegate.workflow.transitions.expected_next` over the cached layout."""
    phases = workflow["phases"]
    if current is None:
        candidates = [next(iter(phases))]
    elif current not in completed:
        return [current]
    else:
        candidates = list(phases[current]["next"])
    result: list[str] = []
    seen: set[str] = set()
    while candidates:
        name = candidates.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in skipped:
            candidates.extend(phases[name]["next"])
        else:
            result.append(name)
    return result


def next_step(
    name: str, workflow: dict[str, Any], state: dict[str, Any], item_dir: Path
) -> dict[str, Any]:
    """Mirror of ``phasegate status``: next phase, hard block and next command of an item."""
    phases = state.get("phases") or {}
    completed = {n for n, r in phases.items() if isinstance(r, dict) and r.get("completed")}
    skipped = workflow["modes"][state["mode"]]["skip"]
    cursor = (state.get("engine") or {}).get("cursor")
    if cursor:
        next_phase: str | None = cursor["phase"]
    else:
        names = expected_next(workflow, state.get("currentPhase"), completed, skipped)
        next_phase = names[0] if names else None
    blocked = None
    if next_phase is not None and not cursor:
        artifacts = {
            p["artifact"]: (item_dir / p["artifact"]).is_file()
            for p in workflow["phases"].values()
            if p["artifact"]
        }
        missing = [f for f in workflow["phases"][next_phase]["hard"] if not artifacts.get(f)]
        if missing:
            producers = [n for n, p in workflow["phases"].items() if p["artifact"] in missing]
            hint = f"; run the {' and '.join(producers)} phase first" if producers else ""
            verb = "is" if len(missing) == 1 else "are"
            blocked = (
                f"cannot start {next_phase}: {', '.join(missing)} {verb} missing "
                f"(hard prerequisite){hint}"
            )
    command = f"fix the block, then: phasegate run {name}" if blocked else f"phasegate run {name}"
    return {"next_phase": next_phase, "blocked": blocked, "command": command, "cursor": cursor}


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _item_lines(
    repo: Path, cwd: Path, name: str, wf_name: str, workflow: dict[str, Any], state: dict[str, Any]
) -> tuple[list[str], bool]:
    """The context lines of one active item, and whether the session is in its worktree."""
    mode = state.get("mode", "?")
    lines = [f"## {name} (workflow {wf_name}, mode {mode})"]
    if state.get("description"):
        lines.append(f"- Request: {' '.join(str(state['description']).split())[:300]}")
    in_worktree = False
    if workflow.get("commands"):
        # Its own commands keep its own fields: show its phase and their next step.
        phase = str(state.get("phase") or state.get("currentPhase") or "(not recorded)")
        lines.append(f"- Phase: {phase}")
        known = workflow.get("own_next", {}).get(phase)
        if known:
            lines.append(f"- Next command: {known.replace('{id}', name)}")
        else:
            commands = ", ".join(f"phasegate {c}" for c in workflow["commands"])
            lines.append(f"- Next: continue it with its own commands ({commands})")
    else:
        step = next_step(name, workflow, state, repo / workflow["items_dir"] / name)
        limit = workflow["modes"][mode]["max_iterations"]
        cursor = step["cursor"]
        if cursor:
            lines.append(
                f"- Phase: {cursor['phase']} in progress (review iteration "
                f"{cursor.get('iteration', 1)} of {limit}, at {cursor.get('stage', 'execute')})"
            )
        else:
            current = state.get("currentPhase") or "(not started)"
            lines.append(f"- Phase: {current}; next phase: {step['next_phase'] or '(none)'}")
        phases = state.get("phases") or {}
        total = sum(int(r.get("iterations") or 0) for r in phases.values() if isinstance(r, dict))
        lines.append(f"- Review iterations so far: {total}")
        concerns = [
            (phase, str(note).splitlines()[0] if str(note) else "")
            for phase in workflow["phases"]
            if isinstance(phases.get(phase), dict)
            for note in phases[phase].get("reviewerNotes") or []
        ]
        if concerns:
            lines.append(f"- Unresolved reviewer concerns ({len(concerns)}):")
            lines += [f"  - {phase}: {note[:200]}" for phase, note in concerns[:MAX_CONCERNS]]
            if len(concerns) > MAX_CONCERNS:
                lines.append(
                    f"  - ... {len(concerns) - MAX_CONCERNS} more: phasegate status {name}"
                )
        if step["blocked"]:
            lines.append(f"- Blocked: {step['blocked']}")
        lines.append(f"- Next command: {step['command']}")
    worktree = state.get("worktree")
    if worktree:
        path = (repo / str(worktree)).resolve()
        branch = f" (branch {state['branch']})" if state.get("branch") else ""
        lines.append(f"- Worktree: {path}{branch}")
        in_worktree = _inside(cwd, path)
        if not path.is_dir():
            lines.append(f"- Worktree {worktree} is missing: `phasegate run {name}` explains.")
    return lines, in_worktree


def session_context(payload: dict[str, Any], environ: dict[str, str] | None = None) -> str:
    """The ``additionalContext`` for a session started with hook input ``payload``."""
    env = os.environ if environ is None else environ
    if env.get(AGENT_ENV):
        return ""
    cwd = Path(str(payload.get("cwd") or os.getcwd())).resolve()
    repo = find_repo_quick(cwd)
    if repo is None or not (repo / CONFIG_DIR).is_dir():
        return ""  # no phasegate here (items are only made after .phasegate exists)
    layout: Layout = load_layout(repo)
    blocks: list[tuple[bool, float, str, list[str]]] = []
    warnings: list[tuple[str, Path]] = []
    here = False
    for wf_name, name, path in state_files(repo, layout):
        workflow = layout["workflows"][wf_name]
        rel = path.relative_to(repo)
        try:
            state = read_state(path, workflow["state_format"])
            if str(state.get("status", "active")) in DONE or state.get("phase") == "archived":
                continue
            lines, inside = _item_lines(repo, cwd, name, wf_name, workflow, state)
        except (OSError, ValueError) as exc:
            lines, inside = _corrupt(name, wf_name, rel, str(exc)), False
        except Exception as exc:  # valid JSON, unexpected shape: same advice
            lines, inside = _corrupt(name, wf_name, rel, f"unexpected content: {exc!r}"), False
        else:
            if state.get("worktree") and not inside:
                warnings.append((name, (repo / str(state["worktree"])).resolve()))
        here = here or inside
        blocks.append((not inside, -_mtime(path), name, lines))
    problems = [f"phasegate could not read a workflow: {p}" for p in layout.get("problems", [])]
    if not blocks:
        return "\n".join(problems)
    blocks.sort(key=lambda block: block[:3])
    count = len(blocks)
    text = [
        f"phasegate: {count} active work item{'s' if count != 1 else ''} in {repo}. "
        "phasegate enforces each item's workflow: advance items only with the phasegate "
        "commands below (or the /phasegate-* slash commands), never by editing their state "
        "files (.meta.json and the like).",
        *problems,
    ]
    for index, (_, _, name, lines) in enumerate(blocks):
        if index < DETAILED_ITEMS:
            text += ["", *lines]
        else:
            text.append(f"- also active: {name} (phasegate status {name})")
    if not here:
        for name, path in warnings:
            text += [
                "",
                f"WARNING: this session's directory {cwd} is not the worktree of work item "
                f"{name}. Work on {name} belongs in {path} (cd {path}).",
            ]
    return "\n".join(text)


def _corrupt(name: str, wf_name: str, rel: Path, reason: str) -> list[str]:
    return [
        f"## {name} (workflow {wf_name})",
        f"- Its state file {rel} cannot be read ({reason}); phasegate left it untouched.",
        f"- Next: tell the user; restore the file (e.g. git checkout -- {rel}) and run "
        f"phasegate status {name}. Do not rewrite it by hand.",
    ]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def session_start_output(payload: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
    """The JSON Claude Code expects: ``{}`` when there is nothing to say."""
    context = session_context(payload, environ)
    if not context:
        return {}
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


def run_hook(event: str, stdin: TextIO, stdout: TextIO) -> int:
    """Answer hook ``event`` (``session-start`` or ``pre-tool-use``); always exit status 0."""
    try:
        raw = "" if stdin.isatty() else stdin.read()
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            payload = {}
    except (OSError, ValueError):
        payload = {}
    try:
        if event == "pre-tool-use":
            from phasegate.integrations.claude_code.guard import pre_tool_use

            output = pre_tool_use(payload)
        else:
            output = session_start_output(payload)
    except Exception as exc:  # never fail the session: say what went wrong instead
        if event == "pre-tool-use":
            output = None  # an unknown target is not ours to block
        else:
            output = {
                "hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": f"phasegate hook failed: {type(exc).__name__}: {exc}",
                }
            }
    if output is not None:
        stdout.write(json.dumps(output) + "\n")
    return 0


def main(event: str) -> int:
    """Console entry of ``phasegate hook EVENT`` (see :mod:`phasegate.entry`)."""
    return run_hook(event, sys.stdin, sys.stdout)
