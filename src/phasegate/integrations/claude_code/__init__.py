"""Claude Code integration: session-start context, state guard, slash commands, install.

``hook``, ``guard`` and ``layout`` use only the standard library: Claude Code
starts a fresh process for every hook call, so they must not import the
engine (pydantic, typer, rich). Keep this package's ``__init__`` free of imports.
"""

#: The hook events ``phasegate hook EVENT`` answers.
EVENTS = ("session-start", "pre-tool-use")
