"""The README's Quick start, followed as written on a machine with no agent CLI: `init` names
the docs section that shows the script its roles answer from, `run` without that script
stops in one line naming both ways on, and each way on walks the item to the end."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from phasegate.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ROOT / "docs" / "backends.md"
README = ROOT / "README.md"


def phasegate(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        env={**os.environ, "PHASEGATE_AGENT_CLIS": "none"},
    )


def quick_start_commands() -> list[list[str]]:
    """The `phasegate` commands of the README's Quick start, in order."""
    section = README.read_text().split("## Quick start", 1)[1]
    block = section.split("```console", 1)[1].split("```", 1)[0]
    found = []
    for line in block.splitlines():
        command = line.removeprefix("$ ").split("  #", 1)[0].strip()
        if command.startswith("phasegate "):
            found.append(shlex.split(command)[1:])
    return found


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    made = set()
    for heading in re.findall(r"^#+ (.+)$", markdown, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        made.add(slug)
    return made


def docs_pointer(text: str) -> str:
    """The docs/backends.md#section a message names (it must exist)."""
    match = re.search(r"docs/backends\.md#([\w-]+)", text)
    assert match, text
    assert match.group(1) in anchors(BACKENDS.read_text()), match.group(0)
    return match.group(1)


def start(tmp_path: Path) -> tuple[Path, list[list[str]]]:
    repo = tmp_path / "your-project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    commands = quick_start_commands()
    assert [c[0] for c in commands] == ["init", "new", "run", "status"]
    init = phasegate(repo, *commands[0])
    assert init.returncode == 0, init.stderr
    docs_pointer(init.stdout)
    assert "backend: auto" in init.stdout
    made = phasegate(repo, *commands[1])
    assert made.returncode == 0, made.stderr
    return repo, commands


def test_run_without_the_script_names_the_way_on(tmp_path: Path) -> None:
    repo, commands = start(tmp_path)
    ran = phasegate(repo, *commands[2])
    assert ran.returncode == ExitCode.BAD_INPUT, ran.stderr
    last = ran.stderr.strip().splitlines()[-1]
    assert last.startswith("phasegate: error: executor: scripted backend: script "), last
    assert "agents.yaml not found" in last
    docs_pointer(last)
    assert "roles: {default: {backend: auto}}" in last


def test_the_script_the_docs_show_walks_the_quick_start(tmp_path: Path) -> None:
    repo, commands = start(tmp_path)
    section = BACKENDS.read_text().split("## Without a model: scripted and auto", 1)[1]
    script = section.split("```yaml\n# .phasegate/agents.yaml\n", 1)[1].split("```", 1)[0]
    (repo / ".phasegate" / "agents.yaml").write_text(script)
    ran = phasegate(repo, *commands[2])
    assert ran.returncode == 0, ran.stderr
    status = phasegate(repo, *commands[3])
    assert "rate-limit (feature, mode standard, completed)" in status.stdout


def test_the_auto_backend_walks_the_quick_start(tmp_path: Path) -> None:
    repo, commands = start(tmp_path)
    config = repo / ".phasegate" / "config.yaml"
    text = config.read_text()
    assert "  default: {backend: scripted}\n" in text
    config.write_text(text.replace("default: {backend: scripted}", "default: {backend: auto}"))
    ran = phasegate(repo, *commands[2])
    assert ran.returncode == 0, ran.stderr
    status = phasegate(repo, *commands[3])
    assert "rate-limit (feature, mode standard, completed)" in status.stdout
