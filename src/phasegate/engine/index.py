"""The repository's index of work items, kept by phasegate's own writes.

Every state commit computes the item's *brief* (its label, progress,
concerns, pending decisions and next command) and appends it, with the
identity of the state file it belongs to (inode, size, modification time),
to ``.phasegate/cache/index.jsonl``: one short line, so a commit costs the
same whether the repository has ten items or a thousand. ``phasegate
status`` and the Claude Code SessionStart hook read this one file instead
of parsing every item's state; an entry whose state file is no longer the
one it was written for (a crash between the two writes, a file restored from
git), or does not hold the entry's brief byte for byte (a line not written
by phasegate: the index is no guarded file, an agent may append to it), is
not used, and that item's brief is read from its state file instead (the
hook, which reads only the heads of the items it does not show, makes the
second check for every line saying an item ended). The index is a cache: it
can be deleted at any time. It is rewritten with the last entry of each item
once it has grown to twice its size after the last rewrite.

Only the standard library is used here: the hook imports this module.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from pathlib import Path

from phasegate.json_text import encode_json as _encode
from phasegate.repo_paths import CACHE_DIR, CONFIG_DIR

TYPE_CHECKING = False  # the hook reads the index: no typing, no redactor, no lock
if TYPE_CHECKING:
    from typing import Any

    from phasegate.redact import Redactor
    from phasegate.state.flock import FileLock

INDEX_FILE = "index.jsonl"
INDEX_FORMAT = 2
#: The log is not rewritten before it reaches this size.
COMPACT_MIN_BYTES = 256 * 1024
#: A writer waits at most this long for another one (then goes without: it is a cache).
LOCK_SECONDS = 5.0

#: (inode, size, modification time in ns) of a state file.
Identity = tuple[int, int, int]
if TYPE_CHECKING:
    #: An item's last entry: its engine state file's identity, its brief, the identity
    #: of the state file its view wrote (``None`` when it has none), and the brief's bytes
    #: as its line holds them (``None`` when they cannot be told apart from the rest).
    Entry = tuple[Identity, dict[str, Any], Identity | None, bytes | None]
#: Every entry starts so (its item first), which lets a reader skip all but the last.
_PREFIX = b'{"item": "'


def index_path(repo: Path) -> Path:
    return repo / CONFIG_DIR / CACHE_DIR / INDEX_FILE


def identity(path: str | os.PathLike[str]) -> Identity | None:
    """What tells one version of a state file from another; ``None`` if it is absent."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


def _entry_lines(repo: Path) -> list[bytes] | None:
    """The index's lines, its header first (``None``: no index, or one of another format)."""
    try:
        raw = index_path(repo).read_bytes()
    except OSError:
        return None
    lines = raw.split(b"\n")
    return lines if _header(lines[0]) is not None else None


def read_index(repo: Path) -> dict[str, Entry]:
    """``workflow/item`` -> its last entry (see :data:`Entry`)."""
    lines = _entry_lines(repo)
    if lines is None:
        return {}
    # The last line of each item wins: only it is parsed, all of them in one go.
    last: list[tuple[bytes, bytes]] = []
    seen: set[bytes] = set()
    for line in reversed(lines[1:]):
        if not line.startswith(_PREFIX):
            continue
        key = line[len(_PREFIX) : line.find(b'"', len(_PREFIX))]
        if key not in seen:
            seen.add(key)
            last.append((key, line))
    try:
        parsed = json.loads(b"[" + b",".join(line for _, line in last) + b"]")
    except ValueError:
        parsed = None  # a line cut short by a crash: the item's line before it counts
    if not isinstance(parsed, list) or len(parsed) != len(last):
        return _read_lines(lines)
    found: dict[str, Entry] = {}
    for (key, line), entry in zip(last, parsed, strict=True):
        if not isinstance(entry, dict) or str(entry.get("item")).encode() != key:
            return _read_lines(lines)
        _add(found, entry, line)
    return found


def _read_lines(lines: list[bytes]) -> dict[str, Entry]:
    """:func:`read_index` line by line: a line that does not parse is passed over, and the
    item's line before it counts."""
    found: dict[str, Entry] = {}
    seen: set[bytes] = set()
    for line in reversed(lines[1:]):
        if not line.startswith(_PREFIX):
            continue
        key = line[len(_PREFIX) : line.find(b'"', len(_PREFIX))]
        if key in seen:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        if not isinstance(entry, dict):
            continue
        seen.add(key)
        _add(found, entry, line)
    return found


def _add(found: dict[str, Entry], entry: dict[str, Any], line: bytes) -> None:
    """Keep ``entry`` (parsed ``line``) in ``found`` when it holds a brief for a state file."""
    brief: Any = entry.get("brief")
    if type(brief) is not dict:
        return
    stat = _as_identity(entry.get("state"))
    if stat is not None:
        view = _as_identity(entry.get("view"))
        found[str(entry["item"])] = (stat, brief, view, _brief_bytes(line, view))


def _brief_bytes(line: bytes, view: Identity | None) -> bytes | None:
    """The bytes of the brief in an index ``line`` (what follows it is known: the view's
    identity, or the line's end)."""
    line = line.rstrip(b"\n")
    start = line.find(_BRIEF_KEY)
    tail = b"}" if view is None else b", " + _encode({"view": list(view)})[1:].encode()
    if start < 0 or not line.endswith(tail):
        return None
    return line[start + len(_BRIEF_KEY) : len(line) - len(tail)]


#: How a brief begins in an engine state file (a top-level key: a line of its own).
_STATE_BRIEF = b'\n "brief": '


def brief_in_state(brief: bytes | None, state_file: str | os.PathLike[str]) -> bool:
    """Whether ``state_file`` holds the brief whose bytes are ``brief``: an index line is
    trusted only so. The index is no guarded file (anyone may append to it), the state
    file is: a line written by anyone else than phasegate names a brief it does not hold."""
    if not brief:
        return False
    data = _read_bytes(state_file)
    if data is None:
        return False
    at = data.find(_STATE_BRIEF + brief)
    end = at + len(_STATE_BRIEF) + len(brief)
    return at >= 0 and data[end : end + 1] in (b",", b"\n")


def _read_bytes(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes of the file at ``path`` (``None``: it cannot be read), with less of the
    system's work than ``open()`` (the hook reads one for every item that ended)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = [os.read(fd, _CHUNK)]
        while len(chunks[-1]) == _CHUNK:  # a regular file's short read is its end
            chunks.append(os.read(fd, _CHUNK))
    except OSError:
        return None
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_CHUNK = 1 << 16


def _as_identity(value: Any) -> Identity | None:
    """``value`` as an identity if it is a list of three integers (a thousand a read)."""
    if type(value) is list and len(value) == 3:
        a, b, c = value
        if type(a) is int and type(b) is int and type(c) is int:
            return (a, b, c)
    return None


#: An item's head: its engine state file's identity, its status and worktree (from its
#: brief), and its whole line (parsed only for an item shown in detail).
Head = tuple[Identity, str, str | None, bytes]
_BRIEF_KEY = b', "brief": '


def read_heads(repo: Path) -> dict[str, Head]:
    """``workflow/item`` -> its last entry's head (see :data:`Head`), parsing only the few
    bytes before each brief: what the SessionStart hook reads for a thousand items. Lines
    without a head (written before heads were) are parsed whole, all in one go."""
    lines = _entry_lines(repo)
    if lines is None:
        return {}
    found: dict[str, Head] = {}
    seen: set[bytes] = set()
    whole: list[bytes] = []
    for line in reversed(lines[1:]):
        if not line.startswith(_PREFIX):
            continue
        key = line[len(_PREFIX) : line.find(b'"', len(_PREFIX))]
        if key in seen:
            continue
        cut = line.find(_BRIEF_KEY)
        head: Any = None
        if not line.endswith(b"}"):
            continue  # cut short by a crash: the item's line before it counts
        if cut > 0 and line.find(b'"status": ', 0, cut) > 0:
            try:
                head = json.loads(line[:cut] + b"}")
            except ValueError:
                continue  # a line cut short by a crash: the item's line before it counts
        else:
            seen.add(key)
            whole.append(line)
            continue
        seen.add(key)
        if type(head) is dict:
            _add_head(found, head, line)
    if whole:
        try:
            parsed = json.loads(b"[" + b",".join(whole) + b"]")
        except ValueError:
            parsed = [_loads(line) for line in whole]
        for line, entry in zip(whole, parsed, strict=True):
            brief = entry.get("brief") if type(entry) is dict else None
            if type(brief) is dict:
                head = {**entry, "status": brief.get("status"), "worktree": brief.get("worktree")}
                _add_head(found, head, line)
    return found


def _loads(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _add_head(found: dict[str, Head], head: dict[str, Any], line: bytes) -> None:
    stat = _as_identity(head.get("state"))
    if stat is None:
        return
    worktree = head.get("worktree")
    found[str(head["item"])] = (
        stat,
        str(head.get("status") or "active"),
        worktree if isinstance(worktree, str) else None,
        line,
    )


_VIEW_KEY = b', "view": ['
_STATUS_KEY = b'"status": '


def head_in_state(head: Head, state_file: str | os.PathLike[str]) -> bool:
    """Whether ``state_file`` holds the brief of ``head``'s line (see :func:`brief_in_state`)
    and that brief's status is the head's: the check that a line saying an item ended is
    phasegate's own and still true, made without parsing the line (the SessionStart hook
    makes it for every item that ended: one read)."""
    line = head[3].rstrip(b"\n")
    start = line.find(_BRIEF_KEY)
    end = line.rfind(_VIEW_KEY) if line.endswith(b"]}") else len(line) - 1
    if start < 0 or end <= start:
        return False
    brief = line[start + len(_BRIEF_KEY) : end]
    # A brief's first keys hold text (workflow, mode, description), in which a quote is
    # escaped: the first "status" key in its bytes is the brief's own.
    at = brief.find(_STATUS_KEY)
    if at < 0 or not brief.startswith(_encode(head[1]).encode(), at + len(_STATUS_KEY)):
        return False
    return brief_in_state(brief, state_file)


def items_of_missing_workflows(repo: Path, known: Collection[str]) -> dict[str, list[str]]:
    """Workflow -> the items the index last saw in it, for each workflow not in ``known``
    (a workflow file deleted or renamed: its items are still on disk, unlisted)."""
    found: dict[str, list[str]] = {}
    for key in sorted(read_heads(repo)):
        workflow, _, item = key.partition("/")
        if workflow not in known:
            found.setdefault(workflow, []).append(item)
    return found


def head_brief(
    head: Head, state_file: str | os.PathLike[str] | None = None
) -> dict[str, Any] | None:
    """The brief of an item's head line (``None`` if it holds none, or, given the item's
    ``state_file``, if that file does not hold it: see :func:`brief_in_state`)."""
    try:
        entry = json.loads(head[3])
        brief = entry.get("brief")
    except (ValueError, AttributeError):
        return None
    if type(brief) is not dict:
        return None
    if state_file is not None:
        raw = _brief_bytes(head[3], _as_identity(entry.get("view")))
        if not brief_in_state(raw, state_file):
            return None
    return brief


def fresh_brief(
    index: dict[str, Entry], key: str, state_file: Path, view_file: Path | None = None
) -> dict[str, Any] | None:
    """The indexed brief of ``key`` if it was written for ``state_file`` as it is now (and,
    given ``view_file``, for the view's state file as it is now), and ``state_file`` holds
    it (see :func:`brief_in_state`)."""
    entry = index.get(key)
    if entry is None or identity(state_file) != entry[0]:
        return None
    if view_file is not None and identity(view_file) != entry[2]:
        return None
    if not brief_in_state(entry[3], state_file):
        return None
    return entry[1]


def record_brief(
    repo: Path,
    workflow: str,
    item: str,
    state_file: Path,
    brief: dict[str, Any] | None,
    view_file: Path | None = None,
    *,
    redactor: Redactor | None = None,
) -> None:
    """Append one item's entry (``brief`` ``None``: its removal); never fails a commit.

    ``view_file``: the state file the item's view wrote with this commit (a reader
    that shows what it holds checks it is still that file). The brief holds text
    from agents (reviewers' concerns, questions): it is redacted with ``redactor``
    (the item's; one for the environment's secrets when not given) before it is
    written."""
    stat = identity(state_file) if brief is not None else None
    entry: dict[str, Any] = {"item": f"{workflow}/{item}"}
    if stat is not None and brief is not None:
        if redactor is None:
            from phasegate.redact import Redactor

            redactor = Redactor()
        # The head (before "brief"): what the hook needs of every item, read without
        # parsing the briefs of the items it does not show (see read_heads).
        entry.update(status=brief.get("status"), worktree=brief.get("worktree"))
        entry.update(state=list(stat), brief=redactor.data(brief))
        view = identity(view_file) if view_file is not None else None
        if view is not None:
            entry["view"] = list(view)
    line = (_encode(entry) + "\n").encode("utf-8")
    path = _index_paths.get(repo)
    if path is None:
        path = index_path(repo)
        if len(_index_paths) < 64:
            _index_paths[repo] = path
    from phasegate.state.flock import FileLock, LockTimeout

    lock = _locks.get(path)
    if lock is None:
        lock = FileLock(str(path) + ".lock", LOCK_SECONDS)
        if len(_locks) < 64:
            _locks[path] = lock
    for _ in range(2):
        try:
            with lock:
                _append(path, line)
            return
        except FileNotFoundError:
            try:  # the first commit in this repository: make the cache folder
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError:
                return
        except (OSError, LockTimeout):
            return  # a read-only checkout, a full disk: the cache goes without


#: Repository -> its index file; index file -> the lock writers take (made once each).
_index_paths: dict[Path, Path] = {}
_locks: dict[Path, FileLock] = {}
#: A header line already read -> the size it gives (every append reads the header).
_headers: dict[bytes, int | None] = {}


def _header(line: bytes) -> int | None:
    """The size the log had when it was last rewritten, if ``line`` is its header."""
    known = _headers.get(line, -1)
    if known != -1:
        return known
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT:
        found = None
    else:
        found = int(data.get("rewritten_at", 0))
    if len(_headers) >= 64:
        _headers.clear()
    _headers[line] = found
    return found


def _append(path: Path, line: bytes) -> None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        _rewrite(path, [line])
        return
    try:
        size = os.fstat(fd).st_size
        rewritten_at = _header(os.pread(fd, 128, 0).split(b"\n", 1)[0]) if size else None
        if rewritten_at is None:
            os.close(fd)
            fd = -1
            _rewrite(path, [line])  # another format, or damaged: start again
            return
        if size > max(COMPACT_MIN_BYTES, 2 * rewritten_at):
            os.close(fd)
            fd = -1
            _compact(path, line)
            return
        # A line cut short by a crash must not swallow this one.
        torn = os.pread(fd, 1, size - 1) != b"\n"
        os.write(fd, (b"\n" + line) if torn else line)
    finally:
        if fd >= 0:
            os.close(fd)


def _compact(path: Path, line: bytes) -> None:
    last: dict[str, bytes] = {}
    for old in [*path.read_bytes().split(b"\n")[1:], line]:
        try:
            key = json.loads(old)["item"]
        except (ValueError, TypeError, KeyError):
            continue
        last.pop(key, None)  # re-inserted: the order is that of the last writes
        if b'"brief"' in old:
            last[key] = old if old.endswith(b"\n") else old + b"\n"
    _rewrite(path, list(last.values()))


def _rewrite(path: Path, lines: list[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")  # a cache is never committed
    body = b"".join(lines)
    header = json.dumps({"format": INDEX_FORMAT, "rewritten_at": len(body)}).encode()
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(header + b"\n" + body)
    os.replace(tmp, path)
