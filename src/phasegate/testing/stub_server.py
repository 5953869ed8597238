"""Run the stub LLM server as a process.

``python -m phasegate.testing.stub_server --script FILE.yaml [--port N] [--log FILE.jsonl]``
prints the base URL on one flushed stdout line, then serves until it gets
SIGTERM or SIGINT. The server class itself lives in
:mod:`phasegate.testing.server` and is re-exported here.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from phasegate.testing.script import Script, ScriptError, load_script
from phasegate.testing.server import StubLLMServer

__all__ = ["StubLLMServer", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, serve until killed; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m phasegate.testing.stub_server",
        description="Stub LLM server (Anthropic, OpenAI, Gemini wire formats) for agent CLI tests.",
    )
    parser.add_argument("--script", help="YAML script of replies (default: answer 'OK' to all)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: the OS picks)")
    parser.add_argument("--log", help="append every request to this JSONL file")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script) if args.script else Script()
    except (OSError, ScriptError) as exc:
        print(f"stub_server: {exc}", file=sys.stderr)
        return 2
    try:
        server = StubLLMServer(script, host=args.host, port=args.port, log_path=args.log)
    except OSError as exc:  # the port is taken, the log cannot be written...
        what = exc.strerror or str(exc)
        where = f"write {exc.filename}" if exc.filename else f"listen on {args.host}:{args.port}"
        print(f"stub_server: cannot {where}: {what}", file=sys.stderr)
        return 2
    done = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with server:
        print(server.url, flush=True)
        # Event.wait with a timeout keeps the main thread responsive to signals.
        while not done.wait(1.0):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
