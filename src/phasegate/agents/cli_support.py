"""What the Claude Code, Codex and Gemini CLI backends share.

* settings: one validated model (:class:`CliSettings`), unknown keys rejected
  so a typo in ``.phasegate/config.yaml`` is reported instead of ignored;
* finding the binary: the ``binary`` setting, else ``PATH``, else a
  ``node_modules/.bin`` in the repository or in phasegate's own checkout;
* the version check (cached on disk per binary, :mod:`phasegate.agents.cli_probe`)
  and, for ``phasegate doctor``, the check that ``--help`` lists every flag
  phasegate passes;
* the child's environment, built from scratch: only what a CLI needs to run
  plus its own provider's credentials, never every variable phasegate has;
* running the CLI through :func:`phasegate.process.run_process` and turning
  timeouts, broken pipes and crashes into failed results, redacted: the CLI's
  output is redacted as soon as the process ends, before it is parsed or cut
  to a length, so no cut can leave a piece of a secret that no longer matches.

Each backend subclasses :class:`CliBackend` and supplies the argument list,
the output parser and where its credentials live.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from phasegate.agents.base import (
    TIMEOUT_EXIT,
    AgentRequest,
    AgentResult,
    Availability,
    Backend,
    TokenUsage,
)
from phasegate.agents.cli_probe import CliProbe, FlagCheck, version_tuple
from phasegate.errors import BackendUnavailable, ConfigError
from phasegate.process import DEFAULT_OUTPUT_LIMIT, ProcessResult, run_process
from phasegate.redact import Redactor, secret_values

#: How much of a CLI's stderr a result keeps.
STDERR_TAIL = 2000

#: Variables every CLI may need to run at all (locale, proxies, CA bundles, XDG dirs).
BASE_ENV_NAMES = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "SYSTEMROOT",
    "APPDATA",
    "LOCALAPPDATA",
    "USERPROFILE",
)
BASE_ENV_PREFIXES = ("LC_",)

#: Failures to create a ``config_dir`` that are the disk's, not the setting's.
_DISK_TROUBLE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO})


class Pricing(BaseModel):
    """USD per million tokens, for backends whose CLI or server reports no cost."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(default=0.0, ge=0)
    output: float = Field(default=0.0, ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)

    def cost(self, usage: TokenUsage) -> float:
        """The cost of ``usage`` (cache tokens at the input price unless priced)."""
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * cache_read
            + usage.cache_write_tokens * cache_write
        )
        return round(total / 1_000_000, 6)


class CliSettings(BaseModel):
    """Settings every CLI backend understands (``backends.<name>`` merged with the role's)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_dir: str | None = None
    binary: str | None = None
    model: str | None = None
    extra_args: list[str] = []
    env: dict[str, str] = {}
    pass_env: list[str] = []
    config_dir: str | None = None
    base_url: str | None = None
    bypass_permissions: bool = False
    min_version: str | None = None
    max_output_bytes: int = Field(default=DEFAULT_OUTPUT_LIMIT, ge=64 * 1024)
    pricing: Pricing | None = None

    @field_validator("binary")
    @classmethod
    def _some_binary(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("empty: give the CLI's path or name, or remove the setting")
        return value

    @field_validator("pass_env")
    @classmethod
    def _variable_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not _VARIABLE.fullmatch(name):
                raise ValueError(f"{name!r} is not the name of an environment variable")
        return names


_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_settings(name: str, model: type[BaseModel], settings: Mapping[str, Any]) -> BaseModel:
    """Validate ``settings`` against ``model``; one ConfigError line naming the key."""
    try:
        return model.model_validate(dict(settings))
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(p) for p in error["loc"]) or "(settings)"
        message = "unknown setting" if error["type"] == "extra_forbidden" else error["msg"]
        message = message.removeprefix("Value error, ")
        raise ConfigError(
            f"backend {name!r}: {key}: {message} "
            f"(check backends.{name} and the roles using it in .phasegate/config.yaml)"
        ) from None


def resolve_path(value: str, base_dir: str | None) -> Path:
    """``value`` with ``~`` expanded; relative paths are relative to the repository."""
    path = Path(value).expanduser()
    if not path.is_absolute() and base_dir:
        path = Path(base_dir) / path
    return path


def locate_binary(name: str, settings: CliSettings, package: str) -> Path:
    """Where the CLI ``name`` is: ``binary`` setting, PATH, then a ``node_modules/.bin``."""
    if settings.binary:
        configured = settings.binary
        if os.sep not in configured and "/" not in configured:
            found = shutil.which(configured)
            if found:
                return Path(found)
            raise BackendUnavailable(
                f"{name}: binary {configured!r} (backends.{name}.binary) is not on PATH"
            )
        path = resolve_path(configured, settings.base_dir)
        if not path.is_file() or not os.access(path, os.X_OK):
            raise BackendUnavailable(
                f"{name}: binary {path} (backends.{name}.binary) is missing or not executable"
            )
        return path
    found = shutil.which(name)
    if found:
        return Path(found)
    # Development fallbacks: the repository's own pinned CLIs, then phasegate's checkout.
    roots = [Path(settings.base_dir)] if settings.base_dir else []
    roots.append(Path(__file__).resolve().parents[3])
    for root in roots:
        candidate = root / "node_modules" / ".bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise BackendUnavailable(
        f"{name}: the {name} CLI is not installed (npm install -g {package}, "
        f"or set backends.{name}.binary in .phasegate/config.yaml)"
    )


def tail(text: str, limit: int = STDERR_TAIL) -> str:
    """The last ``limit`` characters of ``text`` (already redacted, see :meth:`CliBackend.run`)."""
    return text[-limit:] if len(text) > limit else text


def last_line(text: str, limit: int = 400) -> str:
    """The last non-empty line of ``text`` (for one-line error messages)."""
    for line in reversed(text.strip().splitlines()):
        if line.strip():
            return line.strip()[:limit]
    return ""


_ERROR_LINE = re.compile(r"(?:error|fatal|unknown (?:argument|option))", re.IGNORECASE)


def error_line(text: str, limit: int = 400) -> str:
    """The last line of ``text`` starting like an error, else its last line.

    A CLI refusing its arguments may print the error first and usage lines after
    it (codex: ``error: unexpected argument ...`` ... ``For more information, try
    '--help'.``; gemini: ``Unknown arguments: ...`` then its whole help).
    """
    for line in reversed(text.strip().splitlines()):
        if _ERROR_LINE.match(line.strip()):
            return line.strip()[:limit]
    return last_line(text, limit)


class CliBackend(Backend):
    """A backend that runs an agent CLI as a child process, one call per process.

    Subclasses set ``name``, ``package`` (how to install it), ``min_version``,
    the credential variables they pass through, and implement
    :meth:`arguments`, :meth:`parse` and :meth:`credentials`.
    """

    package: ClassVar[str]
    min_version: ClassVar[str]
    settings_model: ClassVar[type[CliSettings]] = CliSettings
    #: Variables (and prefixes) with this CLI's provider credentials and switches.
    env_names: ClassVar[tuple[str, ...]] = ()
    env_prefixes: ClassVar[tuple[str, ...]] = ()
    #: Every flag phasegate may pass; ``phasegate doctor`` checks ``--help`` lists them.
    required_flags: ClassVar[tuple[FlagCheck, ...]] = ()

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(settings)
        parsed = parse_settings(self.name, self.settings_model, self.settings)
        assert isinstance(parsed, CliSettings)
        self.cfg = parsed
        self.binary = locate_binary(self.name, parsed, self.package)
        # Checked once here, so a CLI that is too old is refused before any call starts.
        self.version = self._check_version(self.child_env())

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        parse_settings(cls.name, cls.settings_model, settings)

    # -- to implement -------------------------------------------------------------------

    @abstractmethod
    def arguments(self, request: AgentRequest, scratch: Path) -> list[str]:
        """The CLI's arguments (without the binary) for ``request``; ``scratch`` is a temp dir."""

    @abstractmethod
    def parse(self, request: AgentRequest, proc: ProcessResult) -> AgentResult:
        """Turn the finished process into a result (error set when the agent failed).

        ``proc``'s output is already redacted, so cutting it is safe.
        """

    @abstractmethod
    def credentials(self, env: Mapping[str, str]) -> str | None:
        """Where this CLI will find credentials (for doctor), or ``None`` if nowhere."""

    def forced_env(self, request: AgentRequest | None) -> dict[str, str]:
        """Variables this backend always sets (config dir, base URL...)."""
        return {}

    def scratch_env(
        self, request: AgentRequest, scratch: Path, env: Mapping[str, str]
    ) -> dict[str, str]:
        """Variables for this call only, pointing into ``scratch`` (a private temp dir).

        ``env`` is the child's environment so far. Called after :meth:`arguments`;
        whatever the backend writes into ``scratch`` lives until the CLI exits.
        """
        return {}

    def output_watch(self, request: AgentRequest) -> CliWatch | None:
        """A watch over this call's stdout that may stop a CLI stuck retrying (default none)."""
        return None

    # -- shared -------------------------------------------------------------------------

    def child_env(self, request: AgentRequest | None = None) -> dict[str, str]:
        """The CLI's environment: built from scratch, never a copy of phasegate's."""
        names = set(BASE_ENV_NAMES) | set(self.env_names) | set(self.cfg.pass_env)
        prefixes = BASE_ENV_PREFIXES + self.env_prefixes
        env = {
            key: value
            for key, value in os.environ.items()
            if key in names or key.startswith(prefixes)
        }
        env.setdefault("PATH", os.defpath)
        env.update(self.cfg.env)
        env.update(self.forced_env(request))
        if request is not None:
            env.update(request.env)
        env["NO_COLOR"] = "1"
        # Marks the session as one of phasegate's own agents: its SessionStart
        # hook then stays silent (an agent must not drive the workflow it is a
        # step of); the state guard still applies to it.
        env["PHASEGATE_AGENT"] = "1"
        return env

    def config_dir(self) -> Path | None:
        """The isolated configuration directory, when one is configured."""
        if not self.cfg.config_dir:
            return None
        path = resolve_path(self.cfg.config_dir, self.cfg.base_dir)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if exc.errno in _DISK_TROUBLE:
                raise  # the disk's problem, reported as such (exit 8), not the setting's
            # A file, a path under one, or a place nobody may create folders in (/proc):
            # the setting is wrong, not phasegate (checked as the backend is made, so a
            # run stops before any call starts).
            reason = exc.strerror or exc.__class__.__name__
            if isinstance(exc, FileExistsError):
                reason = "a file is there, not a folder"
            raise ConfigError(
                f"{self.name}: config_dir {path} (backends.{self.name}.config_dir) cannot be "
                f"used as a folder: {reason}; set it to a folder in .phasegate/config.yaml"
            ) from None
        return path

    def _check_version(self, env: Mapping[str, str]) -> str:
        probe = CliProbe(self.binary, env)
        version = probe.version()
        if version is None:
            printed = " ".join(probe.unreadable_version.split())
            if not printed:
                what = "printed no version"
            else:
                cut = printed if len(printed) <= 80 else printed[:77] + "..."
                what = f"printed {cut!r}, which is not a version"
            raise BackendUnavailable(f"{self.name}: '{self.binary} --version' {what}")
        minimum = self.cfg.min_version or self.min_version
        have, need = version_tuple(version), version_tuple(minimum)
        if have is not None and need is not None and have < need:
            raise BackendUnavailable(
                f"{self.name}: version {version} at {self.binary} is older than {minimum}; "
                f"update it (npm install -g {self.package})"
            )
        return version

    def availability(self) -> Availability:
        env = self.child_env()
        where = f"{self.name} {self.version} at {self.binary}"
        missing = CliProbe(self.binary, env).missing_flags(self.required_flags)
        if missing:
            flags = ", ".join(check.describe() for check in missing)
            return Availability(
                False,
                f"{where} lacks flags phasegate passes ({flags}); "
                f"update it (npm install -g {self.package})",
            )
        found = self.credentials(env)
        if found is None:
            return Availability(
                False, f"{where}, but no credentials: {self.missing_credentials(env)}"
            )
        return Availability(True, f"{where}; credentials: {found}")

    def missing_credentials(self, env: Mapping[str, str]) -> str:
        """Why :meth:`credentials` found none, and what to do (default: the login hint)."""
        return self.login_hint()

    def login_hint(self) -> str:
        """How a user provides credentials (shown by doctor)."""
        return f"log in with '{self.name}' once, or set its API key variable"

    def run(self, request: AgentRequest) -> AgentResult:
        started = time.monotonic()
        env = self.child_env(request)
        redactor = Redactor(secret_values(env))
        watch = self.output_watch(request)
        with tempfile.TemporaryDirectory(prefix=f"phasegate-{self.name}-") as scratch:
            argv = [str(self.binary), *self.arguments(request, Path(scratch))]
            call_env = {**env, **self.scratch_env(request, Path(scratch), env)}
            proc = run_process(
                argv,
                cwd=request.workdir,
                timeout=request.timeout,
                env=call_env,
                input_text=request.prompt_text(),
                output_limit=self.cfg.max_output_bytes,
                watch=watch,
            )
        proc = redacted_output(proc, redactor)
        result = (
            self.stuck_failure(proc, watch)
            or self.process_failure(request, proc, watch)
            or self.parse(request, proc)
        )
        if result.cost_usd is None and self.cfg.pricing is not None:
            result = replace(result, cost_usd=self.cfg.pricing.cost(result.usage))
        return redacted(replace(result, duration_s=time.monotonic() - started), redactor)

    def stuck_failure(self, proc: ProcessResult, watch: CliWatch | None) -> AgentResult | None:
        """A failed result for a CLI its watch gave up on (e.g. it cannot reach its server)."""
        if watch is None or proc.timed_out or not watch.give_up():
            return None
        return AgentResult(
            text="",
            exit_status=proc.exit_code or 1,
            error=f"{self.name} {watch.why()}; phasegate stopped it",
            stderr=tail(proc.stderr),
        )

    def process_failure(
        self, request: AgentRequest, proc: ProcessResult, watch: CliWatch | None = None
    ) -> AgentResult | None:
        """A failed result for a timeout or a child that did not read its prompt."""
        if proc.timed_out:
            last = watch.last_error() if watch is not None else None
            seen = f"; the last error it reported: {last}" if last else ""
            return AgentResult(
                text="",
                exit_status=TIMEOUT_EXIT,
                error=(
                    f"{self.name} did not finish within {request.timeout:g}s "
                    f"(phasegate's timeout); its whole process tree was killed{seen}"
                ),
                stderr=tail(proc.stderr),
            )
        if proc.broken_pipe:
            detail = error_line(proc.stderr) or "no output on stderr"
            return AgentResult(
                text="",
                exit_status=proc.exit_code or 1,
                error=(
                    f"{self.name} {exit_wording(proc.exit_code)} before reading the whole "
                    f"prompt (broken pipe): {detail}"
                ),
                stderr=tail(proc.stderr),
            )
        return None

    def crash(self, proc: ProcessResult, what: str) -> AgentResult:
        """A failed result for output that cannot be read (``what`` says why)."""
        note = " (output was truncated at the size limit)" if proc.truncated else ""
        stderr_line = error_line(proc.stderr)
        if stderr_line:
            detail = f"; stderr: {stderr_line}"
        else:
            stdout_line = last_line(proc.stdout)
            detail = f"; stdout: {stdout_line}" if stdout_line else "; no output"
        if proc.exit_code == 0:
            error = f"{self.name} exited with status 0 but {what}{note}{detail}"
        else:
            error = f"{self.name} {exit_wording(proc.exit_code)} ({what}{note}){detail}"
        return AgentResult(
            text="",
            exit_status=proc.exit_code or 1,
            error=error,
            stderr=tail(proc.stderr),
        )


#: The longest line a :class:`CliWatch` keeps whole.
MAX_WATCHED_LINE = 64 * 1024


class CliWatch:
    """Follows a CLI's stdout line by line (see :class:`phasegate.process.OutputWatch`).

    Subclasses implement :meth:`line`, :meth:`give_up` and :meth:`why`.
    """

    def __init__(self) -> None:
        self._partial = b""

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        self._partial = self._partial[-MAX_WATCHED_LINE:]  # only short event lines matter
        for raw in lines:
            self.line(raw.decode("utf-8", errors="replace"))

    def line(self, text: str) -> None:
        """One whole line of stdout."""

    def give_up(self) -> bool:
        return False

    def why(self) -> str:
        """Why it gave up, completing "<cli> ..." (e.g. "cannot connect: ...")."""
        return "gave up"

    def last_error(self) -> str | None:
        """The last error the CLI reported on stdout, if any."""
        return None


def exit_wording(code: int) -> str:
    """``exited with status N``, or ``was killed by signal SIGSEGV`` for a negative status."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"was killed by signal {name}"
    return f"exited with status {code}"


def redacted_output(proc: ProcessResult, redactor: Redactor) -> ProcessResult:
    """``proc`` with every secret masked in its stdout and stderr (before anything cuts them)."""
    return replace(proc, stdout=redactor.text(proc.stdout), stderr=redactor.text(proc.stderr))


def redacted(result: AgentResult, redactor: Redactor) -> AgentResult:
    """``result`` with every secret masked in its text, structured output, error and stderr."""
    structured = result.structured
    if structured is not None:
        structured = redactor.data(dict(structured))
    return replace(
        result,
        text=redactor.text(result.text),
        structured=structured,
        error=redactor.text(result.error) if result.error is not None else None,
        stderr=redactor.text(result.stderr),
    )


def is_macos() -> bool:
    """Whether credentials may live in the macOS keychain (doctor cannot see those)."""
    return sys.platform == "darwin"
