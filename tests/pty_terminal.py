"""``phasegate`` on a pseudo-terminal, for tests of what a person at a terminal sees."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path


class Terminal:
    """phasegate run on a pseudo-terminal: read what it shows, type lines.

    ``env`` is added to the environment (``None`` values remove a variable); ``enter``
    is what pressing Enter sends.
    """

    def __init__(
        self,
        repo: Path,
        *args: str,
        env: Mapping[str, str | None] | None = None,
        enter: str = "\n",
    ) -> None:
        self.leader, follower = pty.openpty()
        environ = {**os.environ, "COLUMNS": "200", **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "phasegate", *args],
            cwd=repo,
            stdin=follower,
            stdout=follower,
            stderr=follower,
            env={k: v for k, v in environ.items() if v is not None},
            start_new_session=True,
        )
        os.close(follower)
        self.enter = enter
        self.seen = ""

    def wait_for(self, text: str, timeout: float = 90) -> str:
        """Everything shown up to and including ``text`` since the last wait."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never appeared; the terminal shows:\n{self.seen[-3000:]}"
            ready, _, _ = select.select([self.leader], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(self.leader, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"ended before {text!r}:\n{self.seen[-3000:]}"
                self.seen += chunk.decode("utf-8", errors="replace")
        found = self.seen
        self.seen = self.seen[self.seen.index(text) + len(text) :]
        return found

    def type(self, line: str) -> None:
        os.write(self.leader, (line + self.enter).encode())

    def finish(self) -> int:
        """The exit code, once everything shown is read."""
        while True:
            try:
                if not os.read(self.leader, 4096):
                    break
            except OSError:
                break
        code = self.proc.wait(timeout=60)
        os.close(self.leader)
        return code
