"""Whether Gemini CLI will authenticate headless, decided the way Gemini CLI (0.61) decides.

Headless Gemini takes the auth type selected in its settings
(``security.auth.selectedType``; system, then workspace, then user settings),
else one derived from the environment, in this order:
``GOOGLE_GENAI_USE_GCA=true`` (Google login), ``GOOGLE_GENAI_USE_VERTEXAI=true``
(Vertex AI), ``GOOGLE_GEMINI_BASE_URL`` (a "gateway" type that headless mode
refuses), ``GEMINI_API_KEY`` (API key), ``GEMINI_CLI_USE_COMPUTE_ADC=true``.
Anything else exits with status 41 before the first request. So an API key
alone is not enough once a base URL is set: the key must be selected in a
settings file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from phasegate.agents.gemini_mcp import GEMINI_DIR, SETTINGS_FILE, read_settings

API_KEY = "gemini-api-key"
VERTEX = "vertex-ai"
GOOGLE_LOGIN = "oauth-personal"
COMPUTE_ADC = "compute-default-credentials"


def select_hint(env: Mapping[str, str]) -> str:
    """How to select the API key, naming the user settings file Gemini will read."""
    if env.get("GEMINI_CLI_HOME"):  # a backend's config_dir
        where = str(gemini_home(env) / GEMINI_DIR / SETTINGS_FILE)
    else:
        where = f"~/{GEMINI_DIR}/{SETTINGS_FILE}"
    return (
        f'select it in {where} ("security": {{"auth": {{"selectedType": '
        '"gemini-api-key"}}) or in gemini\'s /auth dialog'
    )


@dataclass(frozen=True)
class GeminiAuth:
    """``found`` says where credentials come from; else ``problem`` says what is missing."""

    found: str | None
    problem: str = ""


def gemini_home(env: Mapping[str, str]) -> Path:
    """The folder holding Gemini's ``.gemini`` (``GEMINI_CLI_HOME``, else HOME)."""
    return Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or os.path.expanduser("~"))


def settings_files(env: Mapping[str, str], workdir: Path | None) -> list[Path]:
    """Gemini's settings files, strongest first: system, workspace, user."""
    system = env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
    if system:
        files = [Path(system)]
    elif sys.platform == "darwin":
        files = [Path("/Library/Application Support/GeminiCli") / SETTINGS_FILE]
    else:
        files = [Path("/etc/gemini-cli") / SETTINGS_FILE]
    if workdir is not None:
        files.append(workdir / GEMINI_DIR / SETTINGS_FILE)
    files.append(gemini_home(env) / GEMINI_DIR / SETTINGS_FILE)
    return files


def selected_auth(env: Mapping[str, str], workdir: Path | None) -> tuple[str, Path] | None:
    """The auth type a settings file selects, and that file."""
    for path in settings_files(env, workdir):
        settings = read_settings(path)
        security = settings.get("security")
        auth = security.get("auth") if isinstance(security, Mapping) else None
        selected = auth.get("selectedType") if isinstance(auth, Mapping) else None
        selected = selected or settings.get("selectedAuthType")  # before settings v2
        if isinstance(selected, str) and selected:
            return selected, path
    return None


def _true(env: Mapping[str, str], name: str) -> bool:
    return env.get(name) == "true"


def check_auth(env: Mapping[str, str], workdir: Path | None = None) -> GeminiAuth:
    """Whether headless Gemini CLI started with ``env`` in ``workdir`` can authenticate."""
    selected = selected_auth(env, workdir)
    if selected is not None:
        kind, path = selected
        return _check_type(kind, env, f"selected in {path}")
    if _true(env, "GOOGLE_GENAI_USE_GCA"):
        return _check_type(GOOGLE_LOGIN, env, "GOOGLE_GENAI_USE_GCA")
    if _true(env, "GOOGLE_GENAI_USE_VERTEXAI"):
        return _check_type(VERTEX, env, "GOOGLE_GENAI_USE_VERTEXAI")
    if env.get("GOOGLE_GEMINI_BASE_URL"):
        return GeminiAuth(
            None,
            "with a base URL (GOOGLE_GEMINI_BASE_URL) headless Gemini CLI needs its auth type "
            f"selected in a settings file: set GEMINI_API_KEY and {select_hint(env)}",
        )
    if env.get("GEMINI_API_KEY"):
        return GeminiAuth("GEMINI_API_KEY")
    if _true(env, "GEMINI_CLI_USE_COMPUTE_ADC"):
        return GeminiAuth("Compute Engine credentials (GEMINI_CLI_USE_COMPUTE_ADC)")
    if env.get("GOOGLE_API_KEY"):
        return GeminiAuth(
            None,
            "GOOGLE_API_KEY is used only for Vertex AI (set GOOGLE_GENAI_USE_VERTEXAI=true); "
            f"for the Gemini API set GEMINI_API_KEY, or {select_hint(env)}",
        )
    return GeminiAuth(
        None, "set GEMINI_API_KEY, or run 'gemini' once and sign in (no auth type is selected)"
    )


def _check_type(kind: str, env: Mapping[str, str], source: str) -> GeminiAuth:
    if kind == API_KEY:
        if env.get("GEMINI_API_KEY"):
            return GeminiAuth(f"GEMINI_API_KEY (API key {source})")
        return GeminiAuth(None, f"the API key is {source} but GEMINI_API_KEY is not set")
    if kind == VERTEX:
        if env.get("GOOGLE_CLOUD_PROJECT") and env.get("GOOGLE_CLOUD_LOCATION"):
            return GeminiAuth(f"Vertex AI ({source}) in project {env['GOOGLE_CLOUD_PROJECT']}")
        if env.get("GOOGLE_API_KEY"):
            return GeminiAuth(f"Vertex AI ({source}) with GOOGLE_API_KEY")
        return GeminiAuth(
            None,
            f"Vertex AI is {source} but neither GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION "
            "nor GOOGLE_API_KEY is set",
        )
    if kind == GOOGLE_LOGIN:
        creds = gemini_home(env) / GEMINI_DIR / "oauth_creds.json"
        if creds.is_file():
            return GeminiAuth(f"logged in ({creds})")
        return GeminiAuth(None, f"Google login is {source} but {creds} is missing: run 'gemini'")
    if kind == COMPUTE_ADC:
        return GeminiAuth(f"Compute Engine credentials ({source})")
    return GeminiAuth(
        None,
        f"auth type {kind!r} ({source}) does not work headless: set GEMINI_API_KEY and "
        f"{select_hint(env)}",
    )
