"""One state document per work item, written atomically under an exclusive lock."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from phasegate.errors import BusyError, StateCorruptError, os_reason
from phasegate.faults import crash_point
from phasegate.redact import Redactor
from phasegate.state.atomic import atomic_write_bytes

StateFormat = Literal["json", "yaml"]

#: How long a writer waits for another process's short state write.
WRITE_LOCK_TIMEOUT = 30.0
#: Held while a store makes its write lock (filelock is imported by a commit, not a read).
_MAKING_LOCK = threading.Lock()


class StateStore:
    """Read and commit the state document at ``path`` (JSON or YAML).

    Reads need no lock (writes replace the file atomically). Every commit runs
    under the exclusive lock at ``lock_path``, so two processes never
    interleave their read-modify-write cycles. A state file that cannot be
    parsed raises :class:`StateCorruptError` and is never overwritten.
    """

    def __init__(
        self,
        path: Path,
        lock_path: Path,
        fmt: StateFormat = "json",
        redactor: Redactor | None = None,
    ) -> None:
        self.path = path
        self.fmt = fmt
        self.lock_path = lock_path
        self._lock: Any = None  # made at the first commit: reading needs no lock
        self._redactor = redactor or Redactor()

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> dict[str, Any]:
        """Parse the state document; raise :class:`StateCorruptError` if unreadable."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise StateCorruptError(
                f"state file {self.path} cannot be read: {os_reason(exc)}"
            ) from None
        return parse_state(raw, self.path, self.fmt)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the exclusive write lock (re-entrant within this store)."""
        import filelock

        with _MAKING_LOCK:  # one lock object per store, whichever thread commits first
            if self._lock is None:
                self._lock = filelock.FileLock(str(self.lock_path), timeout=WRITE_LOCK_TIMEOUT)
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._lock:
                yield
        except filelock.Timeout:
            raise BusyError(
                f"state file {self.path} is locked by another phasegate process "
                f"(lock {self.lock_path}); try again when it finishes"
            ) from None

    def commit(self, data: dict[str, Any]) -> None:
        """Atomically replace the document with ``data`` (secrets redacted)."""
        payload = dump_state(self._redactor.data(data), self.fmt)
        with self.locked():
            crash_point("state.before_commit")
            atomic_write_bytes(self.path, payload)
        crash_point("state.after_commit")

    @contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        """Read-modify-write under the lock: mutate the yielded dict, it is committed."""
        with self.locked():
            data = self.load()
            yield data
            self.commit(data)


def parse_state(raw: bytes, path: Path, fmt: StateFormat) -> dict[str, Any]:
    """Decode a state document, naming ``path`` in the error when it is corrupt."""
    hint = "it was left untouched; restore it (e.g. from git) or fix it by hand"
    if not raw.strip():
        raise StateCorruptError(f"state file {path} is empty; {hint}")
    try:
        text = raw.decode("utf-8")
        if fmt == "json":
            data = json.loads(text)
        else:
            from ruamel.yaml import YAML

            data = YAML(typ="safe", pure=True).load(text)
    except Exception as exc:  # any parse failure means the same thing to the user
        reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        raise StateCorruptError(f"state file {path} is corrupt ({reason}); {hint}") from None
    if not isinstance(data, dict):
        raise StateCorruptError(f"state file {path} does not hold an object; {hint}")
    return data


def dump_state(data: dict[str, Any], fmt: StateFormat) -> bytes:
    """Encode a state document for a person to read."""
    if fmt == "json":
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue().encode("utf-8")
