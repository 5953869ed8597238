"""``phasegate serve``: the web dashboard of the repository."""

import contextlib
import sys
from typing import Annotated

import typer

from phasegate.cli.app import RepoOption, _repo, app
from phasegate.cli.output import out


@app.command()
def serve(
    port: Annotated[
        int,
        typer.Option(
            "--port", "-p", help="Port to listen on (0: any free port).", min=0, max=65535
        ),
    ] = 8765,
    host: Annotated[
        str,
        typer.Option(
            "--host", help="Address to listen on; other than loopback needs --allow-remote."
        ),
    ] = "127.0.0.1",
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Allow a non-loopback --host; every request must then carry the token "
            "printed at start.",
        ),
    ] = False,
    repo: RepoOption = None,
) -> None:
    """Serve a web dashboard: work items, live timelines, artifacts, and decisions to answer.

    Read-only except answering pending decisions. Stops with Ctrl-C.
    """
    root = _repo(repo)
    from phasegate.dashboard.server import serve as run_server  # the web stack: only here

    def announce(url: str) -> None:
        out.print(f"phasegate dashboard of {root}: {url}", markup=False, highlight=False)
        out.print("Ctrl-C stops it.", markup=False)
        sys.stdout.flush()

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a dashboard is meant to end
        run_server(root, host, port, allow_remote=allow_remote, announce=announce)
    from phasegate.interrupts import handled

    handled()
    out.print("Dashboard stopped.", markup=False)
