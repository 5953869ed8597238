"""``phasegate hook session-start``: tell a Claude Code session where the work stands.

Claude Code runs this at the start of every session (seed 000 §4) with a
JSON object on stdin (``session_id``, ``cwd``, ``source``...) and injects the
``additionalContext`` of the JSON printed on stdout. The context lists the
*active* work items only (not those that ended: completed, stopped or blocked
at an end): workflow, current phase, review iterations so far,
unresolved reviewer concerns, pending decisions and the next command (as
``phasegate status`` computes it), and warns once per session when the
session's directory is not the item's worktree (TD4).

It reads the item index phasegate keeps (``.phasegate/cache/index.jsonl``,
see :mod:`phasegate.engine.index`) rather than every item's state, shows at
most :data:`DETAILED_ITEMS` items in detail (those whose worktree holds the
session first, then the most recently changed) and names the rest in one
bounded line, so it stays fast and small with a thousand items. The state
files of the items it shows are read to report a corrupt one, and so is that
of an item whose index line says it ended, which leaves the item out only when
the state file holds that line's brief: the index is no guarded file, and a
line written by hand (or left from another version of the state file) must not
hide an active item. An item waiting on the budget question, or stopped on its
answer ``stop``, whose config changed since is told as ``phasegate status NAME``
tells it (a cap raised there may have made the question moot), with the engine,
loaded only then.

A hook must never break the session: every failure becomes a line of
context and the exit status is always 0. Only the standard library is
imported here (see :mod:`phasegate.integrations.claude_code.layout`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from phasegate.engine.index import head_brief, head_in_state, read_heads
from phasegate.engine.live_run import (
    budget_held,
    cap_raised,
    left_midway,
    live_runs,
    watch_command,
)
from phasegate.integrations.claude_code import EVENTS as EVENTS
from phasegate.integrations.claude_code.layout import (
    ENGINE_FILE,
    item_dirs,
    load_layout,
    state_identity,
)
from phasegate.repo_paths import CONFIG_DIR, CONFIG_FILE, find_repo_quick
from phasegate.suggested_commands import with_workflow

TYPE_CHECKING = False  # typing is not imported at run time (8 ms of every hook call)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from phasegate.engine.index import Head
    from phasegate.integrations.claude_code.layout import Layout

#: Set in the environment of agents phasegate runs itself: their sessions get no context
#: (they must not drive the workflow they are a step of).
AGENT_ENV = "PHASEGATE_AGENT"
DETAILED_ITEMS = 10
LISTED_ITEMS = 40
MAX_CONCERNS = 3
#: Statuses of items that ended: completed, or stopped or blocked at an end (the engine
#: sets ``stopped`` and ``blocked`` only there). ``phasegate status`` shows them with no
#: next command and ``phasegate run`` has nothing to run: they are not active. A change
#: in phase ``complete`` has not ended: it is ready for ``phasegate archive`` (seed 002),
#: or waits on a merge by hand after archive found conflicts.
DONE = frozenset({"completed", "done", "archived", "finished", "stopped", "blocked"})
#: The id of the decision a budget cap asks (``phasegate.engine.budget``, not imported here).
BUDGET_DECISION = "budget"


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


def next_step(
    name: str, workflow: dict[str, Any], brief: dict[str, Any], folder: Path
) -> dict[str, Any]:
    """Mirror of ``phasegate status`` for the hook: next phase, hard block and next command.

    The brief was computed at the item's last commit; a hard prerequisite of
    the node the item waits at is checked again now (a file may be gone since), as is
    the previous artifact it requires when a completed node made it (``run`` blocks on
    it too: :func:`phasegate.workflow.transitions.lost_previous`).
    """
    blocked = brief.get("blocked")
    at = brief.get("at")
    if not blocked and not brief.get("inProgress") and at in workflow.get("nodes", {}):
        missing = [f for f in workflow["nodes"][at]["hard"] if not _has_content(folder / f)]
        if missing:
            verb = "is" if len(missing) == 1 else "are"
            made_by = [p for f in missing for p in workflow.get("producers", {}).get(f, [])]
            hint = f"; run the {' and '.join(made_by)} phase first" if made_by else ""
            if len(made_by) == 1 and not workflow.get("commands"):
                hint += f": phasegate run {name} --phase {made_by[0]}"
            blocked = (
                f"cannot start {workflow['nodes'][at]['label']}: {', '.join(missing)} {verb} "
                f"missing or empty (hard prerequisite){hint}"
            )
    kept = brief.get("previousRequired")
    if (
        not blocked
        and not brief.get("inProgress")
        and isinstance(kept, dict)
        and at
        and not _has_content(folder / str(kept.get("file")))
    ):
        # The previous artifact the node needs, made by a completed node, is gone since.
        maker = kept.get("madeBy")
        again = f": phasegate run {name} --phase {maker}" if not workflow.get("commands") else ""
        blocked = (
            f"cannot start {at}: {kept.get('file')}, which the {maker} phase makes, is "
            f"missing or empty though that phase completed; put it back, or run the {maker} "
            f"phase again{again}"
        )
    command = str(brief.get("nextCommand") or f"phasegate run {name}")
    if blocked and not brief.get("decisions") and not command.startswith("fix the block"):
        command = f"fix the block, then: {command}"
    return {
        "next_phase": brief.get("nextPhase"),
        "blocked": blocked,
        "command": command,
        "cursor": brief.get("inProgress"),
    }


def _checks_failed(
    name: str, workflow: dict[str, Any], brief: dict[str, Any], blocked: str
) -> bool:
    """Whether the phase the item is at stopped because its checks still failed when its
    iterations were spent: the brief's ``blockedBy`` says so (``{"by": "checks", "node":
    ...}``). A brief written before it was recorded says it in the block's wording only
    (``NAME: PHASE ended checks-failed``)."""
    blocked_by = brief.get("blockedBy")
    if isinstance(blocked_by, dict):
        return blocked_by.get("by") == "checks" and blocked_by.get("node") == brief.get("at")
    if "blockedBy" in brief:
        return False  # recorded: nothing blocked the item, or not its checks
    node = workflow.get("nodes", {}).get(brief.get("at")) or {}
    head = f"{name}: {node.get('label') or brief.get('label')} ended checks-failed"
    return blocked == head or blocked.startswith(f"{head}: ")


def _going(
    workflow: dict[str, Any], brief: dict[str, Any], folder: Path, live: dict[str, Any] | None
) -> tuple[str, dict[str, Any] | None]:
    """How the node an item is at goes, as ``phasegate status`` says it: ``in progress``
    while a run goes on (or before one started it); ``interrupted`` when no run goes on and
    its last run left the node midway (killed, Ctrl-C); ``stopped`` when that run stopped on
    an agent call that failed every attempt (returned too)."""
    if live is not None:
        return " in progress", None
    files = workflow.get("files") or []
    failure = left_midway(brief, folder / str(files[2]) if len(files) > 2 else None)
    if failure is None:
        return " in progress", None
    return (", stopped" if failure else ", interrupted"), failure


def _resumed(failure: dict[str, Any] | None) -> str:
    """What follows the progress of a node its last run left midway (``failure``: the
    agent call it stopped on, ``{}`` for none, ``None`` when it was not left midway)."""
    if failure is None:
        return ""
    said = "; no run is going on, the next run resumes it"
    if failure:
        tries = int(failure.get("attempts") or 1)
        error = (str(failure.get("error") or "").splitlines() or [""])[0][:300]
        said += (
            f" (the last run failed: {failure.get('role')} failed in {failure.get('node')} "
            f"after {tries} attempt{'s' if tries != 1 else ''}: {error})"
        )
    return said


def _has_content(path: Path) -> bool:
    """A prerequisite as ``run`` counts it: a file holding more than blank space."""
    try:
        if not path.is_file():
            return False
        with open(path, "rb") as handle:
            return bool(handle.read(64 * 1024).strip())
    except OSError:
        return False


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _item_lines(
    repo: Path,
    cwd: Path,
    name: str,
    wf_name: str,
    workflow: dict[str, Any],
    brief: dict[str, Any],
    folder: Path,
    live: dict[str, Any] | None = None,
) -> tuple[list[str], bool]:
    """The context lines of one active item, and whether the session is in its worktree
    (``live``: the run going on for it now, as ``status`` tells it)."""
    mode = brief.get("mode", "?")
    lines = [f"## {name} (workflow {wf_name}, mode {mode})"]
    if brief.get("description"):
        lines.append(f"- Request: {brief['description']}")
    step = next_step(name, workflow, brief, folder)
    cursor = step["cursor"]
    if cursor and cursor.get("stage") == "answered" and not brief.get("decisions"):
        chosen = f" ({cursor['answer']})" if cursor.get("answer") else ""
        lines.append(
            f"- Phase: {cursor['phase']}, decision {cursor.get('decision')} answered{chosen}; "
            "the next run acts on it"
        )
    elif cursor and cursor.get("stage") == "conflict":  # nothing runs: a merge by hand
        conflicts = "; ".join(str(c) for c in cursor.get("conflicts") or [])
        lines.append(f"- Phase: {cursor['phase']}, waiting on a merge by hand: {conflicts}")
    elif cursor and cursor.get("budget"):  # a budget cap holds the node's next call
        lines.append(f"- Phase: {cursor['phase']}, {budget_held(cursor)}")
    elif cursor and cursor.get("capRaised") and not brief.get("decisions"):
        lines.append(f"- Phase: {cursor['phase']}, {cap_raised(cursor)}")
    elif cursor and cursor.get("kind") == "gate":
        lines.append(f"- Phase: {cursor['phase']}, waiting on a decision")
    elif cursor and cursor.get("kind", "agent") != "agent":
        going, failure = _going(workflow, brief, folder, live)
        if step["blocked"] and live is None and brief.get("status") in (None, "active"):
            # A loop one of whose items is blocked: the Blocked line says why.
            blocked_by = brief.get("blockedBy")
            checks = isinstance(blocked_by, dict) and blocked_by.get("by") == "checks"
            going, failure = (", blocked (checks failed)" if checks else ", blocked"), None
        lines.append(
            f"- Phase: {cursor['phase']}{going} ({cursor.get('stage')}){_resumed(failure)}"
        )
    elif cursor:
        going, failure = _going(workflow, brief, folder, live)
        lines.append(
            f"- Phase: {cursor['phase']}{going} (review iteration "
            f"{cursor.get('iteration', 1)} of {cursor.get('maxIterations')}, at "
            f"{cursor.get('stage', 'execute')}){_resumed(failure)}"
        )
    elif step["blocked"] and brief.get("at"):  # as status says it; the Blocked line says why
        why = " (checks failed)" if _checks_failed(name, workflow, brief, step["blocked"]) else ""
        phase = brief.get("currentPhase") or brief.get("label")
        lines.append(f"- Phase: {phase}, blocked{why}")
    elif workflow.get("commands"):
        lines.append(f"- Phase: {brief.get('label') or '(not recorded)'}")
    else:
        current = brief.get("currentPhase") or "(not started)"
        lines.append(f"- Phase: {current}; next phase: {step['next_phase'] or '(none)'}")
    if not workflow.get("commands"):
        lines.append(f"- Review iterations so far: {brief.get('iterations', 0)}")
    concerns = brief.get("concerns") or []
    count = int(brief.get("concernsCount") or len(concerns))
    if concerns:
        lines.append(f"- Unresolved reviewer concerns ({count}):")
        lines += [f"  - {phase}: {note}" for phase, note in concerns[:MAX_CONCERNS]]
        if count > MAX_CONCERNS:
            lines.append(f"  - ... {count - MAX_CONCERNS} more: phasegate status {name}")
    known = brief.get("knownIssues") or []
    if known:  # accepted by a person (team: "accept with known issues"), as status lists them
        count = int(brief.get("knownIssuesCount") or len(known))
        lines.append(f"- Known issues (accepted) ({count}):")
        lines += [f"  - {issue}" for issue in known[:MAX_CONCERNS]]
        if count > MAX_CONCERNS:
            lines.append(f"  - ... {count - MAX_CONCERNS} more: phasegate status {name}")
    for decision in brief.get("decisions") or []:
        lines.append(f"- Waiting for a decision: {decision['id']}: {decision.get('question')}")
        lines.append(f"  Answer with: {decision.get('command')} (see phasegate decisions {name})")
    if step["blocked"]:
        lines.append(f"- Blocked: {step['blocked']}")
    command = step["command"]
    if live is not None:
        lines.append(f"- Running now: pid {live['pid']} on {live['host']}, since {live['since']}")
        if not brief.get("decisions"):  # a second run would be refused: watch this one
            command = watch_command(name)
    lines.append(f"- Next command: {command}")
    in_worktree = False
    worktree = brief.get("worktree")
    if worktree:
        path = (repo / str(worktree)).resolve()
        branch = f" (branch {brief['branch']})" if brief.get("branch") else ""
        lines.append(f"- Worktree: {path}{branch}")
        in_worktree = _inside(cwd, path)
        if not path.is_dir():
            lines.append(f"- Worktree {worktree} is missing: `phasegate run {name}` explains.")
    return lines, in_worktree


def _state_brief(folder: str) -> dict[str, Any]:
    """The brief an item's engine state file holds (for an item the index does not know,
    or knows for another version of the file)."""
    data = read_state(Path(folder, ENGINE_FILE), "json")
    recorded, name = data.get("item"), Path(folder).name
    if isinstance(recorded, str) and recorded != name:  # a folder renamed or copied by hand
        raise ValueError(
            f"it holds work item {recorded!r}, not {name!r}: the folder was renamed or "
            f"copied; rename it back to {recorded} (phasegate status {name} says more)"
        )
    brief = data.get("brief")
    return brief if isinstance(brief, dict) else {"status": data.get("status", "active")}


#: One active item: (not in this session's worktree, -mtime, workflow, name, folder, its
#: index head or None, its brief once read, a problem reading it).
_Active = tuple[bool, float, str, str, str, "Head | None", "dict[str, Any] | None", "str | None"]


def _listed(repo: Path, cwd: Path, layout: Layout) -> tuple[list[_Active], dict[str, set[str]]]:
    """Every item that looks active, from the index's heads without reading any brief (an
    item the index does not know is read from its state file), and each name's workflows."""
    heads = read_heads(repo)
    workflows = layout.get("workflows", {})
    active: list[_Active] = []
    workflows_of: dict[str, set[str]] = {}
    for wf_name, name, folder in item_dirs(repo, layout):
        head = heads.get(f"{wf_name}/{name}")
        brief: dict[str, Any] | None = None
        problem: str | None = None
        if head is not None and head[1] in DONE and not _ended(head, folder):
            head = None  # the state file says where the item stands
        if head is not None:
            status, worktree, mtime = head[1], head[2], head[0][2] / 1e9
        else:
            is_item, stat = state_identity(folder, workflows[wf_name])
            if not is_item:
                continue
            mtime = stat[2] / 1e9 if stat is not None else 0.0
            if stat is not None:
                try:
                    brief = _state_brief(folder)
                except (OSError, ValueError) as exc:
                    problem = str(exc)
            status = str((brief or {}).get("status", "active"))
            worktree = (brief or {}).get("worktree")
        workflows_of.setdefault(name, set()).add(wf_name)
        if status in DONE and problem is None:
            continue
        inside = bool(worktree) and _inside(cwd, (repo / str(worktree)).resolve())
        active.append((not inside, -mtime, wf_name, name, folder, head, brief, problem))
    active.sort(key=lambda entry: entry[:4])
    return active, workflows_of


def _ended(head: Head, folder: str) -> bool:
    """Whether the index line ``head``, which says its item ended, is phasegate's own and
    still true: the item's engine state file holds its brief (see :func:`head_in_state`).
    The index is no guarded file: a line written by hand, or one left from another
    version of the state file, must not hide an active item. One read of the file."""
    return head_in_state(head, f"{folder}/{ENGINE_FILE}")


def _shown(entry: _Active) -> _Active | None:
    """``entry`` with its brief read (its index line while that is the state file's
    version, else the state file); ``None`` when it turns out no longer active."""
    head, brief, problem = entry[5], entry[6], entry[7]
    if head is None or problem is not None:
        return entry
    try:
        _, stat = state_identity(entry[4], {})
        fresh = head_brief(head, f"{entry[4]}/{ENGINE_FILE}") if stat == head[0] else None
        brief = fresh if fresh is not None else _state_brief(entry[4])
    except (OSError, ValueError) as exc:
        return (*entry[:6], None, str(exc))
    if str(brief.get("status", "active")) in DONE:
        return None
    return (*entry[:6], brief, None)


def _asks_budget(brief: dict[str, Any]) -> bool:
    """Whether ``brief`` has the budget question waiting, or a run stopped on its answer
    ``stop``: a cap raised in the config since lets the held call go on."""
    decisions = brief.get("decisions")
    if isinstance(decisions, list) and any(
        isinstance(d, dict) and d.get("id") == BUDGET_DECISION for d in decisions
    ):
        return True
    cursor = brief.get("inProgress")
    held = cursor.get("budget") if isinstance(cursor, dict) else None
    return isinstance(held, dict) and held.get("answer") == "stop"


def _budget_now(
    repo: Path, wf_name: str, name: str, folder: Path, brief: dict[str, Any]
) -> dict[str, Any]:
    """``brief`` (an item's, with the budget question waiting or answered ``stop``) as
    ``phasegate status NAME`` tells it now when the config changed since the item's state
    was written: a cap raised there may have made the question moot (the next run goes on
    without asking). That takes the engine, loaded only then; when it cannot tell,
    ``brief`` as it is."""
    try:
        changed = os.stat(repo / CONFIG_DIR / CONFIG_FILE).st_mtime_ns
        written = os.stat(folder / ENGINE_FILE).st_mtime_ns
    except OSError:
        return brief
    if changed < written:
        return brief  # asked with the config as it is
    try:
        from phasegate.config import load_config
        from phasegate.engine.item_status import status_of
        from phasegate.engine.items import locate_item
        from phasegate.engine.status import brief as brief_of
        from phasegate.workflow.registry import WorkflowRegistry

        registry, config = WorkflowRegistry(repo), load_config(repo)
        item = locate_item(repo, name, registry, config, wf_name, command="status")
        return brief_of(status_of(item, item.load(read_journal=False)))
    except Exception:  # never fail the session: what the item's state said stands
        return brief


def _what_broke(problem: str) -> str:
    """``its config`` for a problem of ``.phasegate/config.yaml`` (its message begins with
    that file), else ``a workflow``."""
    where = problem.split(": ", 1)[0]
    return "its config" if f"{CONFIG_DIR}/config.yaml" in where else "a workflow"


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
    listed, workflows_of = _listed(repo, cwd, layout)
    problems = [
        f"phasegate could not read {_what_broke(p)}: {p}" for p in layout.get("problems", [])
    ]
    # The items shown in detail are read now; one found to have ended makes way for the next.
    shown: list[_Active] = []
    position = 0
    while position < len(listed) and len(shown) < DETAILED_ITEMS:
        found = _shown(listed[position])
        position += 1
        if found is not None:
            shown.append(found)
    rest = listed[position:]
    if not shown and not rest:
        return "\n".join(problems)
    count = len(shown) + len(rest)
    text = [
        f"phasegate: {count} active work item{'s' if count != 1 else ''} in {repo}. "
        "phasegate enforces each item's workflow: advance items only with the phasegate "
        "commands below (or the /phasegate-* slash commands), never by editing their state "
        "files (.meta.json, .engine.json and the like).",
        *problems,
    ]
    here = False
    warnings: list[tuple[str, Path]] = []
    running = live_runs(repo) if shown else {}
    for _, _, wf_name, name, folder, _, brief, problem in shown:
        workflow = layout["workflows"][wf_name]
        if brief is not None and problem is None and _asks_budget(brief):
            brief = _budget_now(repo, wf_name, name, Path(folder), brief)
        live = running.get((wf_name, name))
        lines, inside = _detailed(
            repo, cwd, wf_name, name, workflow, brief, Path(folder), problem, live
        )
        if len(workflows_of[name]) > 1:  # a command naming it must name its workflow too
            lines = [with_workflow(line, name, wf_name) for line in lines]
        here = here or inside
        if brief and brief.get("worktree") and not inside and not problem:
            warnings.append((name, (repo / str(brief["worktree"])).resolve()))
        text += ["", *lines]
    if rest:
        names = ", ".join(entry[3] for entry in rest[:LISTED_ITEMS])
        more = len(rest) - LISTED_ITEMS
        tail = f" and {more} more" if more > 0 else ""
        text += ["", f"Also active: {names}{tail} (phasegate status lists them all)."]
    if not here:
        for name, path in warnings:
            text += [
                "",
                f"WARNING: this session's directory {cwd} is not the worktree of work item "
                f"{name}. Work on {name} belongs in {path} (cd {path}).",
            ]
    return "\n".join(text)


def _detailed(
    repo: Path,
    cwd: Path,
    wf_name: str,
    name: str,
    workflow: dict[str, Any],
    brief: dict[str, Any] | None,
    folder: Path,
    problem: str | None,
    live: dict[str, Any] | None = None,
) -> tuple[list[str], bool]:
    state_file = folder / str(workflow.get("state_file") or ENGINE_FILE)
    engine_rel = (folder / ENGINE_FILE).relative_to(repo)
    # A problem found before (reading the brief) is the engine state file's.
    rel = engine_rel if problem is not None else state_file.relative_to(repo)
    if problem is None:
        # The files a person reads must be readable: say so, naming the one that is not.
        checks = [(folder / ENGINE_FILE, "json", engine_rel)]
        if state_file != folder / ENGINE_FILE and not workflow.get("state_file_rebuilt"):
            fmt = workflow.get("state_format", "json")
            checks.insert(0, (state_file, fmt, state_file.relative_to(repo)))
        for path, fmt, shown in checks:
            try:
                if path.exists():
                    read_state(path, fmt)
            except (OSError, ValueError) as exc:
                problem, rel = str(exc), shown
                break
    if problem is not None or brief is None:
        return _corrupt(name, wf_name, rel, problem or "it holds no summary"), False
    try:
        lines, in_worktree = _item_lines(repo, cwd, name, wf_name, workflow, brief, folder, live)
    except Exception as exc:  # valid JSON, unexpected shape: same advice
        return _corrupt(name, wf_name, rel, f"unexpected content: {exc!r}"), False
    if workflow.get("state_file_rebuilt") and state_file.exists():
        # Written from the engine state: a broken one is written again by the next run.
        try:
            read_state(state_file, str(workflow.get("state_format", "json")))
        except (OSError, ValueError) as exc:
            lines.append(
                f"- {state_file.relative_to(repo)} cannot be read ({exc}); phasegate writes "
                f"it from {ENGINE_FILE}, and the next run writes it again."
            )
    return lines, in_worktree


def _corrupt(name: str, wf_name: str, rel: Path, reason: str) -> list[str]:
    return [
        f"## {name} (workflow {wf_name})",
        f"- Its state file {rel} cannot be read ({reason}); phasegate left it untouched.",
        f"- Next: tell the user; restore the file (e.g. git checkout -- {rel}) and run "
        f"phasegate status {name}. Do not rewrite it by hand.",
    ]


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
    """Console entry of ``phasegate hook EVENT``."""
    return run_hook(event, sys.stdin, sys.stdout)
