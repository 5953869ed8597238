"""Redaction of secrets before anything reaches disk or a prompt.

Two sources of secrets are covered: the values (6 characters or longer) of
environment variables whose names say they hold a secret (``*_API_KEY``,
``*_TOKEN``, ``*SECRET*``, ``*PASSWORD*``...), and strings shaped like
well-known credentials (OpenAI and Anthropic keys, GitHub, GitLab, npm,
Hugging Face, Slack and Stripe tokens, Google API keys and OAuth tokens, AWS
key ids, bearer headers, JWTs, private-key blocks, the password in
``scheme://user:password@host``, the value of ``NAME=value`` or ``NAME: value``
whose name says it holds a secret). Every writer of state, journal, history and
prompts runs its text through :func:`redact`; in the documents phasegate writes, the
fields holding its own words (:data:`STRUCTURAL_KEYS`) are masked of token shapes
only, never of environment values (:meth:`Redactor.field`).

Text that is cut to a length is redacted first and cut after
(:meth:`Redactor.tail`, :meth:`Redactor.clip`): cutting first could leave the
end of a secret that no longer matches anything.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MASK = "[REDACTED]"

_SECRET_NAME = re.compile(
    r"(API[_-]?KEY|(?:^|[_-])KEY(?:[_-]|$)|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|"
    r"PRIVATE[_-]?KEY|AUTH)",
    re.I,
)
# Values shorter than this are too likely to collide with ordinary words.
_MIN_SECRET_LEN = 6
#: Of a long text cut to a limit, only this much beyond the limit is redacted (then dropped).
CUT_MARGIN = 64 * 1024
#: Strings up to this long are redacted once per redactor and remembered (at most this many).
_REMEMBERED_LENGTH = 512
_REMEMBERED_COUNT = 4096
#: Longer strings up to this long (artifacts, inputs and templates shown in every prompt,
#: an agent's answer redacted again when journaled) are remembered too, up to this many
#: characters in all: scanning a long text costs far more than looking it up.
_LONG_REMEMBERED_LENGTH = 256 * 1024
_LONG_REMEMBERED_CHARS = 2 * 1024 * 1024


@dataclass(frozen=True)
class _TokenShape:
    """A credential's shape, and lowercase strings one of which every match contains."""

    pattern: re.Pattern[str]
    replacement: str
    triggers: tuple[str, ...]


def _shape(pattern: str, *triggers: str, replacement: str = MASK, flags: int = 0) -> _TokenShape:
    return _TokenShape(re.compile(pattern, flags), replacement, triggers)


_KEEP_PREFIX = r"\1" + MASK  # the first group (a label) stays, the secret after it goes


# Checking for the triggers (plain substring tests) is an order of magnitude
# cheaper than a regex scan, and clean text is the common case: it then costs
# no regex at all, and text with a trigger only the scans of the shapes it names.
_TOKEN_SHAPES: tuple[_TokenShape, ...] = (
    _shape(
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----",
        "private key",
        flags=re.S,
    ),
    _shape(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}", "sk-"),
    _shape(
        r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}",
        *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _shape(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "xox"),  # Slack
    _shape(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}", "k_live_", "k_test_"),  # Stripe
    _shape(r"\bglpat-[0-9A-Za-z_\-]{20,}", "glpat-"),  # GitLab
    _shape(r"\bnpm_[0-9A-Za-z]{36,}", "npm_"),
    _shape(r"\bhf_[0-9A-Za-z]{30,}", "hf_"),  # Hugging Face
    _shape(r"\bya29\.[0-9A-Za-z_\-]{20,}", "ya29."),  # Google OAuth access token
    _shape(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "akia", "asia"),  # AWS key id
    _shape(r"\bAIza[0-9A-Za-z_\-]{30,}", "aiza"),  # Google API key
    _shape(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}", "eyj"),  # JWT
    _shape(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{12,}=*", "bearer", replacement=_KEEP_PREFIX),
    # The password of scheme://user:password@host (the user name is kept).
    _shape(r"(://[^\s:/?#@]+:)[^\s/?#@]+(@)", "://", replacement=_KEEP_PREFIX + r"\2"),
)

# ``NAME=value``, ``NAME: value``, ``NAME = value`` (quoted or not): the value (12
# characters or longer) is masked when a word of NAME names a secret (see
# :func:`_is_secret_assignment_name`). The name is at most 64 characters and starts
# where a name can start, so the scan stays linear in the length of the text.
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.])([\"']?)([A-Za-z][A-Za-z0-9_.\-]{0,63})"
    r"([\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9._~+/\-]{12,}=*)"
)
_ASSIGNMENT_TRIGGERS = ("key", "token", "secret", "passw", "credential", "auth")
# A word of a name that names a secret: one holding token, secret, password, passwd
# or credential (``accessToken``, ``clientsecret``); ``key`` or ``keys`` alone or
# after a word that says what key (``apikey``, ``secretkey``); ``auth`` alone or as
# in ``oauth``, ``authn``, ``authorization``. Words that merely contain ``key`` or
# ``auth`` (``monkey``, ``keyboard``, ``author``) are ordinary names.
_SECRET_WORD = re.compile(
    r"(?:.*(?:token|secret|passw(?:or)?d|credential).*"
    r"|(?:api|access|private|secret|client|signing|master|encryption|license|session)?keys?"
    r"|o?auth(?:[nz]|orization|entication)?)",
    re.I,
)
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NAME_WORD_SEPARATORS = re.compile(r"[_.\-]+")


@functools.lru_cache(maxsize=4096)
def _is_secret_assignment_name(name: str) -> bool:
    """Whether ``name`` in ``name=value`` (or ``name: value``) marks the value as a secret."""
    words = _NAME_WORD_SEPARATORS.split(_CAMEL_BOUNDARY.sub("_", name))
    return any(_SECRET_WORD.fullmatch(word) for word in words if word)


#: A value that is itself the name of an environment variable (``credentials:
#: ANTHROPIC_API_KEY`` says where a key is, it is not one).
_VARIABLE_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
#: A value that is a relative path to a file (``add-oauth: changes/add-oauth/spec.md``
#: names a file of the change ``add-oauth``): folders, then a name with the extension of
#: a common kind of file. Keys and tokens have no such shape (base64 has no ``.``, a JWT
#: no ``/``); a password may (``Xk9mQ2v/Lp8zR4t.Yw``), which the list of extensions keeps
#: masked.
_FILE_PATH = re.compile(
    r"(?:[A-Za-z0-9_\-.]+/)+[A-Za-z0-9_\-]+\.(?:"
    r"md|markdown|txt|rst|adoc|ya?ml|json|jsonl|toml|ini|cfg|conf|lock|csv|xml|html?|css|scss"
    r"|py|pyi|js|mjs|cjs|jsx|ts|tsx|go|rs|rb|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh|bash"
    r"|sql|proto|tf|pem|crt|key|env|log|png|svg)"
)


def _mask_assignment(match: re.Match[str]) -> str:
    value = match.group(4)
    if (
        not _is_secret_assignment_name(match.group(2))
        or _VARIABLE_NAME.fullmatch(value)
        or _FILE_PATH.fullmatch(value)
    ):
        return match.group(0)
    return match.group(1) + match.group(2) + match.group(3) + MASK


_ALL_TRIGGERS = (
    *(t for shape in _TOKEN_SHAPES for t in shape.triggers),
    *_ASSIGNMENT_TRIGGERS,
)
# Looked for only in text holding an underscore: one scan instead of ten in most prose.
_UNDERSCORED = tuple(t for t in _ALL_TRIGGERS if "_" in t)
_PLAIN = tuple(t for t in _ALL_TRIGGERS if "_" not in t)


#: Keys under which the documents phasegate writes (state, journal, views, index) hold
#: phasegate's own words: statuses, stages, verdicts, outcomes, node paths, labels,
#: decision ids, choices, attempt ids, timestamps. Environment values never rewrite
#: what is under them (see :meth:`Redactor.field`); token shapes still do.
STRUCTURAL_KEYS = frozenset(
    {
        *("status", "review", "event", "outcome", "at", "phase", "label", "node"),
        *("workflow", "mode", "stage", "kind", "id", "decision", "choice", "attempt"),
        *("key", "path", "state", "item", "currentPhase", "nextPhase", "inProgress"),
        *("nextCommand", "from", "to", "from_label", "to_label", "end_label", "from_phase"),
        *("target", "word", "verdict", "source", "reviewer", "role", "backend", "policy"),
        *("action", "severity", "access", "current_state", "by"),
        *("ts", "timestamp", "created", "updated", "started", "completed", "entered"),
    }
)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables whose names mark them as secrets, longest first."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if len(value) >= _MIN_SECRET_LEN and _is_secret_name(name)
    }
    return sorted(values, key=len, reverse=True)


#: The environment :func:`environ_secret_values` last looked through, and what it found.
_environ_seen: tuple[tuple[Any, ...], list[str]] | None = None


def environ_secret_values() -> list[str]:
    """:func:`secret_values` of ``os.environ``, looked through again only when it changed
    (``status`` makes a redactor for each of a thousand items)."""
    global _environ_seen
    raw = getattr(os.environ, "_data", None)  # CPython's bytes mapping: no decoding
    if not isinstance(raw, dict):
        return secret_values()
    key = tuple(raw.items())
    seen = _environ_seen
    if seen is not None and seen[0] == key:
        return list(seen[1])
    values = secret_values()
    _environ_seen = (key, values)
    return list(values)


@functools.lru_cache(maxsize=4096)
def _is_secret_name(name: str) -> bool:
    """Whether ``name`` marks its variable as a secret (each work item asks again)."""
    return _SECRET_NAME.search(name) is not None


class Redactor:
    """Masks secret values and token-shaped strings in text."""

    def __init__(self, extra_secrets: Iterable[str] = (), *, use_environ: bool = True) -> None:
        found = environ_secret_values() if use_environ else []
        found.extend(s for s in extra_secrets if len(s) >= _MIN_SECRET_LEN)
        self._values = sorted(set(found), key=len, reverse=True)
        #: Short strings already redacted (state and journal repeat them at every step).
        self._seen: dict[str, str] = {}
        #: The same for :meth:`field`'s values, redacted of token shapes only.
        self._seen_shapes: dict[str, str] = {}
        #: Longer strings already redacted, and how many characters they hold in all.
        self._seen_long: dict[str, str] = {}
        self._seen_long_chars = 0

    @property
    def values(self) -> tuple[str, ...]:
        """The secret values this redactor masks wherever they occur, longest first."""
        return tuple(self._values)

    def sparing(self, identifiers: Iterable[str]) -> Redactor:
        """This redactor without the secret values equal to one of ``identifiers``.

        The identifiers are names phasegate itself writes into state and journal (a
        workflow's name, its node ids, labels, decision ids, choices, an item's name):
        a variable whose value is one of them (``AUTH_MODE=review-loop``) holds no
        secret that text could leak, and masking it would rewrite the recorded state
        for good. Token shapes and every other value are masked as before.
        """
        names = set(identifiers)
        if names.isdisjoint(self._values):
            return self
        spared = Redactor(use_environ=False)
        spared._values = [value for value in self._values if value not in names]
        return spared

    def text(self, text: str) -> str:
        """Return ``text`` with every secret replaced by ``[REDACTED]``."""
        if len(text) < _MIN_SECRET_LEN:
            return text
        if len(text) <= _REMEMBERED_LENGTH:
            known = self._seen.get(text)
            if known is None:
                known = self._redact(text)
                if len(self._seen) >= _REMEMBERED_COUNT:
                    self._seen.clear()
                self._seen[text] = known
            return known
        if len(text) > _LONG_REMEMBERED_LENGTH:
            return self._redact(text)
        known = self._seen_long.get(text)
        if known is None:
            known = self._redact(text)
            if self._seen_long_chars + len(text) > _LONG_REMEMBERED_CHARS:
                self._seen_long.clear()
                self._seen_long_chars = 0
            self._seen_long[text] = known
            self._seen_long_chars += len(text)
        return known

    def _redact(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        return self._shapes(text)

    def _shapes(self, text: str) -> str:
        """``text`` with token-shaped strings and secret assignments masked."""
        lowered = text.lower()
        found = {t for t in _PLAIN if t in lowered}
        if "_" in lowered:
            found.update(t for t in _UNDERSCORED if t in lowered)
        if found:
            for shape in _TOKEN_SHAPES:
                if not found.isdisjoint(shape.triggers):
                    text = shape.pattern.sub(shape.replacement, text)
            if not found.isdisjoint(_ASSIGNMENT_TRIGGERS):
                text = _ASSIGNMENT.sub(_mask_assignment, text)
        return text

    def tail(self, text: str, limit: int) -> str:
        """The last ``limit`` characters of ``text``, redacted before it is cut.

        A long text is redacted only in its last ``limit`` + :data:`CUT_MARGIN`
        characters, and the margin dropped after: a secret the window's edge
        runs through lies in the margin, never in what is kept.
        """
        if limit <= 0:
            return ""
        if len(text) <= limit + CUT_MARGIN:
            return self.text(text)[-limit:]
        window = self.text(text[-(limit + CUT_MARGIN) :])
        return window[CUT_MARGIN:][-limit:]

    def clip(self, text: str, limit: int) -> str:
        """The first ``limit`` characters of ``text``, redacted before it is cut."""
        if limit <= 0:
            return ""
        if len(text) <= limit + CUT_MARGIN:
            return self.text(text)[:limit]
        window = self.text(text[: limit + CUT_MARGIN])
        return window[: len(window) - CUT_MARGIN][:limit]

    def data(self, value: Any) -> Any:
        """Redact every string inside JSON-like data (dicts, lists, scalars).

        The value of a key of :data:`STRUCTURAL_KEYS` in a mapping is redacted as
        :meth:`field` says.
        """
        kind = type(value)  # the common JSON types first: an ABC check costs more
        if kind is str:
            return self.text(value)
        if kind is dict:
            return self._mapping(value)
        if kind is list:
            return [self.data(v) for v in value]
        if kind is int or kind is float or kind is bool or value is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {k: self.field(k, v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value

    def _mapping(self, value: dict[Any, Any]) -> dict[Any, Any]:
        """``{k: self.field(k, v)}``, with the common cases inline (state and journal
        redact many small dicts at every step)."""
        out = {}
        structural, seen, seen_shapes = STRUCTURAL_KEYS, self._seen, self._seen_shapes
        for k, v in value.items():
            kind = type(v)
            if kind is str:
                if len(v) < _MIN_SECRET_LEN:
                    out[k] = v
                elif k in structural:  # a string already redacted is taken as it was
                    known = seen_shapes.get(v)
                    out[k] = self._structural_text(v) if known is None else known
                else:
                    known = seen.get(v)
                    out[k] = self.text(v) if known is None else known
            elif kind is int or kind is bool or v is None or kind is float:
                out[k] = v  # under any key (see field)
            elif kind is dict:
                out[k] = self._mapping(v)  # under any key (see field)
            elif k in structural:
                out[k] = self.field(k, v)
            else:
                out[k] = self.data(v)
        return out

    def field(self, key: Any, value: Any) -> Any:
        """``value`` redacted as the value of ``key`` in a document phasegate writes.

        Under a key of :data:`STRUCTURAL_KEYS` a string (or a list's strings) is
        phasegate's own word, a status or a node's path: it is redacted of token shapes
        but never of environment values, so that a variable holding ``approved`` or
        ``active`` cannot rewrite the recorded state. Anything else is :meth:`data`.
        """
        if key not in STRUCTURAL_KEYS:
            return self.data(value)
        kind = type(value)
        if kind is str or isinstance(value, str):
            return self._structural_text(value)
        if kind is list or isinstance(value, list | tuple):
            return [self.field(key, v) for v in value]
        return self.data(value)

    def _structural_text(self, text: str) -> str:
        if len(text) < _MIN_SECRET_LEN:
            return text
        if len(text) > _REMEMBERED_LENGTH:
            return self._shapes(text)
        known = self._seen_shapes.get(text)
        if known is None:
            known = self._shapes(text)
            if len(self._seen_shapes) >= _REMEMBERED_COUNT:
                self._seen_shapes.clear()
            self._seen_shapes[text] = known
        return known


#: The identifiers of the work items this process opened (their names, their workflows'
#: names, node ids, labels...): what :func:`message_redactor` spares. Replaced, never
#: changed in place: the dashboard's threads read it while another one adds to it.
_spared_in_messages: frozenset[str] = frozenset()
_SPARED_MAX = 65536


def spare_in_messages(identifiers: Iterable[str]) -> None:
    """Have the lines this process prints (errors, warnings, the dashboard's timeline)
    leave ``identifiers`` as they are, as the item's own files do (:meth:`Redactor.sparing`)."""
    global _spared_in_messages
    known, names = _spared_in_messages, frozenset(identifiers)
    if len(known) < _SPARED_MAX and not names <= known:
        _spared_in_messages = known | names


def message_redactor() -> Redactor:
    """A redactor of the environment's secrets sparing the identifiers of the work items this
    process opened (see :func:`spare_in_messages`): a variable whose value is an item's or a
    phase's name does not mask it in an error line."""
    return Redactor().sparing(_spared_in_messages)


def redact_message(text: str) -> str:
    """``text`` (a line for the user) redacted by :func:`message_redactor`."""
    return message_redactor().text(text)


def redact(text: str) -> str:
    """Redact ``text`` using the current environment's secrets."""
    return Redactor().text(text)


def redact_data(value: Any) -> Any:
    """Redact every string in JSON-like data using the current environment's secrets."""
    return Redactor().data(value)
