"""A secret's value shaped like a relative path (``Xk9mQ2v/Lp8zR4t.Yw``: a ``/`` and a
``.``) is masked: only a path ending in the extension of a common kind of file is taken for
a file's name and kept."""

from __future__ import annotations

import pytest

from phasegate.redact import MASK, Redactor

# Built by concatenation so the test file itself holds no secret-looking literal.
PATH_SHAPED = "Xk9mQ2v/" + "Lp8zR4t.Yw"


@pytest.mark.parametrize("name", ["DB_PASSWORD", "SECRET_TOKEN", "api_key", "oauth"])
def test_a_path_shaped_secret_is_masked(name: str) -> None:
    redactor = Redactor(use_environ=False)
    assert redactor.text(f"{name}={PATH_SHAPED}") == f"{name}={MASK}"
    assert redactor.text(f"{name}: {PATH_SHAPED}") == f"{name}: {MASK}"


@pytest.mark.parametrize(
    "text",
    [
        "add-oauth: changes/add-oauth/specs/session.md",
        "credentials_file: config/prod/settings.yaml",
        "auth: src/app/auth_flows.py",
        "token_store=var/lib/tokens.json",
    ],
)
def test_a_path_to_a_common_kind_of_file_is_kept(text: str) -> None:
    assert Redactor(use_environ=False).text(text) == text
