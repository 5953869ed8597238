"""How to point each real agent CLI at the stub server, offline and isolated.

Each helper returns environment variables (and, for codex, ``-c`` arguments)
that make the CLI talk only to the stub, keep its state in a directory the
test owns, and skip telemetry, update checks and other network side traffic.
``docs/stub-server.md`` explains every setting; the values here are the ones
the end-to-end tests prove.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

#: The pinned CLIs (package.json) and the binaries npm links for them.
CLI_BINARIES = ("claude", "codex", "gemini")

#: Dummy credential handed to the CLIs; the stub accepts anything.
STUB_API_KEY = "sk-stub-not-a-real-key"
#: A folder of CLI binaries that replaces the pinned ones (to run the tests on other versions).
CLI_DIR_ENV = "PHASEGATE_TEST_CLI_DIR"


def find_cli(name: str, start: Path | None = None) -> Path | None:
    """The CLI ``name``: in ``$PHASEGATE_TEST_CLI_DIR`` when that is set, else
    ``node_modules/.bin/<name>`` in ``start`` (default: cwd) or a parent, if installed."""
    override = os.environ.get(CLI_DIR_ENV)
    if override:
        candidate = Path(override) / name
        return candidate if candidate.exists() else None
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / "node_modules" / ".bin" / name
        if candidate.exists():
            return candidate
    return None


def base_env(home: Path) -> dict[str, str]:
    """A minimal environment with ``home`` as HOME and TMPDIR under it.

    Built from scratch rather than copied from ``os.environ`` so a provider
    key, base URL or cloud switch in the caller's environment cannot send a
    test to a real provider. Node's directory stays on PATH (gemini and the
    codex launcher are Node scripts).
    """
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    node = shutil.which("node")
    path = [str(Path(node).parent)] if node else []
    path += ["/usr/local/bin", "/usr/bin", "/bin"]
    return {
        "PATH": os.pathsep.join(dict.fromkeys(path)),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
    }


def claude_env(base_url: str, config_dir: Path) -> dict[str, str]:
    """Claude Code against the stub, with its state in ``config_dir``."""
    config_dir.mkdir(parents=True, exist_ok=True)
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": STUB_API_KEY,
        "CLAUDE_CONFIG_DIR": str(config_dir),
        # Without this Claude Code also resolves api.anthropic.com (flags, metrics).
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        # A scripted error should fail the run at once, not after backoff retries.
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }


def codex_env(codex_home: Path) -> dict[str, str]:
    """Codex's state directory and the key its stub provider reads."""
    codex_home.mkdir(parents=True, exist_ok=True)
    return {"CODEX_HOME": str(codex_home), "STUB_API_KEY": STUB_API_KEY}


def codex_config_args(openai_url: str, retries: int = 0) -> list[str]:
    """``codex`` arguments selecting a ``stub`` provider at ``openai_url`` (ends in /v1).

    ``--disable plugins`` stops the curated-plugin sync that otherwise
    contacts github.com and chatgpt.com at start-up.
    """
    provider = (
        f'{{name="stub", base_url="{openai_url}", wire_api="responses", '
        f'env_key="STUB_API_KEY", request_max_retries={retries}, stream_max_retries={retries}}}'
    )
    return [
        "-c",
        f"model_providers.stub={provider}",
        "-c",
        "model_provider=stub",
        "-c",
        "check_for_update_on_startup=false",
        "-c",
        "analytics.enabled=false",
        "--disable",
        "plugins",
    ]


def gemini_env(
    base_url: str, home: Path, settings: Mapping[str, object] | None = None
) -> dict[str, str]:
    """Gemini CLI against the stub; writes ``home/.gemini/settings.json``.

    The API-key auth type must be selected in settings: with only
    ``GOOGLE_GEMINI_BASE_URL`` set, Gemini CLI 0.61 infers a "gateway" auth
    type that its headless mode then rejects ("Invalid auth method").
    """
    config = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        # maxAttempts 1: a scripted error fails the run instead of minutes of backoff.
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "maxAttempts": 1,
        },
        **(settings or {}),
    }
    gemini_dir = home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    (gemini_dir / "settings.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return {
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "GEMINI_API_KEY": STUB_API_KEY,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
