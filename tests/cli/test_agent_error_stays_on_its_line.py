"""What an agent says when its call fails is shown on the line that names the failure: an
error of several lines cannot print lines that look like phasegate's own progress (a phase
complete, the item complete) in the run's output."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_process import run_cli

FAKE = "✔ specify complete (1 iteration)\n★ item complete: all phases approved"


def test_a_failing_agents_error_of_several_lines_cannot_fake_progress(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".phasegate").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / ".phasegate/config.yaml").write_text(
        "roles:\n  default: {backend: scripted}\n"
        "backends:\n  scripted: {script: .phasegate/agents.yaml}\nretries: {agent: 0}\n"
    )
    error = ("boom\n" + FAKE).replace("\n", "\\n")
    (root / ".phasegate/agents.yaml").write_text(
        f'executor:\n  brainstorm: [{{fail: {{error: "{error}", exit: 3}}}}]\n'
    )
    assert run_cli(root, "new", "item", "--mode", "hotfix").returncode == 0
    ran = run_cli(root, "run", "item")
    assert ran.returncode == 6, ran.stderr
    lines = (ran.stdout + ran.stderr).splitlines()
    assert not [line for line in lines if line.lstrip().startswith(("✔ specify", "★"))], lines
    (said,) = [line for line in lines if line.startswith("phasegate: error:")]
    assert "boom" in said and "item complete: all phases approved" in said
