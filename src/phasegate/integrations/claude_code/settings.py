"""phasegate's entries in Claude Code's JSON files: hooks in settings, the MCP server.

Nothing is remembered between runs: phasegate's entries are recognised in the
files themselves (hook commands ending in ``hook session-start`` /
``hook pre-tool-use``, an ``mcpServers.phasegate`` entry running ``... mcp``).
The files are edited as text (:mod:`.jsonedit`), so the user's entries keep
their exact bytes and removing what was added restores the original file. A
container that removal leaves empty (``SessionStart: []``, ``hooks: {}``, a
file holding ``{}``) goes with it, as adding would have created it.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.errors import ConfigError
from phasegate.integrations.claude_code import jsonedit
from phasegate.integrations.claude_code.guard import GUARDED_TOOLS

SETTINGS = Path(".claude") / "settings.json"
#: Claude Code's per-checkout settings (not committed): used in item worktrees.
LOCAL_SETTINGS = Path(".claude") / "settings.local.json"
MCP_FILE = Path(".mcp.json")
MCP_NAME = "phasegate"
SESSION_START = "SessionStart"
PRE_TOOL_USE = "PreToolUse"
EVENT_ARGS = {SESSION_START: "session-start", PRE_TOOL_USE: "pre-tool-use"}


@dataclass
class Report:
    """What an install or uninstall did, one ``(path, action)`` per file."""

    changes: list[tuple[Path, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, path: Path, action: str) -> None:
        self.changes.append((path, action))

    @property
    def changed(self) -> bool:
        return any(action != "unchanged" for _, action in self.changes)


def is_our_hook(command: object, event: str) -> bool:
    """Whether a hook command is phasegate's hook for ``event``."""
    if not isinstance(command, str):
        return False
    words = command.split()
    return words[-2:] == ["hook", EVENT_ARGS[event]] and "phasegate" in command


def hook_group(cmd: str, event: str) -> dict[str, Any]:
    """The settings entry (matcher group) of phasegate's hook for ``event``."""
    matcher = "|".join(GUARDED_TOOLS) if event == PRE_TOOL_USE else ""
    command = f"{cmd} hook {EVENT_ARGS[event]}"
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}


def read_json(path: Path) -> str | None:
    """The file's text if it exists; it must hold a JSON object."""
    try:
        # As bytes: its line endings (CRLF) are kept, and put back when it is written.
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} cannot be read ({exc}); nothing was changed") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not valid JSON ({exc}); fix it first, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; nothing was changed")
    return text


def _container(text: str, path: Path, keys: Sequence[str]) -> jsonedit.Node | None:
    """The node at ``keys`` from the root, or ``None`` when a key is absent."""
    node: jsonedit.Node | None = jsonedit.parse(text)
    for depth, key in enumerate(keys):
        assert node is not None
        if node.kind != "object":
            where = ".".join(keys[:depth]) or "the top level"
            raise ConfigError(f"{path}: {where} is not an object; fix it first")
        node = node.get(key)
        if node is None:
            return None
    return node


def _ensure_path(text: str, path: Path, keys: Sequence[str], leaf: Any) -> str:
    """``text`` with ``leaf`` added as the value at ``keys`` (missing objects created)."""
    for depth in range(len(keys)):
        parent = _container(text, path, keys[:depth])
        assert parent is not None
        if parent.kind != "object":
            raise ConfigError(f"{path}: {'.'.join(keys[:depth])} is not an object; fix it first")
        if parent.get(keys[depth]) is None:
            value: Any = leaf
            for key in reversed(keys[depth + 1 :]):
                value = {key: value}
            return jsonedit.add_child(text, parent, value, key=keys[depth])
    raise AssertionError("the path exists already")  # callers check first


def _prune(text: str, keys: Sequence[str]) -> str:
    """Remove the containers along ``keys`` that were left empty, innermost first."""
    for depth in range(len(keys), 0, -1):
        root = jsonedit.parse(text)
        parent: jsonedit.Node | None = root
        for key in keys[: depth - 1]:
            parent = parent.get(key) if parent is not None and parent.kind == "object" else None
        node = parent.get(keys[depth - 1]) if parent is not None else None
        if parent is None or node is None or node.kind == "scalar" or node.children:
            break
        text = jsonedit.remove_child(text, parent, parent.index(keys[depth - 1]))
    return text


def _remove_hooks(text: str, path: Path, event: str) -> str:
    """``text`` without phasegate's hooks for ``event`` (and groups left empty)."""
    while True:
        groups = _container(text, path, ["hooks", event])
        if groups is None or groups.kind != "array":
            return text
        for gi, group in enumerate(groups.children):
            hooks = group.get("hooks") if group.kind == "object" else None
            if hooks is None or hooks.kind != "array":
                continue
            found = [
                hi
                for hi, hook in enumerate(hooks.children)
                if hook.kind == "object"
                and is_our_hook(json.loads(text[hook.start : hook.end]).get("command"), event)
            ]
            if found:
                if len(hooks.children) == 1:
                    text = jsonedit.remove_child(text, groups, gi)
                else:
                    text = jsonedit.remove_child(text, hooks, found[0])
                text = _prune(text, ["hooks", event])
                break
        else:
            return text


def our_hook_commands(text: str, event: str) -> list[str]:
    data = json.loads(text)
    groups = (data.get("hooks") or {}).get(event) if isinstance(data.get("hooks"), dict) else None
    commands: list[str] = []
    for group in groups if isinstance(groups, list) else []:
        for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
            if isinstance(hook, dict) and is_our_hook(hook.get("command"), event):
                commands.append(str(hook["command"]))
    return commands


def _guard_matchers(text: str) -> list[object]:
    """The matchers of the PreToolUse groups holding phasegate's guard."""
    data = json.loads(text)
    hooks = data.get("hooks")
    groups = hooks.get(PRE_TOOL_USE) if isinstance(hooks, dict) else None
    return [
        group.get("matcher")
        for group in (groups if isinstance(groups, list) else [])
        if isinstance(group, dict)
        and isinstance(group.get("hooks"), list)
        and any(
            isinstance(h, dict) and is_our_hook(h.get("command"), PRE_TOOL_USE)
            for h in group["hooks"]
        )
    ]


def write_file(path: Path, text: str | None, before: str | None, report: Report) -> None:
    """Write (or delete, for ``None``) ``path`` if its text changed, and note what happened."""
    if text == before:
        report.add(path, "unchanged")
        return
    if text is None:
        path.unlink()
        report.add(path, "removed")
        return
    target = path
    if path.is_symlink():
        # A settings file linked from elsewhere (dotfiles): edit the file, keep the link.
        target = Path(os.path.realpath(path))
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    tmp = target.with_name(f".{target.name}.phasegate-tmp")
    tmp.write_bytes(text.encode("utf-8"))  # the newlines as given: no translation
    if mode is not None:
        os.chmod(tmp, mode)  # its permissions stay the user's
    os.replace(tmp, target)
    report.add(path, "created" if before is None else "updated")


def _lf(text: str | None) -> str | None:
    """``text`` with CRLF line endings as LF, to be edited (JSON strings hold no newline)."""
    return text.replace("\r\n", "\n") if text is not None else None


def _as_before(text: str | None, before: str | None) -> str | None:
    """Edited ``text`` with the CRLF line endings ``before`` had, if it had them."""
    if text is None or before is None or "\r\n" not in before:
        return text
    if text == _lf(before):
        return before  # not edited: mixed line endings stay as they were
    return text.replace("\n", "\r\n")


def _emptied(path: Path, text: str | None, before: str | None) -> bool:
    """Whether the edit left only ``{}`` of a file that held more: the file was phasegate's
    alone, and goes. A symlinked file stays, as ``{}``: the link is the user's."""
    if text is None or before is None or text == before or path.is_symlink():
        return False
    data: object = json.loads(text)
    return data == {}


def merge_hooks(path: Path, cmd: str | None, guard: bool, report: Report) -> None:
    """Bring phasegate's hooks in settings file ``path`` to ``cmd`` (``None``: remove them)."""
    before = read_json(path)
    text = _lf(before)
    wanted = {SESSION_START: cmd is not None, PRE_TOOL_USE: cmd is not None and guard}
    for event, want in wanted.items():
        group = hook_group(cmd, event) if cmd is not None else None
        current = our_hook_commands(text, event) if text is not None else []
        # Up to date: the command, and the guard's matcher (one that leaves out an editing
        # tool lets that tool through).
        matchers = [group["matcher"]] if group is not None else []
        matcher_ok = event != PRE_TOOL_USE or _guard_matchers(text or "{}") == matchers
        if group is not None and want and current == [group["hooks"][0]["command"]] and matcher_ok:
            continue
        if text is not None:
            text = _remove_hooks(text, path, event)
        if group is not None and want:
            if text is None:
                text = json.dumps({"hooks": {event: [group]}}, indent=2) + "\n"
            elif _container(text, path, ["hooks", event]) is None:
                text = _ensure_path(text, path, ["hooks", event], [group])
            else:
                groups = _container(text, path, ["hooks", event])
                assert groups is not None
                if groups.kind != "array":
                    raise ConfigError(f"{path}: hooks.{event} is not a list; fix it first")
                text = jsonedit.add_child(text, groups, group)
    text = _as_before(text, before)
    if _emptied(path, text, before):
        text = None  # only phasegate's entries were there: the file was ours
    write_file(path, text, before, report)


def _is_our_server(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    args = value.get("args")
    words = [str(value.get("command", "")), *(str(a) for a in args or [])]
    return isinstance(args, list) and words[-1:] == ["mcp"] and "phasegate" in " ".join(words)


def merge_mcp(path: Path, cmd: str | None, report: Report) -> None:
    """Bring phasegate's MCP server in ``path`` (``.mcp.json``) to ``cmd`` (``None``: remove it)."""
    before = read_json(path)
    text = _lf(before)
    servers = json.loads(text).get("mcpServers") if text is not None else None
    existing = servers.get(MCP_NAME) if isinstance(servers, dict) else None
    if existing is not None and not _is_our_server(existing):
        report.notes.append(f"{path}: left the user's own {MCP_NAME!r} server as it is")
        return
    words = shlex.split(cmd) if cmd is not None else []
    server = {"command": words[0], "args": [*words[1:], "mcp"]} if words else None
    if existing == server:
        report.add(path, "unchanged")
        return
    if text is not None and existing is not None:
        node = _container(text, path, ["mcpServers"])
        assert node is not None
        text = jsonedit.remove_child(text, node, node.index(MCP_NAME))
        text = _prune(text, ["mcpServers"])
    if server is not None:
        if text is None:
            text = json.dumps({"mcpServers": {MCP_NAME: server}}, indent=2) + "\n"
        elif _container(text, path, ["mcpServers"]) is None:
            text = _ensure_path(text, path, ["mcpServers", MCP_NAME], server)
        else:
            node = _container(text, path, ["mcpServers"])
            assert node is not None
            text = jsonedit.add_child(text, node, server, key=MCP_NAME)
    text = _as_before(text, before)
    if _emptied(path, text, before):
        text = None
    write_file(path, text, before, report)


def installed_hooks(path: Path) -> tuple[str, bool] | None:
    """``(command, guard installed)`` of phasegate's hooks in settings file ``path``, if any."""
    try:
        text = read_json(path)
    except ConfigError:
        return None
    if text is None:
        return None
    commands = our_hook_commands(text, SESSION_START)
    if not commands:
        return None
    suffix = f" hook {EVENT_ARGS[SESSION_START]}"
    return commands[0].removesuffix(suffix), bool(our_hook_commands(text, PRE_TOOL_USE))
