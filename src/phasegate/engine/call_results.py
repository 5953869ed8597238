"""An agent call's result as the journal records it, and rebuilt from it on resume.

The text and stderr kept are redacted before they are cut, so no tail of a
secret survives the cut; what a result spent is counted by :func:`usage_of`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from phasegate.agents.base import AgentResult, TokenUsage

if TYPE_CHECKING:
    from phasegate.engine.item import WorkItem

#: How much of an agent's answer, and of its stderr, the journal keeps.
JOURNAL_TEXT_LIMIT = 20_000
STDERR_LIMIT = 2_000


def result_to_event(result: AgentResult, item: WorkItem | None = None) -> dict[str, Any]:
    """The journal fields of a result (enough to rebuild it on resume).

    Long text is redacted before it is cut, so no tail of a secret survives
    the cut.
    """
    redactor = item.redactor if item is not None else None
    text = (
        redactor.clip(result.text, JOURNAL_TEXT_LIMIT)
        if redactor
        else result.text[:JOURNAL_TEXT_LIMIT]
    )
    stderr = (
        redactor.tail(result.stderr, STDERR_LIMIT) if redactor else result.stderr[-STDERR_LIMIT:]
    )
    return {
        "ok": result.ok,
        "exit_status": result.exit_status,
        "error": result.error,
        "text": text,
        "structured": dict(result.structured) if result.structured is not None else None,
        "usage": {
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "cache_read_tokens": result.usage.cache_read_tokens,
            "cache_write_tokens": result.usage.cache_write_tokens,
        },
        "cost_usd": result.cost_usd,
        "duration_s": round(result.duration_s, 3),
        "session_id": result.session_id,
        "stderr": stderr,
        # How a reused result reads as it did: a cut-off answer names the token limit, a
        # permanent failure is not retried.
        **({"cut_off": result.cut_off} if result.cut_off else {}),
        **({"permanent": True} if result.permanent else {}),
    }


def result_from_event(event: Mapping[str, Any]) -> AgentResult:
    """Rebuild a result from its ``agent.finished`` journal event."""
    usage = event.get("usage") or {}
    return AgentResult(
        text=str(event.get("text") or ""),
        structured=event.get("structured"),
        exit_status=int(event.get("exit_status") or 0),
        usage=TokenUsage(
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
            int(usage.get("cache_read_tokens", 0)),
            int(usage.get("cache_write_tokens", 0)),
        ),
        cost_usd=event.get("cost_usd"),
        duration_s=float(event.get("duration_s") or 0.0),
        session_id=event.get("session_id"),
        error=event.get("error"),
        stderr=str(event.get("stderr") or ""),
        permanent=event.get("permanent") is True,
        cut_off=str(event["cut_off"]) if event.get("cut_off") else None,
    )


def usage_of(result: AgentResult) -> dict[str, Any]:
    """A result's spend in the shape :meth:`EngineState.add_usage` takes."""
    return {
        "input_tokens": result.usage.input_tokens,
        "output_tokens": result.usage.output_tokens,
        "cache_read_tokens": result.usage.cache_read_tokens,
        "cache_write_tokens": result.usage.cache_write_tokens,
        "cost_usd": result.cost_usd,
    }
