"""The tests' CODEX_HOME folders, outside the temporary folder.

With a system ``bwrap`` installed (Debian's bubblewrap, which ``make test``
installs for Claude Code's sandbox), Codex will not create its sandbox helper
in a CODEX_HOME under ``$TMPDIR`` or ``/tmp``, where pytest's ``tmp_path`` is,
and every sandboxed call then fails with ``bwrap: execvp codex-linux-sandbox``.
So each test's CODEX_HOME lives in a folder of the test session's own under
``~/.cache/phasegate-tests``: made when a test first asks for one, removed
when the session ends (tests/conftest.py), unique per session, so two runs at
once (of one clone or of two) never share one.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
import time
from pathlib import Path

#: A session folder older than this was left by a run that was killed.
_STALE_SECONDS = 24 * 3600

#: Read at import, before any test points HOME at a folder of its own.
_ROOT = Path.home() / ".cache" / "phasegate-tests"

_session: Path | None = None
_lock = threading.Lock()


def start_session() -> Path:
    """Make this session's folder (and remove ones left by killed runs a day ago)."""
    global _session
    _ROOT.mkdir(parents=True, exist_ok=True)
    for old in _ROOT.glob("session-*"):
        try:
            stale = time.time() - old.stat().st_mtime > _STALE_SECONDS
        except OSError:
            continue
        if stale:
            shutil.rmtree(old, ignore_errors=True)
    _session = Path(tempfile.mkdtemp(prefix="session-", dir=_ROOT))
    return _session


def end_session() -> None:
    """Remove this session's folder."""
    global _session
    if _session is not None:
        shutil.rmtree(_session, ignore_errors=True)
        _session = None


def codex_home(home: Path) -> Path:
    """The CODEX_HOME of the test whose HOME is ``home``: its own, outside the temporary folder."""
    with _lock:
        session = _session or start_session()
    digest = hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:16]
    path = session / f"codex-home-{digest}"
    path.mkdir(exist_ok=True)
    return path
