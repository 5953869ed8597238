"""The scripted backend: agents whose answers are written in advance.

Used by phasegate's own tests and demo, and by users who want to test their
workflows without a model. Drive it with a Python callable, or with a YAML
script keyed by role and phase, one reply per review iteration (the last
reply repeats); ``NODE@N`` (``spec@2``) answers the node's Nth visit, when a check
or a gate has sent the item back to it, before ``NODE`` does::

    executor:
      specify:
        - write: {"{item_dir}/spec.md": "# Spec\\n..."}
          text: Wrote the spec.
    chain-reviewer:
      specify:
        - verdict: {approved: false, summary: Needs criteria,
                    issues: [{severity: blocker, description: No acceptance criteria}]}
        - verdict: {approved: true, summary: Complete}
      "*":
        - verdict: {approved: true, summary: Looks complete}

Reply keys: ``text``, ``write`` (path -> content, relative to the working
directory, ``{item_dir}``/``{item}``/``{phase}``/``{node}``/``{task}`` filled in), ``delete``,
``verdict`` or ``json`` (structured output), ``fail`` (``{exit, error}``),
``sleep`` (seconds, to simulate a slow agent; a sleep reaching the call's timeout
ends it as timed out, as a real backend's would), ``cost_usd`` and ``usage``
(``{input_tokens, output_tokens}``: what the call reports it spent; by default
$0 and a token count guessed from the text), ``mcp`` (a list of ``{server, tool,
arguments}``: tool calls made, in order, on the MCP servers the request carries,
with the placeholders filled in text arguments). Keying replies by iteration
rather than by call count makes a resumed run get the same answers.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.agents.base import (
    TIMEOUT_EXIT,
    Access,
    AgentRequest,
    AgentResult,
    Backend,
    McpServer,
    TokenUsage,
)
from phasegate.errors import ConfigError
from phasegate.yaml_errors import yaml_problem

#: The docs section that shows a script's format, and the way to walk without one.
WITHOUT_A_MODEL = "docs/backends.md#without-a-model-scripted-and-auto"


@dataclass(frozen=True)
class ScriptedReply:
    """What a scripted agent does for one call."""

    text: str = ""
    write: Mapping[str, str] = field(default_factory=dict)
    delete: tuple[str, ...] = ()
    structured: Mapping[str, Any] | None = None
    exit_status: int = 0
    error: str | None = None
    sleep: float = 0.0
    cost_usd: float | None = None
    usage: TokenUsage | None = None
    #: MCP tool calls the agent makes, in order, after writing its files.
    mcp: tuple[McpCall, ...] = ()

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str) -> ScriptedReply:
        """Build a reply from one script entry, naming ``where`` on bad keys or values."""
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"{where}: a scripted reply must be a mapping of reply keys "
                f"({', '.join(REPLY_KEYS)}), not {_shown(data)}"
            )
        unknown = sorted(str(key) for key in set(data) - set(REPLY_KEYS))
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} in scripted reply")
        fail = data.get("fail")
        key = "verdict" if "verdict" in data else "json"
        structured = data.get(key)
        if structured is not None and not isinstance(structured, Mapping):
            raise ConfigError(
                f"{where}: {key} must be a mapping (the structured answer, e.g. "
                f"{{verdict: OK, summary: ...}}; a text answer goes in text), not "
                f"{_shown(structured)}"
            )
        error = None
        exit_status = 0
        if fail is not None:
            fail = fail if isinstance(fail, Mapping) else {"error": _scalar(fail, where, "fail")}
            unknown = sorted(str(key) for key in set(fail) - {"exit", "error"})
            if unknown:
                raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} in fail")
            code = fail.get("exit", 1)
            if isinstance(code, bool) or not isinstance(code, int) or not 1 <= code <= 255:
                raise ConfigError(f"{where}: fail.exit must be a whole number 1-255, not {code!r}")
            exit_status = code
            error = _scalar(fail.get("error", "scripted failure"), where, "fail.error")
        write = data.get("write") or {}
        if not isinstance(write, Mapping):
            raise ConfigError(
                f"{where}: write must be a mapping of path: content, not {_shown(write)}"
            )
        delete = data.get("delete") or ()
        if isinstance(delete, str):
            delete = (delete,)
        if not isinstance(delete, list | tuple):
            raise ConfigError(f"{where}: delete must be a list of paths, not {_shown(delete)}")
        return cls(
            text=_scalar(data.get("text", ""), where, "text"),
            write={
                _scalar(k, where, "a write path"): _scalar(v, where, f"write[{k!r}]")
                for k, v in write.items()
            },
            delete=tuple(_scalar(p, where, "a delete path") for p in delete),
            structured=structured,
            exit_status=exit_status,
            error=error,
            sleep=_number(data.get("sleep"), f"{where}: sleep") or 0.0,
            cost_usd=_number(data.get("cost_usd"), f"{where}: cost_usd"),
            usage=_usage(data.get("usage"), where),
            mcp=_mcp_calls(data.get("mcp"), where),
        )


@dataclass(frozen=True)
class McpCall:
    """One MCP tool call of a scripted agent: ``tool`` with ``arguments``, on the
    request's MCP server named ``server`` (by default the one offering ``tool``)."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    server: str | None = None


#: The keys a scripted reply may have.
REPLY_KEYS = (
    "text",
    "write",
    "delete",
    "verdict",
    "json",
    "fail",
    "sleep",
    "cost_usd",
    "usage",
    "mcp",
)


def _mcp_calls(raw: object, where: str) -> tuple[McpCall, ...]:
    if raw is None:
        return ()
    if isinstance(raw, Mapping):
        raw = [raw]
    if not isinstance(raw, list | tuple):
        raise ConfigError(
            f"{where}: mcp must be a list of tool calls ({{server, tool, arguments}}), "
            f"not {_shown(raw)}"
        )
    calls = []
    for index, entry in enumerate(raw):
        at = f"{where}: mcp[{index}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(
                f"{at} must be a mapping {{server, tool, arguments}}, not {_shown(entry)}"
            )
        unknown = sorted(str(key) for key in set(entry) - {"server", "tool", "arguments"})
        if unknown:
            raise ConfigError(
                f"{at}: unknown key(s) {', '.join(unknown)} (use server, tool, arguments)"
            )
        if "tool" not in entry:
            raise ConfigError(f"{at}: tool is missing (the name of the MCP tool to call)")
        arguments = entry.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise ConfigError(f"{at}: arguments must be a mapping, not {_shown(arguments)}")
        server = entry.get("server")
        calls.append(
            McpCall(
                tool=_scalar(entry["tool"], at, "tool"),
                arguments=dict(arguments),
                server=None if server is None else _scalar(server, at, "server"),
            )
        )
    return tuple(calls)


def _shown(value: object) -> str:
    """What a wrong value is, for a message: its kind and (short) text."""
    kinds: dict[type, str] = {str: "text", list: "a list", dict: "a mapping"}
    kind = kinds.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text if len(text) <= 40 else text[:37] + '...'}"


def _scalar(raw: object, where: str, what: str) -> str:
    """``raw`` as text: a string or a number (YAML reads ``text: 42`` as a number)."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return str(raw)
    raise ConfigError(f"{where}: {what} must be text, not {_shown(raw)}")


def _number(raw: object, where: str) -> float | None:
    if raw is None:
        return None
    if (
        isinstance(raw, bool)
        or not isinstance(raw, int | float)
        or not math.isfinite(raw)
        or raw < 0
    ):
        raise ConfigError(f"{where} must be a number of at least 0, not {raw!r}")
    return float(raw)


def _usage(raw: object, where: str) -> TokenUsage | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: usage must be a mapping of token counts")
    fields = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    unknown = sorted(set(raw) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} in usage")
    counts = [_number(raw.get(name, 0), f"{where}: usage.{name}") or 0.0 for name in fields]
    return TokenUsage(*(int(count) for count in counts))


Handler = Callable[[AgentRequest], ScriptedReply | None]

#: What a reply's file paths may name: the item folder, the item, the phase (label),
#: the node, and the foreach item (task) the call is made for.
PLACEHOLDERS = ("item_dir", "item", "phase", "node", "task")

#: The settings the scripted backend takes (``base_dir`` is set by phasegate).
SETTINGS = ("script", "calls_log", "structured_output", "model", "base_dir")


class ScriptedBackend(Backend):
    """Answers from a script (``settings['script']``, a YAML file) or a Python handler."""

    name = "scripted"
    structured_output = True
    writes_files = True

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        cls._check_keys(settings)

    @classmethod
    def _check_keys(cls, settings: Mapping[str, Any]) -> None:
        """Unknown keys are refused, as every backend refuses them (a typo such as
        ``calls_lgo`` would otherwise be ignored); ``model`` comes from a role binding."""
        for key in settings:
            if key not in SETTINGS:
                raise ConfigError(
                    f"backend {cls.name!r}: {key}: unknown setting (known: "
                    f"{', '.join(k for k in SETTINGS if k != 'base_dir')}; check "
                    f"backends.{cls.name} and the roles using it in .phasegate/config.yaml)"
                )
        if not isinstance(settings.get("structured_output", True), bool):
            raise ConfigError(
                f"backend {cls.name!r}: structured_output: must be true or false (check "
                f"backends.{cls.name} and the roles using it in .phasegate/config.yaml)"
            )

    def __init__(
        self,
        settings: Mapping[str, Any] | None = None,
        *,
        handler: Handler | None = None,
        script: Mapping[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        super().__init__(settings)
        self._check_keys(self.settings)
        # A scripted agent stands in for a backend that enforces a schema on its
        # answer, unless told to act as a text-only one (whose free text is read).
        if structured_output is None:
            structured_output = bool(self.settings.get("structured_output", True))
        self.structured_output = structured_output
        self._handler = handler
        self._script = script
        #: Every request this backend received, in order (for assertions in tests).
        self.requests: list[AgentRequest] = []
        self._script_path: Path | None = None
        if handler is None and script is None:
            path = self.settings.get("script")
            if not path:
                raise ConfigError(
                    "the scripted backend needs a script: set backends.scripted.script "
                    "in .phasegate/config.yaml to a YAML file of replies"
                )
            self._script_path = self._resolve(str(path))
            self._load_script()
        log = self.settings.get("calls_log")
        self._calls_log = self._resolve(str(log)) if log else None

    def own_files(self) -> tuple[Path, ...]:
        """The calls log is the backend's record of its calls, not its agent's doing."""
        return () if self._calls_log is None else (self._calls_log,)

    def _resolve(self, path: str) -> Path:
        """Relative paths in config are relative to the repository (``base_dir``)."""
        base = self.settings.get("base_dir")
        resolved = Path(path)
        return resolved if resolved.is_absolute() or not base else Path(str(base)) / resolved

    def _load_script(self) -> Mapping[str, Any]:
        if self._script is not None:
            return self._script
        assert self._script_path is not None
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        try:
            data = YAML(typ="safe", pure=True).load(self._script_path.read_text("utf-8"))
        except FileNotFoundError:
            raise ConfigError(
                f"scripted backend: script {self._script_path} not found: write it (see "
                f"{WITHOUT_A_MODEL}), or set roles: {{default: {{backend: auto}}}} in "
                ".phasegate/config.yaml to walk the workflow with placeholder answers"
            ) from None
        except YAMLError as exc:
            raise ConfigError(yaml_problem(self._script_path, exc)) from None
        except Exception as exc:
            raise ConfigError(
                f"scripted backend: script {self._script_path} is not valid YAML ({exc})"
            ) from None
        if not isinstance(data, Mapping):
            raise ConfigError(f"scripted backend: script {self._script_path} must be a mapping")
        self._script = data
        return data

    def reply_for(self, request: AgentRequest) -> ScriptedReply | None:
        """The reply the script gives ``request`` (``None`` if it has none)."""
        if self._handler is not None:
            return self._handler(request)
        script = self._load_script()
        labels = request.labels
        phase = labels.get("phase", "")
        node = labels.get("node", phase)
        task = labels.get("task")
        keys = [f"{node}:{task}"] if task else []
        keys += [k for k in dict.fromkeys((node, phase)) if k]
        visit = labels.get("visit", "1")
        if visit != "1":  # a later visit of the node: its own replies first (``spec@2``)
            keys = [f"{key}@{visit}" for key in keys] + keys
        replies = None
        found = ""
        # Most specific first: the role's node (and item), its phase, "*"; then the
        # workflow role it plays (an agent chosen at run time), then "*"'s.
        plays = labels.get("plays")
        for role_key in dict.fromkeys((request.role, *((plays,) if plays else ()), "*")):
            by_role = script.get(role_key)
            if not isinstance(by_role, Mapping):
                continue
            for key in (*keys, "*"):
                if key in by_role:
                    replies = by_role[key]
                    found = f"{role_key}.{key}"
                    break
            if replies is not None:
                break
        if replies is None:
            return None
        iteration = max(1, int(request.labels.get("iteration", "1") or 1))
        # Named as the script spells it (the keys that matched, "*" included), and the
        # reply used, counted from 1 (the last one repeats).
        where = f"{self._script_path or 'script'}: {found}"
        if isinstance(replies, Mapping):
            replies = [replies]
        if not isinstance(replies, list | tuple):
            raise ConfigError(
                f"{where}: the replies must be a reply (a mapping) or a list of replies, "
                f"not {_shown(replies)}"
            )
        if not replies:
            return None
        number = min(iteration, len(replies))
        return ScriptedReply.from_mapping(replies[number - 1], f"{where}[{number}]")

    def run(self, request: AgentRequest) -> AgentResult:
        started = time.monotonic()
        self.requests.append(request)
        self._log_call(request)
        try:
            reply = self.reply_for(request)
        except ConfigError as exc:
            return AgentResult(text="", exit_status=2, error=str(exc), bad_setting=True)
        except Exception as exc:  # a user's handler raised: the agent failed, not phasegate
            return AgentResult(text="", exit_status=1, error=f"scripted handler raised {exc!r}")
        if reply is None:
            return AgentResult(
                text="",
                exit_status=2,
                error=(
                    f"scripted backend has no reply for role {request.role!r} "
                    f"in phase {request.labels.get('phase', '?')!r}"
                    + (
                        f" (node {request.labels['node']!r})"
                        if request.labels.get("node", request.labels.get("phase"))
                        != request.labels.get("phase")
                        else ""
                    )
                ),
            )
        if reply.sleep:
            time.sleep(min(reply.sleep, request.timeout))
            if reply.sleep >= request.timeout:
                # As a real backend does: the call is stopped at its timeout.
                return AgentResult(
                    text="",
                    exit_status=TIMEOUT_EXIT,
                    error=f"scripted agent did not finish within {request.timeout:g}s",
                    duration_s=time.monotonic() - started,
                )
        if (reply.write or reply.delete) and request.access is Access.READ_ONLY:
            return AgentResult(
                text="",
                exit_status=2,
                error=f"role {request.role!r} is read-only but its scripted reply writes files",
            )
        try:
            self._apply_files(request, reply)
        except (ValueError, OSError) as exc:  # a bad script is the agent's failure
            return AgentResult(text="", exit_status=2, error=str(exc))
        stderr = call_tools(request, reply.mcp) if reply.mcp else ""
        prompt_tokens = len(request.prompt_text()) // 4
        return AgentResult(
            text=reply.text,
            structured=reply.structured,
            exit_status=reply.exit_status,
            error=reply.error,
            usage=reply.usage
            or TokenUsage(input_tokens=prompt_tokens, output_tokens=len(reply.text) // 4),
            cost_usd=reply.cost_usd if reply.cost_usd is not None else 0.0,
            duration_s=time.monotonic() - started,
            session_id=None,
            stderr=stderr,
        )

    def _apply_files(self, request: AgentRequest, reply: ScriptedReply) -> None:
        if not reply.write and not reply.delete:
            return
        values = {k: request.labels.get(k, "") for k in PLACEHOLDERS}
        root = os.path.realpath(request.workdir)
        allowed = [root, *(os.path.realpath(d) for d in request.extra_dirs)]
        for raw, content in reply.write.items():
            target = _inside(root, _fill(raw, values), allowed)
            _write(target, content)
        for raw in reply.delete:
            target = _inside(root, _fill(raw, values), allowed)
            Path(target).unlink(missing_ok=True)

    def _log_call(self, request: AgentRequest) -> None:
        if self._calls_log is None:
            return
        line = {k: request.labels.get(k) for k in ("attempt", "item", "phase", "iteration")}
        # Where in the graph the call was made, when the engine says (a foreach item's task).
        labels = request.labels
        line.update({k: labels[k] for k in ("path", "stage", "task") if k in labels})
        line["role"] = request.role
        with open(self._calls_log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def _fill(raw: str, values: Mapping[str, str]) -> str:
    """``raw`` with the :data:`PLACEHOLDERS` filled in; ValueError otherwise."""
    try:
        return raw.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        names = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
        raise ValueError(
            f"scripted reply path {raw!r} has an unknown placeholder ({exc!r}); use {names}"
        ) from None


def _inside(root: str, relative: str, allowed: list[str]) -> str:
    """``root / relative`` with its symlinks followed; ValueError if that leaves ``allowed``.

    ``root`` has its symlinks followed already.
    """
    target = _plainly_below(root, relative)
    if target is None:
        target = os.path.realpath(os.path.join(root, relative))
    if not any(target == base or target.startswith(_as_folder(base)) for base in allowed):
        raise ValueError(f"scripted reply path {relative!r} escapes the working directory")
    return target


def _plainly_below(root: str, relative: str) -> str | None:
    """``os.path.realpath(root / relative)`` for a ``root`` that is its own realpath and a
    ``relative`` of plain names none of which is a symlink (``None`` otherwise): the
    components below ``root`` looked at as realpath does, not those of ``root`` again."""
    if not relative or relative.startswith(os.sep):
        return None
    path = root
    for part in relative.split(os.sep):
        if part in ("", ".", ".."):
            return None
        path = os.path.join(path, part)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return None
        except OSError:  # absent (or not a folder): realpath takes it as it is written
            pass
    return path


def _write(target: str, content: str) -> None:
    """Write ``content`` to ``target``, making its folder first if it has none."""
    try:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(content)
            return
    except (FileNotFoundError, NotADirectoryError):
        os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(content)


def _as_folder(path: str) -> str:
    return path if path.endswith(os.sep) else path + os.sep


def call_tools(request: AgentRequest, calls: Sequence[McpCall]) -> str:
    """Make ``calls`` on the request's MCP servers, as an agent CLI would: with the
    ``mcp`` SDK's client, one session per server, each tool listed before it is called.

    A call the request does not allow is denied, and a call the server refuses or that
    fails is reported, but neither stops the agent: the returned log (the call's
    stderr, which the journal keeps) says what each call did, in the words agent CLIs
    use (``[phasegate] permission denied for: mcp__SERVER__TOOL``).
    """
    values = {k: request.labels.get(k, "") for k in PLACEHOLDERS}
    log: list[str] = []
    batch: list[tuple[McpServer, McpCall]] = []
    for call in calls:
        server = next(
            (
                s
                for s in request.mcp_servers
                if (s.name == call.server if call.server else call.tool in s.tools)
            ),
            None,
        )
        if server is None or call.tool not in server.tools:
            named = server.name if server else call.server
            name = f"mcp__{named}__{call.tool}" if named else call.tool
            log.append(f"[phasegate] permission denied for: {name}")
            continue
        batch.append((server, McpCall(call.tool, _filled(call.arguments, values), server.name)))
    # One session per server, the calls in their order.
    for server in [
        s for index, (s, _) in enumerate(batch) if s not in [b[0] for b in batch[:index]]
    ]:
        mine = [call for s, call in batch if s == server]
        log += _session(server, mine, request.timeout)
    return "\n".join(log)


def _session(server: McpServer, calls: list[McpCall], timeout: float) -> list[str]:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=server.command,
        args=list(server.args),
        env={"PATH": os.environ.get("PATH", ""), **dict(server.env)},
    )
    log: list[str] = []

    async def main() -> None:
        with anyio.fail_after(timeout):
            async with Client(params, mode="legacy") as client:
                offered = {tool.name for tool in (await client.list_tools()).tools}
                for call in calls:
                    where = f"{server.name}.{call.tool}"
                    if call.tool not in offered:
                        log.append(f"[scripted] {where}: the server offers no such tool")
                        continue
                    result = await client.call_tool(call.tool, dict(call.arguments))
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    state = "refused" if getattr(result, "is_error", False) else "ok"
                    log.append(f"[scripted] {where}: {state}: {text}")

    try:
        anyio.run(main)
    except Exception as exc:  # the server did not start, or broke off: an agent would go on
        while isinstance(exc, ExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]  # the cause, not anyio's task groups around it
        log.append(f"[scripted] MCP server {server.name} failed: {exc!r}")
    return log


def _filled(value: Any, values: Mapping[str, str]) -> Any:
    """``value`` with the :data:`PLACEHOLDERS` filled in its text (other braces kept)."""
    if isinstance(value, str):
        return re.sub(r"\{(" + "|".join(PLACEHOLDERS) + r")\}", lambda m: values[m.group(1)], value)
    if isinstance(value, Mapping):
        return {k: _filled(v, values) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_filled(v, values) for v in value]
    return value
