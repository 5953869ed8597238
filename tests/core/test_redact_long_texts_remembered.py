"""A long text redacted once is remembered by its redactor (artifacts and inputs are shown
in every prompt): the answer is always what redacting it afresh gives, a changed text is
redacted again, and what is remembered stays bounded."""

from __future__ import annotations

import pytest

import phasegate.redact as redact_module
from phasegate.redact import MASK, Redactor

SECRET = "s3cr3t-value-for-tests"
TOKEN = "ghp_" + "A" * 36


def _long(extra: str = "") -> str:
    return ("Plain words of a long artifact.\n" * 200) + extra


def test_a_long_text_is_redacted_as_afresh_and_a_changed_one_again() -> None:
    redactor = Redactor([SECRET], use_environ=False)
    clean = _long()
    assert redactor.text(clean) == clean
    assert redactor.text(clean) == clean  # remembered
    with_secret = _long(f"the key is {SECRET}\n")
    assert SECRET not in redactor.text(with_secret)
    assert redactor.text(with_secret) == clean + f"the key is {MASK}\n"
    with_token = _long(f"token {TOKEN} here\n")
    assert TOKEN not in redactor.text(with_token)
    for text in (clean, with_secret, with_token):
        assert redactor.text(text) == Redactor([SECRET], use_environ=False)._redact(text)


def test_what_one_redactor_remembers_is_not_used_by_another() -> None:
    text = _long(f"{SECRET}\n")
    plain = Redactor(use_environ=False)
    assert plain.text(text) == text  # this one knows no secret value
    masking = Redactor([SECRET], use_environ=False)
    assert SECRET not in masking.text(text)
    spared = masking.sparing([SECRET])
    assert spared.text(text) == text


def test_remembered_texts_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redact_module, "_LONG_REMEMBERED_CHARS", 20_000)
    redactor = Redactor([SECRET], use_environ=False)
    for number in range(50):
        text = _long(f"{number} {SECRET}\n")
        assert redactor.text(text).endswith(f"{number} {MASK}\n")
        assert redactor._seen_long_chars <= 20_000
        assert sum(len(t) for t in redactor._seen_long) == redactor._seen_long_chars
    huge = "x" * (redact_module._LONG_REMEMBERED_LENGTH + 1) + SECRET
    assert redactor.text(huge).endswith(MASK)
    assert huge not in redactor._seen_long
