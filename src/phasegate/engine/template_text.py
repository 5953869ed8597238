"""Files read for every agent call, without paying for it on every call.

A prompt template is read once and kept while its file is unchanged: every
call still looks at the file (one ``stat``), and any write to it (a new
change time, size, inode or modification time) reads it again. A file
changed so recently that a second write could leave its times as they are
(file systems keep times in ticks) is never kept: it is read each time until
it has been left alone a moment.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Sequence
from pathlib import Path

#: How long a file must have been left alone before its text is kept: longer than one
#: tick of a file system's clock (file systems without sub-second times: 2 s).
SETTLED_NS = 100_000_000
COARSE_SETTLED_NS = 2_000_000_000

#: path -> (what its stat said, its text).
_TEXTS: dict[str, tuple[tuple[int, int, int, int, int], str]] = {}
_LOCK = threading.Lock()
_MAX_KEPT = 256


def template_text(path: Path | str) -> str:
    """The UTF-8 text of the template at ``path``, as it is on disk now."""
    name = os.fspath(path)
    info = os.stat(name)
    stamp = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_dev)
    known = _TEXTS.get(name)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        with open(name, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError as exc:
        from phasegate.errors import WorkflowError

        raise WorkflowError(
            f"{name}: prompt template is not UTF-8 text (byte {exc.start}: {exc.reason}); "
            "save it as UTF-8"
        ) from None
    if _settled(stamp[0], stamp[1]):
        with _LOCK:
            if len(_TEXTS) >= _MAX_KEPT:
                _TEXTS.clear()
            _TEXTS[name] = (stamp, text)
    return text


def _settled(mtime_ns: int, ctime_ns: int) -> bool:
    """Whether a later write to the file is sure to change its times."""
    latest = max(mtime_ns, ctime_ns)
    coarse = mtime_ns % 1_000_000_000 == 0 and ctime_ns % 1_000_000_000 == 0
    return time.time_ns() - latest > (COARSE_SETTLED_NS if coarse else SETTLED_NS)


def inside_any(path: str, roots: Sequence[Path]) -> bool:
    """Whether ``path``, its symlinks followed, lies in one of ``roots`` (followed too).

    :func:`phasegate.engine.confine.inside` on strings: a path written below a root
    through no symlink is inside it whatever the root resolves to, so only the
    components below the root are looked at; any symlink among them, and the
    answer is worked out in full.
    """
    if plainly_inside_any(path, roots):
        return True
    real = os.path.realpath(path)
    for root in roots:
        base = os.path.realpath(root)
        if real == base or real.startswith(base if base.endswith(os.sep) else base + os.sep):
            return True
    return False


def plainly_inside_any(path: str, roots: Sequence[Path]) -> bool:
    """Whether ``path`` is written below one of ``roots`` through existing components
    none of which is a symlink: then it lies inside it (``False`` says nothing).

    The root with the longest name is tried first: a path below the item's folder is
    below the repository too, and its components below the folder are fewer.
    """
    names = [os.fspath(root) for root in roots]
    if len(names) > 1:
        names.sort(key=len, reverse=True)
    return any(_plainly_below(path, name) for name in names)


def _plainly_below(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` followed by existing components none of which is a
    symlink (so that, resolved, it lies below ``root`` resolved)."""
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not path.startswith(prefix) or not os.path.isabs(root):
        return False
    current = prefix.rstrip(os.sep) or os.sep
    for part in path[len(prefix) :].split(os.sep):
        if part in ("", ".", ".."):
            return False
        current = os.path.join(current, part)
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True
