"""What an agent CLI is: its version and the flags its ``--help`` lists, cached on disk.

``claude --version`` takes about 90 ms and ``gemini --version`` over a second,
so every phasegate command that builds a backend would pay that again. The
answers are kept in ``<user cache dir>/phasegate/cli-probes.json``, one entry
per binary, keyed by the binary's resolved path, size, modification time,
change time and inode: a CLI updated in place (npm keeps file modification
times fixed, but writes new files) is probed again. A cache that cannot be
read or written is ignored; the probe then simply runs.

``--help`` is probed only when asked (``phasegate doctor`` checks that every
flag phasegate passes is listed, see :class:`FlagCheck`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phasegate.process import run_process
from phasegate.repo_paths import user_cache_dir

#: How long ``--version`` or ``--help`` may take.
PROBE_TIMEOUT = 20.0
#: The cache file's name inside the cache folder.
CACHE_FILE = "cli-probes.json"
#: Bumped when the cached entries change shape (older entries are then ignored).
CACHE_FORMAT = 1

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
#: An option line of a --help text; group 1 is its names (``-p, --print``), up to the description.
_OPTION_NAMES = re.compile(r"^ {1,8}(-[^\s,]*(?:,? +-[^\s,]*)*)")


@dataclass(frozen=True)
class FlagCheck:
    """A flag phasegate passes, as ``binary *command --help`` must list it.

    ``value`` is a choice the flag must accept (``--permission-mode dontAsk``):
    it must appear in the flag's own help entry.
    """

    flag: str
    value: str | None = None
    command: tuple[str, ...] = ()

    def describe(self) -> str:
        """The flag as a user would type it (``exec --add-dir``, ``--permission-mode plan``)."""
        words = [*self.command, self.flag]
        if self.value is not None:
            words.append(self.value)
        return " ".join(words)


def cache_dir() -> Path:
    """phasegate's folder in the user cache dir (``$XDG_CACHE_HOME``, else the OS default)."""
    return user_cache_dir()


def version_tuple(text: str) -> tuple[int, int, int] | None:
    """The first ``X.Y.Z`` in ``text`` as integers."""
    match = _VERSION.search(text)
    if match is None:
        return None
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


def _identity(binary: Path) -> tuple[str, dict[str, int]] | None:
    """``(resolved path, stat fingerprint)`` of ``binary``, or ``None`` if it cannot be read."""
    try:
        resolved = binary.resolve()
        info = resolved.stat()
    except OSError:
        return None
    fingerprint = {
        "size": info.st_size,
        "mtime_ns": info.st_mtime_ns,
        "ctime_ns": info.st_ctime_ns,
        "inode": info.st_ino,
    }
    return str(resolved), fingerprint


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
        return {}
    entries = data.get("binaries")
    return entries if isinstance(entries, dict) else {}


def _store(path: Path, entries: Mapping[str, Any]) -> None:
    """Write the cache atomically; any failure leaves the cache as it was."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump({"format": CACHE_FORMAT, "binaries": entries}, stream)
            os.replace(temp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)


class CliProbe:
    """The cached facts about one CLI binary (version, ``--help`` texts)."""

    def __init__(self, binary: Path, env: Mapping[str, str]) -> None:
        self.binary = binary
        self.env = dict(env)
        self.cache_file = cache_dir() / CACHE_FILE
        #: What ``--version`` printed when it held no version (for the error message).
        self.unreadable_version: str = ""

    def _entry(self) -> tuple[str, dict[str, Any]] | None:
        """This binary's key and its cached entry (empty when missing or stale)."""
        identity = _identity(self.binary)
        if identity is None:
            return None
        key, fingerprint = identity
        entry = _load(self.cache_file).get(key)
        if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint:
            entry = {"fingerprint": fingerprint}
        return key, entry

    def _remember(self, key: str, field: str, value: Any) -> None:
        entries = _load(self.cache_file)
        identity = _identity(self.binary)
        if identity is None or identity[0] != key:
            return
        entry = entries.get(key)
        if not isinstance(entry, dict) or entry.get("fingerprint") != identity[1]:
            entry = {"fingerprint": identity[1]}
        entry[field] = value
        entries[key] = entry
        _store(self.cache_file, entries)

    def _run(self, args: Sequence[str]) -> tuple[bool, str]:
        result = run_process(
            [str(self.binary), *args],
            cwd=Path(tempfile.gettempdir()),
            timeout=PROBE_TIMEOUT,
            env=self.env,
            output_limit=512 * 1024,
            grace=1.0,
        )
        return result.ok, result.stdout + "\n" + result.stderr

    def version(self) -> str | None:
        """``binary --version`` (its first ``X.Y.Z``), or ``None`` when it printed none."""
        found = self._entry()
        if found is None:
            return None
        key, entry = found
        cached = entry.get("version")
        if isinstance(cached, str):
            return cached
        ok, output = self._run(["--version"])
        match = _VERSION.search(output)
        version = match.group(0) if match and ok else None
        if version is None:
            self.unreadable_version = output.strip()
        if version is not None:  # a failed probe (a timeout under load) is tried again
            self._remember(key, "version", version)
        return version

    def help_text(self, command: Sequence[str] = ()) -> str:
        """``binary *command --help`` (stdout and stderr), empty when it failed."""
        name = " ".join(command)
        found = self._entry()
        if found is None:
            return ""
        key, entry = found
        helps = entry.get("help")
        if isinstance(helps, dict) and isinstance(helps.get(name), str):
            text: str = helps[name]
            return text
        ok, output = self._run([*command, "--help"])
        if not ok:
            return ""
        cached = dict(helps) if isinstance(helps, dict) else {}
        cached[name] = output
        self._remember(key, "help", cached)
        return output

    def missing_flags(self, checks: Sequence[FlagCheck]) -> list[FlagCheck]:
        """The checks whose flag (or choice) the CLI's ``--help`` does not list."""
        return [check for check in checks if not lists_flag(self.help_text(check.command), check)]


def lists_flag(help_text: str, check: FlagCheck) -> bool:
    """Whether ``help_text`` lists ``check.flag`` (and, if set, ``check.value`` in its entry).

    Only option lines count (a flag merely mentioned in another option's
    description does not); an entry runs up to the next option line.
    """
    flag = re.compile(rf"(?<![\w-]){re.escape(check.flag)}(?![\w-])")
    lines = help_text.splitlines()
    for index, line in enumerate(lines):
        names = _OPTION_NAMES.match(line)
        if names is None or not flag.search(names.group(1)):
            continue
        if check.value is None:
            return True
        entry = [line]
        for following in lines[index + 1 :]:
            if _OPTION_NAMES.match(following):
                break
            entry.append(following)
        word = re.compile(rf"(?<![\w-]){re.escape(check.value)}(?![\w-])")
        if word.search(" ".join(entry)):
            return True
    return False
