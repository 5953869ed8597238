"""Named fault-injection points, driven by the environment in tests.

Production code calls :func:`crash_point` at the moments where a crash matters
(between a journal append and a state commit, during an atomic write...). When
``PHASEGATE_CRASH_AT`` names that point, the process kills itself with SIGKILL
there, exactly as a power cut or ``kill -9`` would. ``NAME@N`` crashes on the
N-th time the point is reached (1-based) in this process.
"""

from __future__ import annotations

import os
import signal

ENV_VAR = "PHASEGATE_CRASH_AT"

_hits: dict[str, int] = {}

#: ``ENV_VAR`` as a key of ``os.environ``'s own mapping (CPython's ``_data``): whether a crash
#: is armed at all is one lookup there (the points are passed many times per agent call).
_RAW_KEY: object = getattr(os.environ, "encodekey", lambda key: None)(ENV_VAR)


def crash_point(name: str) -> None:
    """Kill this process with SIGKILL if ``PHASEGATE_CRASH_AT`` selects ``name``."""
    raw = getattr(os.environ, "_data", None)
    if type(raw) is dict and _RAW_KEY is not None and _RAW_KEY not in raw:
        return  # nothing armed
    spec = os.environ.get(ENV_VAR)
    if not spec:
        return
    target, _, nth = spec.partition("@")
    if target != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] >= (int(nth) if nth.isdigit() else 1):
        os.kill(os.getpid(), signal.SIGKILL)
