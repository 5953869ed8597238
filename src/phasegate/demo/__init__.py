"""The demo: a throwaway git repo, a sample project, and the whole ``feature`` workflow.

Run it with ``make demo`` or ``python -m phasegate.demo [DIR]``. Agents are
scripted (no model, no network): the chain reviewer rejects the first spec,
the first implementation fails its tests, and a hard-blocked transition is
shown before anything runs.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ITEM = "rate-limit"


def _bold(text: str) -> str:
    """``text`` in bold on a terminal; plain in a file or a pipe, or with NO_COLOR set."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        return f"\033[1m{text}\033[0m"
    return text


def _say(text: str) -> None:
    print("\n" + _bold(f"== {text}"), flush=True)


def _run(
    cmd: list[str],
    cwd: Path,
    *,
    expect: int = 0,
    env: dict[str, str] | None = None,
    no_terminal: bool = False,
) -> int:
    shown = (
        " ".join(shlex.quote(c) for c in ["phasegate", *cmd[3:]])
        if cmd[:3] == [sys.executable, "-m", "phasegate"]
        else " ".join(shlex.quote(c) for c in cmd)
    )
    print(f"$ {shown}", flush=True)
    code = subprocess.run(
        cmd,
        cwd=cwd,
        check=False,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL if no_terminal else None,
    ).returncode
    if code != expect:
        raise SystemExit(f"demo: '{shown}' exited {code}, expected {expect}")
    if code:
        print(f"(exit code {code}, as expected)", flush=True)
    return code


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=phasegate demo", "-c", "user.email=demo@example.invalid", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


#: Inside a demo repo's .git: what marks a folder as one the demo made (and may replace).
MARKER = "phasegate-demo"


class NotADemoFolder(Exception):
    """The folder given exists and holds something other than an earlier demo."""


def _made_by_demo(target: Path) -> bool:
    if (target / ".git" / MARKER).is_file():
        return True
    # A demo made before the marker: its script is the demo's own.
    script = target / ".phasegate" / "agents.yaml"
    return script.is_file() and script.read_bytes() == (HERE / "agents.yaml").read_bytes()


def make_sample_repo(target: Path) -> Path:
    """Create ``target`` as a git repo holding the sample project, committed. A folder
    that exists is replaced only when it is empty or an earlier demo's."""
    if target.exists():
        if not target.is_dir() or (any(target.iterdir()) and not _made_by_demo(target)):
            raise NotADemoFolder(
                f"demo: {target} exists and is not a folder an earlier demo made; it is left "
                "as it is: give a new or empty directory (the demo replaces it)"
            )
        shutil.rmtree(target)
    shutil.copytree(HERE / "sample", target)
    _git(target, "init", "-q", "-b", "main")
    (target / ".git" / MARKER).write_text("made by python -m phasegate.demo\n", "utf-8")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "Sample project")
    return target


def run_demo(target: Path) -> None:
    """Run the whole demo in ``target`` (created afresh)."""
    pg = [sys.executable, "-m", "phasegate"]
    _say(f"A sample project in a throwaway git repo: {target}")
    repo = make_sample_repo(target)
    test_command = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
    # The demo's agents are scripted even where real agent CLIs are installed.
    _run([*pg, "init", "--test-command", test_command], repo, env={"PHASEGATE_AGENT_CLIS": "none"})
    shutil.copy(HERE / "agents.yaml", repo / ".phasegate" / "agents.yaml")
    print("(scripted agents: .phasegate/agents.yaml)")

    _say("Create a work item under the feature workflow")
    _run(
        [
            *pg,
            "new",
            ITEM,
            "--workflow",
            "feature",
            "--mode",
            "standard",
            "--description",
            "Add a token-bucket rate limiter",
        ],
        repo,
    )

    _say("Jumping straight to implement is hard-blocked: there is no spec.md yet")
    _run([*pg, "run", ITEM, "--phase", "implement"], repo, expect=4)

    _say(
        "Skipping phases needs a person's yes: without a terminal the run waits (exit 3) "
        "and names the command that answers"
    )
    _run([*pg, "run", ITEM, "--phase", "design"], repo, expect=3, no_terminal=True)
    _run([*pg, "decisions"], repo)
    _run([*pg, "answer", ITEM, "transition-warning", "stop"], repo)

    _say(
        "Run the workflow up to verify (the reviewer rejects the first spec; "
        "the first implementation fails its tests)"
    )
    _run([*pg, "run", ITEM, "--until", "verify"], repo)

    history = repo / "docs" / "features" / ITEM / ".review-history.md"
    _say(f"The review history so far ({history.relative_to(repo)}), first lines")
    print("\n".join(history.read_text(encoding="utf-8").splitlines()[:40]))

    _say("Finish: the item is marked complete and the review history is deleted")
    _run([*pg, "run", ITEM], repo)
    _run([*pg, "status", ITEM], repo)

    folder = repo / "docs" / "features" / ITEM
    _say("Where the files are")
    print(f"  repository:     {repo}")
    print(f"  work item:      {folder}")
    print(f"  state:          {folder / '.meta.json'}")
    print(f"  journal:        {folder / '.journal.jsonl'}")
    print(f"  code written:   {repo / 'ratelimit' / 'bucket.py'}")
    print(f"  agents script:  {repo / '.phasegate' / 'agents.yaml'}")

    _say("Next")
    here = Path(sys.executable).parent / "phasegate"
    command = shlex.quote(str(here)) if here.is_file() else "phasegate"
    print(f"  cd {shlex.quote(str(repo))}")
    print(f"  {command} logs {ITEM}        # every event of the run, in order")
    print(f"  {command} serve                  # the dashboard: items, timelines, decisions")
    print("  In your own git repository: phasegate init, then the README's Quick start.")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(
            "usage: python -m phasegate.demo [DIR]   (default: a new temporary directory; "
            "DIR must be new, empty or an earlier demo's, which is replaced)"
        )
        return 0
    target = Path(args[0]).resolve() if args else Path(tempfile.mkdtemp(prefix="phasegate-demo-"))
    try:
        run_demo(target / "repo" if not args else target)
    except NotADemoFolder as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0
