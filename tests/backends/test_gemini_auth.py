"""Whether headless Gemini CLI can authenticate, decided as Gemini CLI decides it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phasegate.agents.gemini_auth import check_auth

KEY = "gemini-key-0123456789"


def _select(home: Path, kind: str) -> None:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": kind}}}))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def _env(home: Path, **values: str) -> dict[str, str]:
    return {"HOME": str(home), "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(home / "none.json"), **values}


def test_api_key_alone_is_enough_without_a_base_url(home: Path) -> None:
    """GEMINI_API_KEY selects API-key auth when nothing else is configured."""
    assert check_auth(_env(home, GEMINI_API_KEY=KEY)).found == "GEMINI_API_KEY"


def test_api_key_with_a_base_url_needs_the_auth_type_selected(home: Path) -> None:
    """With GOOGLE_GEMINI_BASE_URL Gemini infers a 'gateway' type that headless refuses."""
    env = _env(home, GEMINI_API_KEY=KEY, GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:9")
    auth = check_auth(env)
    assert auth.found is None and "selectedType" in auth.problem
    _select(home, "gemini-api-key")
    assert check_auth(env).found is not None


def test_selected_api_key_without_the_key_is_not_usable(home: Path) -> None:
    """A settings file selecting the API key does not make a missing key appear."""
    _select(home, "gemini-api-key")
    auth = check_auth(_env(home))
    assert auth.found is None and "GEMINI_API_KEY is not set" in auth.problem


def test_google_login_needs_its_credentials_file(home: Path) -> None:
    """oauth-personal selected: usable only once `gemini` has stored the login."""
    _select(home, "oauth-personal")
    assert check_auth(_env(home)).found is None
    (home / ".gemini" / "oauth_creds.json").write_text("{}")
    assert check_auth(_env(home)).found is not None


def test_google_api_key_alone_is_not_gemini_api_auth(home: Path) -> None:
    """GOOGLE_API_KEY serves Vertex AI only; on its own Gemini CLI has no auth type."""
    auth = check_auth(_env(home, GOOGLE_API_KEY=KEY))
    assert auth.found is None and "GOOGLE_GENAI_USE_VERTEXAI" in auth.problem
    vertex = _env(home, GOOGLE_API_KEY=KEY, GOOGLE_GENAI_USE_VERTEXAI="true")
    assert check_auth(vertex).found is not None


def test_workspace_settings_win_over_the_users(home: Path, tmp_path: Path) -> None:
    """The repository's .gemini/settings.json is stronger than the user's."""
    _select(home, "oauth-personal")
    workspace = tmp_path / "repo"
    _select(workspace, "gemini-api-key")
    auth = check_auth(_env(home, GEMINI_API_KEY=KEY), workspace)
    assert auth.found is not None and "API key" in auth.found


def test_unknown_selected_type_is_not_usable(home: Path) -> None:
    """An auth type headless mode rejects ("Invalid auth method selected")."""
    _select(home, "gateway")
    assert check_auth(_env(home, GEMINI_API_KEY=KEY)).found is None
