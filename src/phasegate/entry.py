"""The ``phasegate`` console script: a fast path for hooks, the full CLI otherwise.

Claude Code starts ``phasegate hook ...`` at the start of every session and
before every guarded tool call, so that path imports only the standard
library; everything else goes to :func:`phasegate.cli.entry` (typer, rich,
pydantic and the engine).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run ``phasegate`` with ``sys.argv``."""
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "hook":
        from phasegate.integrations.claude_code.hook import EVENTS
        from phasegate.integrations.claude_code.hook import main as hook_main

        if args[1] in EVENTS:
            sys.exit(hook_main(args[1]))
    from phasegate.cli import entry

    entry()
