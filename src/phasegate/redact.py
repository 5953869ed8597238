"""Redaction of secrets before anything reaches disk or a prompt.

Two sources of secrets are covered: the values of environment variables whose
names say they hold a secret (``*_API_KEY``, ``*_TOKEN``, ``*SECRET*``,
``*PASSWORD*``...), and strings shaped like well-known credentials (OpenAI and
Anthropic keys, GitHub and Slack tokens, AWS key ids, bearer headers, JWTs,
private-key blocks). Every writer of state, journal, history and prompts runs
its text through :func:`redact`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "[REDACTED]"

_SECRET_NAME = re.compile(
    r"(API[_-]?KEY|(?:^|[_-])KEY(?:[_-]|$)|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|"
    r"PRIVATE[_-]?KEY|AUTH)",
    re.I,
)
# Values shorter than this are too likely to collide with ordinary words.
_MIN_SECRET_LEN = 8

_TOKEN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
        MASK,
    ),
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}"), MASK),
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"), MASK),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"), MASK),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{12,}=*"), r"\1" + MASK),
    (
        re.compile(
            r"(?i)([\"']?(?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password)"
            r"[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._~+/\-]{12,}"
        ),
        r"\1" + MASK,
    ),
)


# Every pattern above contains one of these (lowercased). Checking for them is
# an order of magnitude cheaper than any regex scan, and clean text is the
# common case: it then costs no regex at all.
_TRIGGERS = (
    "private key",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "akia",
    "asia",
    "aiza",
    "eyj",
    "bearer",
    "key",
    "token",
    "secret",
    "password",
)


# One pass that finds whether any pattern matches, so text with a trigger
# word but no secret costs a single regex scan instead of one per pattern.
def _scoped(pattern: str) -> str:
    if pattern.startswith("(?i)"):
        return f"(?i:{pattern[4:]})"
    return f"(?:{pattern})"


_ANY_TOKEN = re.compile("|".join(_scoped(p.pattern) for p, _ in _TOKEN_PATTERNS), re.S)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names mark them as secrets, longest first."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_LEN
    }
    return sorted(values, key=len, reverse=True)


class Redactor:
    """Masks secret values and token-shaped strings in text."""

    def __init__(self, extra_secrets: Iterable[str] = (), *, use_environ: bool = True) -> None:
        found = list(secret_values()) if use_environ else []
        found.extend(s for s in extra_secrets if len(s) >= _MIN_SECRET_LEN)
        self._values = sorted(set(found), key=len, reverse=True)

    def text(self, text: str) -> str:
        """Return ``text`` with every secret replaced by ``[REDACTED]``."""
        if len(text) < _MIN_SECRET_LEN:
            return text
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        lowered = text.lower()
        if any(t in lowered for t in _TRIGGERS) and _ANY_TOKEN.search(text):
            for pattern, replacement in _TOKEN_PATTERNS:
                text = pattern.sub(replacement, text)
        return text

    def data(self, value: Any) -> Any:
        """Redact every string inside JSON-like data (dicts, lists, scalars)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {k: self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value


def redact(text: str) -> str:
    """Redact ``text`` using the current environment's secrets."""
    return Redactor().text(text)


def redact_data(value: Any) -> Any:
    """Redact every string in JSON-like data using the current environment's secrets."""
    return Redactor().data(value)
