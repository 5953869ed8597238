"""Agent calls made durably: intent journaled, result journaled before it is used, never repeated.

For every call, under a key the engine owns (node path, visit, iteration, stage, try):

1. journal ``agent.dispatched`` with a fresh attempt id;
2. run the backend;
3. journal ``agent.finished`` with the whole result (the write-ahead record);
4. the engine applies the result to its state in the next commit, which fsyncs
   the journal before replacing the state file.

A run that dies after step 3 finds the result in the journal when it resumes
and does not call the agent again; one that dies before it calls again under
a new attempt id (the earlier one is journaled as abandoned).
"""

from __future__ import annotations

import functools
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phasegate.agents.base import (
    Access,
    AgentRequest,
    AgentResult,
    Backend,
    McpServer,
    PromptPart,
)
from phasegate.agents.registry import create_backend
from phasegate.config import Config, RoleBinding
from phasegate.engine.call_results import result_from_event, result_to_event
from phasegate.engine.item import WorkItem
from phasegate.engine.protect import guarded_call
from phasegate.engine.state import EngineState
from phasegate.errors import AgentError, BackendUnavailable, ConfigError
from phasegate.faults import crash_point

#: How much of an agent's text the journal keeps.

PromptBuilder = Callable[[], tuple[str, tuple[PromptPart, ...]]]
#: Called before every dispatch: the most USD the call may spend (``None``: no cap), or it
#: raises to keep the call from being made (see :mod:`phasegate.engine.budget_gate`).
DispatchGuard = Callable[["CallSpec"], float | None]


class Backends:
    """Which backend serves each role: config bindings, overridable in code.

    ``overrides`` maps a role name (or ``"default"``) to a ready backend,
    which is how tests and library users plug in a scripted agent.
    """

    def __init__(
        self, config: Config, repo: Path, overrides: Mapping[str, Backend] | None = None
    ) -> None:
        self.config = config
        self.repo = repo
        self.overrides = dict(overrides or {})
        self._cache: dict[str, Backend] = {}
        self.guard: DispatchGuard | None = None
        caps = config.concurrency
        self._agents = threading.BoundedSemaphore(caps.agents) if caps.agents else None
        self._per_backend = {
            name: threading.BoundedSemaphore(cap) for name, cap in caps.backends.items()
        }

    def backend_name(self, role: str, plays: str | None = None) -> str:
        """The backend kind serving ``role`` (``claude``, ``codex``, ``scripted``...)."""
        override = self._override(role, plays)
        if override is not None:
            return override.name
        return self.config.binding(self._bound(role, plays)).backend

    @contextmanager
    def slot(self, role: str, plays: str | None = None) -> Iterator[None]:
        """Hold one of the agent processes ``concurrency`` allows (globally and per backend)
        while an agent of ``role`` runs."""
        held: list[threading.BoundedSemaphore] = []
        try:
            for sem in (self._per_backend.get(self.backend_name(role, plays)), self._agents):
                if sem is not None:
                    sem.acquire()
                    held.append(sem)
            yield
        finally:
            for sem in reversed(held):
                sem.release()

    def _bound(self, role: str, plays: str | None) -> str:
        """The configured role that serves ``role``: its own, else the one it ``plays``.

        An agent chosen at run time (seed 004's agents from ``.claude/agents``) plays a
        workflow role; without a binding of its own it gets that role's backend.
        """
        if plays and role not in self.config.roles and plays in self.config.roles:
            return plays
        return role

    def _override(self, role: str, plays: str | None) -> Backend | None:
        found = self.overrides.get(role)
        if found is None and plays:
            found = self.overrides.get(plays)
        return found or self.overrides.get("default")

    def binding(self, role: str, plays: str | None = None) -> RoleBinding | None:
        if self._override(role, plays) is not None:
            return None
        return self.config.binding(self._bound(role, plays))

    def describe(self, role: str, plays: str | None = None) -> str:
        """A short label of the backend serving ``role`` (for progress and the journal)."""
        override = self._override(role, plays)
        if override is not None:
            return override.name
        binding = self.config.binding(self._bound(role, plays))
        return f"{binding.backend}:{binding.model}" if binding.model else binding.backend

    def for_role(self, role: str, plays: str | None = None) -> Backend:
        override = self._override(role, plays)
        if override is not None:
            return override
        bound = self._bound(role, plays)
        binding = self.config.binding(bound)
        key = f"{binding.backend}|{sorted(binding.backend_settings().items())!r}"
        if key not in self._cache:
            settings: dict[str, Any] = dict(self.config.backends.get(binding.backend, {}))
            settings.update(binding.backend_settings())
            settings.setdefault("base_dir", str(self.repo))
            try:
                self._cache[key] = create_backend(binding.backend, settings)
            except (BackendUnavailable, ConfigError) as exc:
                # A setting of the role's own (its binary, its config_dir) is named where it
                # was set, not under backends.
                raise type(exc)(self.config.setting_where(str(exc), bound)) from None
        return self._cache[key]

    def timeout(self, role: str, plays: str | None = None) -> float:
        binding = self.binding(role, plays)
        if binding is not None and binding.timeout:
            return binding.timeout
        return self.config.timeouts.agent


@dataclass(frozen=True)
class CallSpec:
    """One logical agent call."""

    key: str
    role: str
    path: str
    label: str
    iteration: int
    stage: str
    access: Access
    output_schema: Mapping[str, Any] | None
    build_prompt: PromptBuilder
    mcp_servers: tuple[McpServer, ...] = ()
    task: str | None = None
    timeout: float | None = None
    #: Hints for backends that answer without a model (the ``auto`` backend).
    hints: Mapping[str, Any] = field(default_factory=dict)
    #: Where the agent works when not in the item's work tree (a parallel item's worktree).
    workdir: Path | None = None
    #: The workflow role an agent chosen at run time plays (its backend's fallback).
    plays: str | None = None
    #: A timed-out attempt is the call's result (not retried): the node decides.
    timeout_ends: bool = False
    #: The last attempt's failure, when every attempt failed, is the call's result
    #: (journaled, so a resumed run reuses it): the node decides (an agent node whose
    #: ``on`` maps ``failed``), instead of the run stopping.
    failure_ends: bool = False
    #: The only files the call may change (``None``: any); others it changes are put back.
    writes: tuple[Path, ...] | None = None


def _plays(spec: CallSpec) -> dict[str, Any]:
    """``{"plays": ROLE}`` for an agent chosen at run time, journaled with its dispatch."""
    return {"plays": spec.plays} if spec.plays else {}


class CallStopped(Exception):
    """A call of a parallel fan-out was not (re)tried: the run is stopping."""


def call_agent(
    item: WorkItem,
    state: EngineState,
    backends: Backends,
    spec: CallSpec,
    *,
    in_worker: bool = False,
    stopping: Callable[[], bool] | None = None,
) -> AgentResult:
    """Run ``spec`` (or reuse its journaled result); raise AgentError when retries run out.

    ``in_worker``: called from a parallel fan-out's worker thread, where state
    is never written (the engine's thread commits); the result was already
    looked up there (:func:`recover_call`). ``stopping`` says when a stopping
    run must not try (again): :class:`CallStopped` is raised instead.
    """
    if not in_worker:
        recovered = recover_call(item, spec, backends)
        if recovered is not None:
            return recovered
    try:
        backend = backends.for_role(spec.role, spec.plays)
    except (ConfigError, BackendUnavailable) as exc:
        raise type(exc)(f"{spec.role}: {exc}") from None
    # Each run gets the whole retry budget: a person re-running after a
    # failure has usually fixed its cause.
    limit = backends.config.retries.agent + 1
    last_error = ""
    for tries in range(1, limit + 1):
        # Asked before a concurrency slot is taken: a person may be asked at a terminal.
        max_usd = backends.guard(spec) if backends.guard is not None else None
        with backends.slot(spec.role, spec.plays):
            if stopping is not None and stopping():
                raise CallStopped(spec.key)
            result, attempt_id = _attempt(
                item,
                state,
                backends,
                backend,
                spec,
                tries,
                max_usd,
                in_worker=in_worker,
                last=tries == limit,
            )
        if result.ok or (spec.timeout_ends and result.timed_out):
            return result
        # On one line: an agent's text must not print lines that look like phasegate's own.
        last_error = _one_line(result.error or "") or f"exit status {result.exit_status}"
        # A server that asked to be called again later (Retry-After) is waited for, up to
        # the call's own time limit; a longer wait is not made: the call fails now.
        asked = result.retry_after if tries < limit and not result.bad_setting else None
        call_limit = spec.timeout or backends.timeout(spec.role, spec.plays)
        waits: dict[str, Any] = {}
        if asked is not None:
            waits = {"retry_after": round(asked, 3), "retry": asked <= call_limit}
            waits["limit"] = call_limit
        item.record(
            "agent.failed",
            key=spec.key,
            attempt=attempt_id,
            role=spec.role,
            phase=spec.label,
            iteration=spec.iteration,
            tries=tries,
            of=limit,
            error=last_error,
            **waits,
            sync_now=True,
        )
        if result.bad_setting:
            raise ConfigError(
                f"{spec.role} ({backends.describe(spec.role, spec.plays)}): {last_error}"
            )
        if result.permanent:
            raise AgentError(
                f"{spec.role} ({backends.describe(spec.role, spec.plays)}) failed in phase "
                f"{_where(spec)}: {last_error}; not tried again: another attempt would only "
                "fail the same way"
            )
        if asked is not None and asked > call_limit:
            raise AgentError(
                f"{spec.role} ({backends.describe(spec.role, spec.plays)}) failed in phase "
                f"{_where(spec)}: {last_error}; not tried again: the server asked to wait "
                f"{asked:g}s, longer than the call's {call_limit:g}s limit (timeouts.agent, "
                "or the role's timeout)"
            )
        if asked:
            _wait(asked, stopping, spec.key)
    if _ends_failed(spec, result, last=True):
        return result  # journaled as the call's result: the node goes where ``failed`` says
    # Out of time: which setting gives it more (the limit is not always timeouts.agent).
    longer = f"; to give it longer, raise {_limit_setting(backends, spec)}"
    raise AgentError(
        f"{spec.role} ({backends.describe(spec.role, spec.plays)}) failed in phase "
        f"{_where(spec)} "
        f"after {limit} attempt{'s' if limit > 1 else ''}: {last_error}"
        f"{longer if result.timed_out else ''}"
    )


def _ends_failed(spec: CallSpec, result: AgentResult, *, last: bool) -> bool:
    """Whether ``result``, the last attempt's, failed and is the call's result (the node
    maps ``failed``); a bad setting or a failure another attempt would repeat stops the run."""
    return (
        spec.failure_ends
        and last
        and not result.ok
        and not result.bad_setting
        and not result.permanent
    )


def _one_line(text: str) -> str:
    """``text``'s lines joined with `` | `` (blank ones left out)."""
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


def _limit_setting(backends: Backends, spec: CallSpec) -> str:
    """Where the time limit of ``spec``'s call is set: the review's own ``timeout`` in
    the workflow, the role's ``timeout`` in the config, else ``timeouts.agent``."""
    if spec.timeout:
        return "the reviewer's timeout in the workflow (seconds, or the item's data it names)"
    binding = backends.binding(spec.role, spec.plays)
    if binding is not None and binding.timeout:
        bound = backends._bound(spec.role, spec.plays)
        key = bound if bound in backends.config.roles else "default"
        return f"roles.{key}.timeout in .phasegate/config.yaml"
    return "timeouts.agent in .phasegate/config.yaml"


def _wait(seconds: float, stopping: Callable[[], bool] | None, key: str) -> None:
    """Sleep ``seconds`` before the next attempt; a stopping run stops waiting."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if stopping is not None and stopping():
            raise CallStopped(key)
        time.sleep(min(left, 0.5))


def _where(spec: CallSpec) -> str:
    """The node a call belongs to, as a person finds it (``specs[auth.md]/spec``)."""
    return spec.path


def recover_call(
    item: WorkItem, spec: CallSpec, backends: Backends | None = None
) -> AgentResult | None:
    """A result an earlier run journaled for this very call, if any (``backends``: where the
    limit of a call without a ``timeout`` of its own is read, the role's or the default)."""
    recorded = item.recorded()
    found = recorded.result(spec.key)
    now = spec.timeout or (backends.timeout(spec.role, spec.plays) if backends else None)
    if found is not None and _timed_out_sooner(found, now):
        # A review that ran out of a limit raised since is asked again, in the time it has now.
        recorded.forget(spec.key)
        found = None
    if found is not None:
        item.record(
            "agent.recovered",
            key=spec.key,
            attempt=found.get("attempt"),
            role=spec.role,
            phase=spec.label,
            iteration=spec.iteration,
        )
        recorded.forget(spec.key)
        return result_from_event(found)
    abandoned = recorded.abandoned(spec.key)
    if abandoned is not None:
        item.record(
            "agent.abandoned",
            key=spec.key,
            attempt=abandoned,
            role=spec.role,
            phase=spec.label,
            iteration=spec.iteration,
            reason="the run stopped before this call returned",
        )
    return None


def _timed_out_sooner(found: Mapping[str, Any], now: float | None) -> bool:
    """Whether ``found``, a call's journaled result, ran out of a smaller time limit than
    the call is given now, ``now`` (a reviewer's ``timeout``, raised since:
    ``review_timeout_minutes``; or its role's, or ``timeouts.agent``)."""
    limit = found.get("timeout_s")
    return (
        bool(found.get("timed_out"))
        and isinstance(limit, int | float)
        and now is not None
        and limit < now
    )


def _visit(key: str) -> str:
    """The visit a call key (``PATH#VISIT/...``) belongs to (``1`` when it names none)."""
    _, found, rest = key.rpartition("#")
    visit = rest.split("/", 1)[0] if found else ""
    return visit if visit.isdigit() else "1"


def _attempt(
    item: WorkItem,
    state: EngineState,
    backends: Backends,
    backend: Backend,
    spec: CallSpec,
    tries: int,
    max_usd: float | None = None,
    *,
    in_worker: bool = False,
    last: bool = False,
) -> tuple[AgentResult, str]:
    attempt_id = f"{spec.label}.{spec.iteration}.{spec.role}.{secrets.token_hex(3)}"
    instructions, parts = spec.build_prompt()
    workdir = spec.workdir or item.workdir(state)
    labels = {
        "attempt": attempt_id,
        "item": item.name,
        "workflow": item.workflow.name,
        "phase": spec.label,
        "node": spec.path.rsplit("/", 1)[-1].split("[", 1)[0],
        "path": spec.path,
        "iteration": str(spec.iteration),
        # The node's visit (a check or gate sending the item back to it starts another).
        "visit": _visit(spec.key),
        "stage": spec.stage,
        "item_dir": relative_to(item.item_dir, workdir),
    }
    if spec.task is not None:
        labels["task"] = spec.task
    if spec.plays is not None:
        labels["plays"] = spec.plays
    request = AgentRequest(
        role=spec.role,
        prompt=parts,
        instructions=instructions,
        workdir=workdir,
        access=spec.access,
        timeout=spec.timeout or backends.timeout(spec.role, spec.plays),
        output_schema=spec.output_schema,
        # The item folder is writable too when it lies outside the work tree
        # (a worktree's agents write artifacts to the main checkout's folder).
        extra_dirs=() if _inside(item.item_dir, workdir) else (item.item_dir,),
        mcp_servers=spec.mcp_servers,
        labels=labels,
        hints=spec.hints,
        max_budget_usd=max_usd,
    )
    if not in_worker:
        # The steps before this call are committed first, so a run that dies in the
        # call finds its dispatch in the journal's tail (and journals it abandoned).
        item.before_slow_work()
    # After fast steps the state is committed late, should this call take long.
    with nullcontext() if in_worker else item.waiting():
        item.record(
            "agent.dispatched",
            key=spec.key,
            attempt=attempt_id,
            role=spec.role,
            # The workflow role an agent chosen at run time plays: its budget cap counts it.
            **_plays(spec),
            backend=backends.describe(spec.role, spec.plays),
            phase=spec.label,
            path=spec.path,
            iteration=spec.iteration,
            stage=spec.stage,
            access=spec.access.value,
            tries=tries,
            prompt_chars=len(request.prompt_text()),
        )
        crash_point("dispatch.before_call")
        started = time.monotonic()
        try:
            # Whatever the agent changes of phasegate's own files is put back (engine/protect.py).
            result = guarded_call(
                item,
                lambda: backend.run(request),
                key=spec.key,
                attempt=attempt_id,
                role=spec.role,
                exempt=backend.own_files(),
                workdir=request.workdir,
                writes=spec.writes,
                node=spec.path,
            )
        except KeyboardInterrupt as exc:
            # Ctrl-C or a stop signal: the agent's process tree is already killed.
            item.record(
                "agent.abandoned",
                key=spec.key,
                attempt=attempt_id,
                role=spec.role,
                phase=spec.label,
                iteration=spec.iteration,
                reason="phasegate was stopped",
                signal=getattr(exc, "signal_name", "SIGINT"),
                killed=len(getattr(exc, "killed", ())),
                sync_now=True,
            )
            raise
        except ConnectionError as exc:
            # A backend should report its agent's failures, but a broken pipe (the
            # agent's process gone while we write its stdin) can still escape one:
            # it is a failed attempt to retry, not a crash of phasegate.
            result = AgentResult(
                text="",
                exit_status=1,
                error=f"lost the connection to the agent ({exc.__class__.__name__}: {exc})",
            )
    if not in_worker:
        item.slow_work_done(time.monotonic() - started)
    crash_point("dispatch.after_call")
    # Written to the OS now (a killed process keeps it) and fsync'd by the
    # commit that applies it, before the state file is replaced.
    final_timeout = spec.timeout_ends and result.timed_out
    final_failure = not final_timeout and _ends_failed(spec, result, last=last)
    # The limit it ran out of: raised since, a resumed run asks again (recover_call).
    ran_out = spec.timeout or backends.timeout(spec.role, spec.plays)
    limit: dict[str, Any] = {"timeout_s": ran_out} if final_timeout else {}
    item.record_result(
        "agent.finished",
        spec.key if result.ok or final_timeout or final_failure else None,
        **result_to_event(result, item),
        key=spec.key,
        attempt=attempt_id,
        role=spec.role,
        phase=spec.label,
        iteration=spec.iteration,
        **({"timed_out": True, "final": True} if final_timeout else {}),
        **({"final": True, "gave_up": True} if final_failure else {}),
        **limit,
    )
    # The result is journaled but not yet applied: where a resumed run must recover it.
    crash_point("agent.returned")
    return result, attempt_id


def relative_to(path: Path, base: Path) -> str:
    """``path`` as an agent working in ``base`` sees it: relative when inside, else absolute."""
    try:
        return _lexically_relative(path, base)
    except ValueError:
        pass
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


@functools.lru_cache(maxsize=1024)  # asked many times a step, for a few paths
def _lexically_relative(path: Path, base: Path) -> str:
    return str(path.relative_to(base))


def _inside(path: Path, root: Path) -> bool:
    name, base = str(path), str(root)
    if name.startswith("/") and base.startswith("/"):  # ``root in path.parents`` on text
        lexically = name == base or name.startswith(base if base.endswith("/") else base + "/")
    else:
        lexically = path == root or root in path.parents
    return lexically or root.resolve() in path.resolve().parents
