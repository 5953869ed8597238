"""Secrets never reach disk or a prompt: env secrets and token-shaped strings are masked."""

from __future__ import annotations

import pytest

from phasegate.redact import CUT_MARGIN, MASK, Redactor, redact, redact_data, secret_values

# Built by concatenation so the test file itself holds no token-shaped literal.
OPENAI_KEY = "sk-" + "proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
ANTHROPIC_KEY = "sk-" + "ant-api03-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3"
GITHUB_TOKEN = "ghp" + "_" + "abcdefghijklmnopqrstuvwxyz0123456789"
AWS_KEY_ID = "AKIA" + "IOSFODNN7EXAMPLE"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEpAIBAAKCAQEA1234567890abcdef\n"
    "ghijklmnopqrstuvwxyz==\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.fixture
def redactor() -> Redactor:
    """A redactor that ignores this machine's environment."""
    return Redactor(use_environ=False)


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "STRIPE_KEY", "GH_TOKEN", "CLIENT_SECRET", "DB_PASSWORD", "my_api-key"],
)
def test_env_value_of_a_secret_looking_name_is_masked(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Names containing KEY, TOKEN, SECRET or PASSWORD mark their values as secrets."""
    monkeypatch.setenv(name, "plain-looking-value-42")
    assert redact("connect with plain-looking-value-42 now") == f"connect with {MASK} now"


@pytest.mark.parametrize("name", ["KEYBOARD_LAYOUT", "MONKEY_NAME", "EDITOR", "HOME_DIR"])
def test_env_value_of_an_ordinary_name_is_kept(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "ordinary-value-17")
    assert redact("value: ordinary-value-17") == "value: ordinary-value-17"


def test_short_env_values_are_not_treated_as_secrets() -> None:
    """A 3-character 'secret' would mask ordinary words everywhere."""
    assert secret_values({"API_KEY": "abc", "TOKEN": "long-enough-token"}) == ["long-enough-token"]


def test_longer_secret_is_masked_before_its_prefix() -> None:
    """Values are replaced longest first, so no tail of a longer secret leaks."""
    redactor = Redactor(["password1", "password1-extended"], use_environ=False)
    assert redactor.text("x password1-extended y") == f"x {MASK} y"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"key is {OPENAI_KEY}.", f"key is {MASK}."),
        (f"ANTHROPIC={ANTHROPIC_KEY}", f"ANTHROPIC={MASK}"),
        (f"remote: https://{GITHUB_TOKEN}@github.com/x", f"remote: https://{MASK}@github.com/x"),
        (f"aws {AWS_KEY_ID} id", f"aws {MASK} id"),
        ("Authorization: Bearer abc.def-ghi_jklmnop", f"Authorization: Bearer {MASK}"),
        (
            "curl -H 'authorization: bearer Zm9vYmFyYmF6cXV4'",
            f"curl -H 'authorization: bearer {MASK}'",
        ),
        (f"before\n{PRIVATE_KEY}\nafter", f"before\n{MASK}\nafter"),
        ("api_key=abcdef1234567890", f"api_key={MASK}"),
        ('"password": "hunter2hunter2hunter2"', f'"password": "{MASK}"'),
        ("SECRET: s3cr3t-v4lu3-1234", f"SECRET: {MASK}"),
    ],
    ids=[
        "openai",
        "anthropic",
        "github",
        "aws",
        "bearer",
        "bearer-lower",
        "private-key",
        "key-value",
        "json-password",
        "yaml-secret",
    ],
)
def test_token_shaped_strings_are_masked(redactor: Redactor, text: str, expected: str) -> None:
    assert redactor.text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The risk-free task-management plan covers 12 tasks; see design.md.",
        "token: 42",
        "password: hunter2",
        "Use a bearer token in the Authorization header.",
        "skip-list and sk-learn are different things",
        "commit 3f9a2b7c1d0e, branch feature/auth-tokens",
        "## Requirements\n1. Rate limiting (max 100 req/min)\n",
    ],
)
def test_ordinary_text_is_untouched(redactor: Redactor, text: str) -> None:
    assert redactor.text(text) == text


def test_nested_data_is_redacted(redactor: Redactor) -> None:
    """Every string in JSON-like data is redacted; keys and non-strings are kept."""
    data = {
        "summary": f"uses {OPENAI_KEY}",
        "issues": [{"description": f"leaks {GITHUB_TOKEN}", "line": 3}, ("tuple", AWS_KEY_ID)],
        "count": 7,
        "ok": True,
        "none": None,
    }
    assert redactor.data(data) == {
        "summary": f"uses {MASK}",
        "issues": [{"description": f"leaks {MASK}", "line": 3}, ["tuple", MASK]],
        "count": 7,
        "ok": True,
        "none": None,
    }


def test_redact_data_uses_environment_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SERVICE_TOKEN", "tok-value-from-env")
    assert redact_data({"a": ["x tok-value-from-env"]}) == {"a": [f"x {MASK}"]}


def test_a_secret_set_after_a_redactor_was_made_is_masked_by_the_next_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The environment is looked through once while it stays the same (status makes a
    redactor per item), and again as soon as a variable is added, changed or removed."""
    before = Redactor()
    assert before.text("x rotated-secret-value-1") == "x rotated-secret-value-1"
    monkeypatch.setenv("ROTATED_API_KEY", "rotated-secret-value-1")
    assert Redactor().text("x rotated-secret-value-1") == f"x {MASK}"
    monkeypatch.setenv("ROTATED_API_KEY", "rotated-secret-value-2")
    after = Redactor()
    assert after.text("x rotated-secret-value-1") == "x rotated-secret-value-1"
    assert after.text("x rotated-secret-value-2") == f"x {MASK}"
    monkeypatch.delenv("ROTATED_API_KEY")
    assert Redactor().text("x rotated-secret-value-2") == "x rotated-secret-value-2"


def test_a_redactor_does_not_share_its_secrets_with_the_next_one() -> None:
    """Extra secrets given to one redactor are its own, not added to the cached ones."""
    Redactor(["only-for-the-first-one"])
    assert Redactor().text("x only-for-the-first-one") == "x only-for-the-first-one"


def test_env_secret_of_six_characters_is_masked() -> None:
    """Values of secret-named variables are secrets from 6 characters on (shorter: kept)."""
    redactor = Redactor(secret_values({"DB_PASSWORD": "hunt3r", "PIN_TOKEN": "12345"}))
    assert redactor.text("login with hunt3r and 12345") == f"login with {MASK} and 12345"


# Built by concatenation so the test file itself holds no token-shaped literal.
NEW_SHAPES = {
    "stripe-live": "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "stripe-restricted": "rk_" + "live_" + "51H8yQ2eZvKYlo2C0aBcDeFg",
    "stripe-test": "sk_" + "test_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "gitlab": "glpat" + "-" + "xYz12AbC34dEf56GhI78",
    "npm": "npm" + "_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "huggingface": "hf" + "_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
    "google-oauth": "ya29" + "." + "a0AfH6SMBx-Example_Token_Value123",
    "slack-oauth": "xoxo" + "-" + "1234567890-abcdefghij",
}


@pytest.mark.parametrize("name", sorted(NEW_SHAPES))
def test_common_token_shapes_are_masked(redactor: Redactor, name: str) -> None:
    """Stripe, GitLab, npm, Hugging Face, Google OAuth and Slack tokens are masked."""
    token = NEW_SHAPES[name]
    assert redactor.text(f"export X={token} # set") == f"export X={MASK} # set"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgres://app:s3cr3t-pw@db:5432/app", f"postgres://app:{MASK}@db:5432/app"),
        (
            "clone https://bob:pw@git.example.com/r.git",
            f"clone https://bob:{MASK}@git.example.com/r.git",
        ),
    ],
    ids=["postgres", "https-short-password"],
)
def test_password_in_a_url_is_masked_and_the_user_kept(
    redactor: Redactor, text: str, expected: str
) -> None:
    """scheme://user:password@host: the password part is redacted, whatever its length."""
    assert redactor.text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "see https://example.com:8080/path and write to me@example.com",
        "ssh://git@github.com/org/repo.git",
        "call hf_hub_download and read npm_config_cache in task_test_runner",
        "the glpat prefix and sk_live_ mode are documented",
    ],
)
def test_text_near_the_new_shapes_is_untouched(redactor: Redactor, text: str) -> None:
    assert redactor.text(text) == text


SECRET = "s3cr3t-value-0123456789"


def test_tail_masks_a_secret_that_the_cut_runs_through() -> None:
    """Redacted before it is cut: the end of a secret never survives on its own."""
    redactor = Redactor([SECRET], use_environ=False)
    text = "x" * 100 + SECRET + "y" * 50
    kept = redactor.tail(text, 58)
    assert len(kept) == 58 and kept.endswith("y" * 50)
    assert SECRET[-8:] not in kept


def test_clip_masks_a_secret_that_the_cut_runs_through() -> None:
    redactor = Redactor([SECRET], use_environ=False)
    text = "y" * 50 + SECRET + "x" * 100
    kept = redactor.clip(text, 58)
    assert len(kept) == 58 and kept.startswith("y" * 50)
    assert SECRET[:8] not in kept


def test_tail_of_a_long_text_redacts_only_near_the_end_yet_leaves_no_fragment() -> None:
    """In a long text only the end is redacted; a secret at the edge of that window
    falls in the margin that is dropped, never in what is kept."""
    redactor = Redactor([SECRET], use_environ=False)
    limit = 100
    edge = "z" * 1000 + SECRET + "y" * (limit + CUT_MARGIN - 8)
    assert redactor.tail(edge, limit) == "y" * limit
    inside = "z" * (5 * CUT_MARGIN) + SECRET + "y" * 20
    assert redactor.tail(inside, limit).endswith(MASK + "y" * 20)
    shaped = "z" * (5 * CUT_MARGIN) + GITHUB_TOKEN + "y" * (limit + CUT_MARGIN - 8)
    assert redactor.tail(shaped, limit) == "y" * limit


def test_clip_of_a_long_text_leaves_no_fragment() -> None:
    redactor = Redactor([SECRET], use_environ=False)
    limit = 100
    edge = "y" * (limit + CUT_MARGIN - 8) + SECRET + "z" * 1000
    assert redactor.clip(edge, limit) == "y" * limit
