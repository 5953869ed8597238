"""The CLI probes: versions cached on disk per binary, and the flags ``--help`` must list.

These use the stand-in CLI of ``backend_helpers`` (a real child process), so
they need no Node.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from backend_helpers import cli_path, fake_cli, fake_settings, help_listing

from phasegate.agents.claude import ClaudeBackend
from phasegate.agents.cli_probe import CACHE_FILE, CliProbe, FlagCheck, lists_flag
from phasegate.agents.cli_support import CliBackend
from phasegate.agents.codex import CodexBackend
from phasegate.agents.gemini import GeminiBackend
from phasegate.errors import BackendUnavailable

CLAUDE_STYLE = """\
Options:
  --add-dir <directories...>            More directories Claude can access
  --allowedTools, --allowed-tools <tools...>
      Comma or space-separated list of tool names to allow
  --bare                                Minimal mode. Explicitly provide context via:
                                        --system-prompt[-file], --mcp-config.
  --permission-mode <mode>              Permission mode to use for the session
                                        (choices: "acceptEdits",
                                        "bypassPermissions", "dontAsk", "plan")
  -p, --print                           Print response and exit
  --tools <tools...>                    Built-in tools to make available
"""

# Codex keeps the indentation on the blank line inside an entry.
CODEX_STYLE = (
    "Options:\n"
    "  -s, --sandbox <SANDBOX_MODE>\n"
    "          Select the sandbox policy to use when executing model-generated shell commands\n"
    "          \n"
    "          [possible values: read-only, workspace-write, danger-full-access]\n"
    "\n"
    "  -C, --cd <DIR>\n"
    "          Tell the agent to use the specified directory as its working root\n"
)


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A probe cache of this test's own."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    return folder


def _probes(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _version_in_new_process(settings: dict[str, object]) -> str:
    """The version a backend built in a fresh phasegate process sees (as each command does)."""
    code = (
        "import json, sys\n"
        "from phasegate.agents.claude import ClaudeBackend\n"
        "print(ClaudeBackend(json.loads(sys.argv[1])).version)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(settings)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def test_version_probe_is_cached_on_disk(tmp_path: Path, cache_home: Path) -> None:
    """Each phasegate command is a new process: the second one reads the version from disk."""
    log = tmp_path / "probes.log"
    binary = fake_cli(tmp_path / "bin")
    settings = fake_settings(binary, "echo", env={"FAKE_PROBE_LOG": str(log)})
    assert _version_in_new_process(settings) == "9.9.9"
    assert _version_in_new_process(settings) == "9.9.9"
    assert _probes(log) == ["--version"]
    assert (cache_home / "phasegate" / CACHE_FILE).is_file()


def test_changed_binary_is_probed_again(tmp_path: Path, cache_home: Path) -> None:
    """A binary replaced in place (an update) is probed again and its new version seen."""
    log = tmp_path / "probes.log"
    binary = fake_cli(tmp_path / "bin")
    settings = fake_settings(binary, "echo", env={"FAKE_PROBE_LOG": str(log)})
    assert _version_in_new_process(settings) == "9.9.9"
    text = binary.read_text().replace("fake-cli 9.9.9", "fake-cli 9.10.0")
    replacement = binary.with_name("new-build")
    replacement.write_text(text)
    replacement.chmod(0o755)
    os.replace(replacement, binary)
    assert _version_in_new_process(settings) == "9.10.0"
    assert _probes(log) == ["--version", "--version"]


def test_binary_rewritten_in_place_is_probed_again(tmp_path: Path, cache_home: Path) -> None:
    """The same file (same path and inode) given new content: its size and modification
    time are part of the key, so the new version is seen."""
    log = tmp_path / "probes.log"
    binary = fake_cli(tmp_path / "bin")
    settings = fake_settings(binary, "echo", env={"FAKE_PROBE_LOG": str(log)})
    assert _version_in_new_process(settings) == "9.9.9"
    inode = binary.stat().st_ino
    with binary.open("r+", encoding="utf-8") as stream:
        text = stream.read().replace("fake-cli 9.9.9", "fake-cli 9.10.0")
        stream.seek(0)
        stream.write(text)
        stream.truncate()
    assert binary.stat().st_ino == inode
    assert _version_in_new_process(settings) == "9.10.0"
    assert _probes(log) == ["--version", "--version"]


@pytest.mark.parametrize("content", ["{ not json", "", '{"format": 1, "binaries": []}', "[]"])
def test_an_unreadable_probe_cache_is_ignored_and_rewritten(
    tmp_path: Path, cache_home: Path, content: str
) -> None:
    """A damaged cache file is not trusted: the CLI is probed and the cache written anew."""
    log = tmp_path / "probes.log"
    settings = fake_settings(fake_cli(tmp_path / "bin"), "echo", env={"FAKE_PROBE_LOG": str(log)})
    cache = cache_home / "phasegate" / CACHE_FILE
    cache.parent.mkdir(parents=True)
    cache.write_text(content, encoding="utf-8")
    assert _version_in_new_process(settings) == "9.9.9"
    assert _version_in_new_process(settings) == "9.9.9"
    assert _probes(log) == ["--version"]
    assert json.loads(cache.read_text(encoding="utf-8"))["format"] == 1


def test_a_failed_probe_is_not_remembered(tmp_path: Path, cache_home: Path) -> None:
    """A ``--version`` that printed nothing (say, it timed out under load) is tried again."""
    binary = fake_cli(tmp_path / "bin")
    with pytest.raises(
        BackendUnavailable, match="printed 'no version here', which is not a version"
    ):
        ClaudeBackend(fake_settings(binary, "echo", env={"FAKE_VERSION": "no version here"}))
    assert ClaudeBackend(fake_settings(binary, "echo")).version == "9.9.9"


def test_unusable_cache_folder_does_not_stop_the_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache that cannot be written is ignored: the probe simply runs every time."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    log = tmp_path / "probes.log"
    settings = fake_settings(fake_cli(tmp_path / "bin"), "echo", env={"FAKE_PROBE_LOG": str(log)})
    assert ClaudeBackend(settings).version == ClaudeBackend(settings).version == "9.9.9"
    assert _probes(log) == ["--version", "--version"]


@pytest.mark.parametrize("version", ["2.0.0", "2.0.44", "2.1.63"])
def test_claude_before_2_1_64_is_refused(tmp_path: Path, version: str) -> None:
    """2.0.44 and older lack --json-schema (2.0.0 also --tools and dontAsk); up to 2.1.63
    acceptEdits lets a writer out of the tree through a symlink (run and seen)."""
    binary = fake_cli(tmp_path / "bin", f"claude-{version}")
    settings = fake_settings(binary, "echo", env={"FAKE_VERSION": f"{version} (Claude Code)"})
    with pytest.raises(
        BackendUnavailable, match=rf"{re.escape(version)} .* is older than 2\.1\.64"
    ):
        ClaudeBackend(settings)


def test_codex_without_exec_add_dir_is_refused(tmp_path: Path) -> None:
    """Codex 0.58 has no ``exec --add-dir`` (0.59 added it), so it is refused."""
    binary = fake_cli(tmp_path / "bin", "codex-0.58")
    settings = fake_settings(binary, "echo", env={"FAKE_VERSION": "codex-cli 0.58.0"})
    with pytest.raises(BackendUnavailable, match=r"0\.58\.0 .* is older than"):
        CodexBackend(settings)


def test_a_cli_lacking_a_flag_phasegate_passes_is_not_usable(tmp_path: Path) -> None:
    """Doctor checks the flags themselves (from ``--help``), not only the version number."""
    help_text = help_listing(ClaudeBackend, without=("--json-schema",))
    binary = fake_cli(tmp_path / "bin", "claude", help_text=help_text)
    found = ClaudeBackend(fake_settings(binary, "echo")).availability()
    assert not found.usable
    assert "lacks flags phasegate passes (--json-schema)" in found.detail


def test_a_cli_listing_every_flag_is_usable(tmp_path: Path) -> None:
    """With every flag listed and a key present, the backend is usable."""
    found = ClaudeBackend(fake_settings(fake_cli(tmp_path / "bin"), "echo")).availability()
    assert found.usable, found.detail


@pytest.mark.parametrize(
    ("check", "listed"),
    [
        (FlagCheck("--tools"), True),
        (FlagCheck("--allowedTools"), True),
        (FlagCheck("--print"), True),
        (FlagCheck("--permission-mode", "dontAsk"), True),
        (FlagCheck("--permission-mode", "manual"), False),
        (FlagCheck("--json-schema"), False),
        # Mentioned only in another option's description: not an option of this CLI.
        (FlagCheck("--mcp-config"), False),
    ],
)
def test_flags_are_read_from_commander_style_help(check: FlagCheck, listed: bool) -> None:
    """Claude Code's help: option lines, wrapped descriptions, choices on later lines."""
    assert lists_flag(CLAUDE_STYLE, check) is listed


@pytest.mark.parametrize(
    ("check", "listed"),
    [
        (FlagCheck("--sandbox", "workspace-write"), True),
        (FlagCheck("--sandbox", "read-only"), True),
        (FlagCheck("--sandbox", "bogus"), False),
        (FlagCheck("--cd"), True),
        (FlagCheck("--add-dir"), False),
    ],
)
def test_flags_are_read_from_clap_style_help(check: FlagCheck, listed: bool) -> None:
    """Codex's help: the possible values follow a blank line inside the option's entry."""
    assert lists_flag(CODEX_STYLE, check) is listed


@pytest.mark.cli_e2e
@pytest.mark.parametrize("backend", [ClaudeBackend, CodexBackend, GeminiBackend])
def test_the_pinned_clis_list_every_flag_phasegate_passes(
    backend: type[CliBackend], cache_home: Path
) -> None:
    """The flags doctor checks are the ones the real CLIs document (no false alarm)."""
    binary = cli_path(backend.name)
    if binary is None:
        pytest.skip(f"node_modules/.bin/{backend.name} is not installed")
    probe = CliProbe(binary, {"PATH": os.environ["PATH"], "HOME": str(cache_home)})
    assert probe.missing_flags(backend.required_flags) == []
    assert probe.version() is not None
