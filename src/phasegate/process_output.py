"""The pipes of a child process: its output read within a bound, its input written.

Output beyond a limit is dropped from the middle: the head and the tail are
kept, without the partial lines at the cut (nor a private-key block the cut
ran through), since a fragment of a secret is no longer recognisable by the
redaction that runs later. Bytes that are not UTF-8 are replaced.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Callable

#: At a cut in the output, at most this many bytes of the partial line are dropped.
CUT_EDGE_BYTES = 4096


class BoundedReader(threading.Thread):
    """Read a pipe to EOF, keeping at most ``limit`` bytes (head and tail)."""

    def __init__(
        self, pipe: object, limit: int, on_data: Callable[[bytes], None] | None = None
    ) -> None:
        super().__init__(daemon=True)
        self._pipe = pipe
        self._limit = limit
        #: Sees every chunk as it is read (before any cut), e.g. to notice a stuck child.
        self._on_data = on_data
        self._head = bytearray()
        self._tail = bytearray()
        self.truncated = False

    def run(self) -> None:
        read = self._pipe.read1 if hasattr(self._pipe, "read1") else self._pipe.read  # type: ignore[attr-defined]
        half = self._limit // 2
        try:
            while chunk := read(65536):
                if self._on_data is not None:
                    self._on_data(chunk)
                if len(self._head) < half:
                    room = half - len(self._head)
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self._tail += chunk
                    if len(self._tail) > half:
                        self.truncated = True
                        del self._tail[: len(self._tail) - half]
        except (OSError, ValueError):
            pass  # the pipe was closed under us after a timeout
        finally:
            # Closed here, not by run_process: closing a buffered pipe blocks while
            # another thread is reading it, i.e. until an escaped grandchild exits.
            with contextlib.suppress(OSError):
                self._pipe.close()  # type: ignore[attr-defined]

    def text(self) -> str:
        if not self.truncated:
            return (bytes(self._head) + bytes(self._tail)).decode("utf-8", errors="replace")
        # The cut ran through the middle of a line (or a key block): drop both
        # partial ends, since a fragment of a secret is no longer recognisable.
        joined = _before_cut(bytes(self._head)) + b"\n[... output truncated ...]\n"
        return (joined + _after_cut(bytes(self._tail))).decode("utf-8", errors="replace")


def _before_cut(data: bytes) -> bytes:
    """``data`` without its last partial line, or the key block the cut ran into."""
    begin = data.rfind(b"-----BEGIN ")
    if begin >= 0 and data.find(b"-----END ", begin) < 0:
        data = data[:begin]
    newline = data.rfind(b"\n", max(0, len(data) - CUT_EDGE_BYTES))
    return data[: newline + 1] if newline >= 0 else data[: max(0, len(data) - CUT_EDGE_BYTES)]


def _after_cut(data: bytes) -> bytes:
    """``data`` without its first partial line, or the key block the cut came out of."""
    end = data.find(b"-----END ")
    if end >= 0 and data.rfind(b"-----BEGIN ", 0, end) < 0:
        data = data[data.find(b"\n", end) + 1 :] if data.find(b"\n", end) >= 0 else b""
    newline = data.find(b"\n", 0, CUT_EDGE_BYTES)
    return data[newline + 1 :] if newline >= 0 else data[CUT_EDGE_BYTES:]


class StdinWriter(threading.Thread):
    """Write the prompt to the child's stdin without blocking the timeout clock."""

    def __init__(self, proc: subprocess.Popen[bytes], text: str) -> None:
        super().__init__(daemon=True)
        self._proc = proc
        self._data = text.encode("utf-8")
        self.broken_pipe = False

    def run(self) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(self._data)
            stdin.close()
        except BrokenPipeError:
            self.broken_pipe = True
            with contextlib.suppress(OSError):
                stdin.close()
        except (OSError, ValueError):
            pass  # closed after a timeout
