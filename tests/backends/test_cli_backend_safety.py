"""Running agent CLIs safely: clean environment, broken pipes, bounded output, odd bytes.

These use a small stand-in CLI (a real child process speaking Claude Code's
output format) set through the ``binary`` setting, so they need no Node.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from backend_helpers import STUB_KEY, fake_cli, fake_settings, make_request

from phasegate.agents.base import Access
from phasegate.agents.claude import ClaudeBackend
from phasegate.agents.codex import CodexBackend
from phasegate.config import Config
from phasegate.engine.calls import Backends
from phasegate.errors import BackendUnavailable, ConfigError

BIG_PROMPT = "x" * (1024 * 1024)  # far beyond a pipe buffer: the writer must notice the exit


def _report(tmp_path: Path, work: Path, **settings: object) -> dict[str, object]:
    backend = ClaudeBackend(fake_settings(fake_cli(tmp_path / "bin"), "echo", **settings))
    result = backend.run(make_request(work, "hello there"))
    assert result.ok, result.error
    report: dict[str, object] = json.loads(result.text)
    return report


def test_environment_carries_only_this_providers_credentials(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """claude gets ANTHROPIC_API_KEY but not another provider's key or unrelated secrets."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_unrelated_secret_value_000")
    report = _report(tmp_path, work)
    env = report["env"]
    assert isinstance(env, list)
    assert "ANTHROPIC_API_KEY" in env and "PATH" in env
    assert "OPENAI_API_KEY" not in env and "GITHUB_TOKEN" not in env


def test_agent_sessions_are_marked_as_phasegate_agents(tmp_path: Path, work: Path) -> None:
    """PHASEGATE_AGENT is set, so the SessionStart hook stays silent inside our own agents."""
    env = _report(tmp_path, work)["env"]
    assert isinstance(env, list)
    assert "PHASEGATE_AGENT" in env


def test_pass_env_and_env_settings_extend_the_environment(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pass_env`` lets named variables through; ``env`` sets fixed values."""
    monkeypatch.setenv("CORP_PROXY_CA", "/etc/ca.pem")
    report = _report(tmp_path, work, pass_env=["CORP_PROXY_CA"], env={"EXTRA_FLAG": "1"})
    env = report["env"]
    assert isinstance(env, list)
    assert "CORP_PROXY_CA" in env and "EXTRA_FLAG" in env


def test_prompt_goes_to_stdin_and_cwd_is_the_workdir(tmp_path: Path, work: Path) -> None:
    """The CLI reads the rendered prompt on stdin and starts in the request's workdir."""
    report = _report(tmp_path, work)
    assert report["prompt"] == "## Task\n\nhello there\n"
    assert report["cwd"] == str(work)


def test_read_only_role_runs_in_plan_mode_with_read_tools(tmp_path: Path, work: Path) -> None:
    """Least privilege: plan mode and only Read, Glob, Grep offered; no write pre-approval."""
    argv = _report(tmp_path, work)["argv"]
    assert isinstance(argv, list)
    assert argv[argv.index("--permission-mode") + 1] == "plan"
    assert argv[argv.index("--tools") + 1] == "Read,Glob,Grep"
    assert "--allowedTools" not in argv


def test_bypassing_permissions_needs_the_opt_in(tmp_path: Path, work: Path) -> None:
    """Writers get acceptEdits unless ``bypass_permissions: true``; reviewers never bypass."""
    binary = fake_cli(tmp_path / "bin")

    def mode(access: Access, **settings: object) -> str:
        backend = ClaudeBackend(fake_settings(binary, "echo", **settings))
        argv = json.loads(backend.run(make_request(work, access=access)).text)["argv"]
        return str(argv[argv.index("--permission-mode") + 1])

    assert mode(Access.WRITE) == "acceptEdits"
    assert mode(Access.WRITE, bypass_permissions=True) == "bypassPermissions"
    assert mode(Access.READ_ONLY, bypass_permissions=True) == "plan"


def test_child_exiting_before_reading_the_prompt_is_a_clear_failure(
    tmp_path: Path, work: Path
) -> None:
    """BrokenPipe: a failed result naming the exit status and the child's stderr, not a crash."""
    backend = ClaudeBackend(fake_settings(fake_cli(tmp_path / "bin"), "exit-early"))
    result = backend.run(make_request(work, BIG_PROMPT, access=Access.WRITE))
    assert not result.ok and result.exit_status == 3
    assert result.error is not None
    assert "exited with status 3 before reading the whole prompt" in result.error
    assert "could not start the agent" in result.error


def test_runaway_output_is_bounded(tmp_path: Path, work: Path) -> None:
    """40 MB on stdout is cut to the configured bound and reported, in bounded time."""
    settings = fake_settings(fake_cli(tmp_path / "bin"), "flood", max_output_bytes=1024 * 1024)
    started = time.monotonic()
    result = ClaudeBackend(settings).run(make_request(work))
    assert time.monotonic() - started < 30
    assert not result.ok
    assert result.error is not None and "truncated" in result.error
    assert len(result.stderr) <= 2000


def test_non_utf8_output_does_not_crash_the_reader(tmp_path: Path, work: Path) -> None:
    """Invalid bytes become replacement characters; the result is still read."""
    backend = ClaudeBackend(fake_settings(fake_cli(tmp_path / "bin"), "bad-bytes"))
    result = backend.run(make_request(work))
    assert result.ok, result.error
    assert result.text == "caf\ufffd \ufffd done"


def test_secret_in_cli_output_is_redacted(tmp_path: Path, work: Path) -> None:
    """The provider key in the environment is masked even when the CLI prints it back."""
    result = ClaudeBackend(fake_settings(fake_cli(tmp_path / "bin"), "echo")).run(
        make_request(work, f"the key is {STUB_KEY}")
    )
    assert STUB_KEY not in result.text and "[REDACTED]" in result.text


def test_a_secret_the_stderr_cut_runs_through_leaves_no_fragment(
    tmp_path: Path, work: Path
) -> None:
    """stderr is redacted before it is cut to its last 2,000 characters: the tail of the
    provider key it printed is not kept on its own."""
    stderr = f"fatal: bad key {STUB_KEY}" + "y" * (2000 - 8)
    settings = fake_settings(fake_cli(tmp_path / "bin"), "stderr", env={"FAKE_STDERR": stderr})
    result = ClaudeBackend(settings).run(make_request(work))
    assert not result.ok
    assert result.stderr.endswith("y" * 1000) and len(result.stderr) <= 2000
    assert STUB_KEY[-8:] not in result.stderr


def test_unknown_setting_is_a_config_error(tmp_path: Path) -> None:
    """A typo in the settings is one line naming the key and where to fix it."""
    with pytest.raises(ConfigError, match=r"backend 'claude': binray: unknown setting"):
        ClaudeBackend({"binray": "/usr/bin/claude"})


def test_missing_binary_is_unavailable(tmp_path: Path) -> None:
    """A configured binary that does not exist: BackendUnavailable naming the path."""
    with pytest.raises(BackendUnavailable, match="missing or not executable"):
        CodexBackend({"binary": str(tmp_path / "nope" / "codex")})


def test_too_old_version_is_unavailable(tmp_path: Path) -> None:
    """A CLI older than the minimum is refused before any call, naming both versions."""
    settings = fake_settings(
        fake_cli(tmp_path / "bin", "old-claude"), "echo", env={"FAKE_VERSION": "1.0.3"}
    )
    with pytest.raises(BackendUnavailable, match=r"version 1\.0\.3 .* is older than 2\.1\.64"):
        ClaudeBackend(settings)


def test_a_roles_tools_setting_reaches_claude(tmp_path: Path, work: Path) -> None:
    """``roles.executor.tools`` in .phasegate/config.yaml is the writer's ``--tools``;
    other roles keep the backend's default."""
    binary = fake_cli(tmp_path / "bin")
    config = Config.model_validate(
        {
            "roles": {
                "default": {"backend": "claude"},
                "executor": {"backend": "claude", "tools": ["Read", "Edit"]},
            },
            "backends": {"claude": {"binary": str(binary), "env": {"FAKE_MODE": "echo"}}},
        }
    )
    backends = Backends(config, tmp_path)

    def tools(role: str) -> str:
        result = backends.for_role(role).run(make_request(work, access=Access.WRITE))
        argv = json.loads(result.text)["argv"]
        return str(argv[argv.index("--tools") + 1])

    assert tools("executor") == "Read,Edit"  # exactly what config says
    assert tools("implementer") == "Read,Glob,Grep,Edit,Write"
