"""What people and agents write reaches the terminal as text, and bad input is refused:
escape codes in agents' words and descriptions are shown, never obeyed; arguments that are
not UTF-8 and wrong values in a scripted agent's script are one-line errors; Enter at a gate
without a default takes nothing; ``--answer`` for a decision the workflow cannot ask is
refused before the run starts. End to end: the CLI in a subprocess (or on a pseudo-terminal),
real git, scripted agents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from pty_terminal import Terminal

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import init_repo

from phasegate import ScriptedBackend
from phasegate.agents.base import Access, AgentRequest, PromptPart
from phasegate.errors import ExitCode

ESC = "\x1b"

SIMPLE = """\
name: simple
items_dir: simple
modes: {standard: {max_iterations: 2}}
roles: {writer: {access: write}, judge: {}}
nodes:
  - id: draft
    executor: writer
    outputs: [doc.md]
    reviewers: [{role: judge, reader: words, on: {OK: pass, FIX: revise, UNCLEAR: revise}}]
  - id: e
    kind: end
"""

GATES = """\
name: gates
items_dir: gitems
modes: {standard: {max_iterations: 1}}
roles: {writer: {access: write}}
nodes:
  - id: ask
    kind: gate
    decision: "go-{{ item }}"
    question: "Proceed with {{ item }}?"
    choices:
      yes: {to: done, description: ship it}
      fix: {to: done, note: required}
      blk: {to: "@blocked", description: blocked because reasons}
  - id: done
    kind: end
"""


def phasegate(repo: Path, *args: str | bytes, env: dict[str, str] | None = None) -> Any:
    """The CLI as a script runs it: no terminal, stdin closed."""
    return subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        errors="replace",
        stdin=subprocess.DEVNULL,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def setup(root: Path, name: str, workflow: str, script: dict[str, Any] | None = None) -> Path:
    repo = init_repo(root)
    assert phasegate(repo, "init").returncode == 0
    prompts = repo / ".phasegate" / "workflows" / "prompts" / name
    prompts.mkdir(parents=True)
    (repo / ".phasegate" / "workflows" / f"{name}.yaml").write_text(workflow)
    for node in ("draft", "judge"):
        (prompts / f"{node}.md").write_text("Do {{ node }} for {{ item }}\n")
    if script is not None:
        with open(repo / ".phasegate" / "agents.yaml", "w") as handle:
            YAML(typ="safe", pure=True).dump(script, handle)
    return repo


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("phasegate: ")]


# -- escape codes ------------------------------------------------------------------------

HOSTILE_VERDICT = {
    "verdict": "FIX",
    "summary": "sum\x1b]0;PWNED\x07 and \x9b2J",
    "issues": [{"severity": "high", "description": "evil \x1b[2J\x1b[31mRED", "location": None}],
}


def test_escape_codes_in_agent_text_and_descriptions_are_shown_not_obeyed(
    tmp_path: Path,
) -> None:
    """A reviewer's issue and summary, and a description, holding ESC/OSC/CSI sequences: `run`
    progress, `status` and `logs` show them as ``\\x1b`` (into a pipe, and with --color
    always, where only phasegate's own colours are escape codes); JSON output stays valid
    and keeps the text, with no raw control character in it either."""
    script = {
        "writer": {"*": [{"write": {"{item_dir}/doc.md": "# doc\n"}}]},
        "judge": {"*": [{"verdict": HOSTILE_VERDICT}]},
    }
    repo = setup(tmp_path / "repo", "simple", SIMPLE, script)
    assert phasegate(repo, "new", "it", "-w", "simple").returncode == 0
    ran = phasegate(repo, "run", "it")
    assert "evil \\x1b[2J\\x1b[31mRED" in ran.stderr, ran.stderr
    assert ESC not in ran.stderr and "\x9b" not in ran.stderr
    for colour in ("never", "always"):
        status = phasegate(repo, "--color", colour, "status", "it")
        assert "evil \\x1b[2J\\x1b[31mRED" in status.stdout, status.stdout
        assert "\x1b[2J" not in status.stdout and "\x1b[31mRED" not in status.stdout
        logs = phasegate(repo, "--color", colour, "logs", "it")
        assert "sum\\x1b]0;PWNED" in logs.stdout and "\\x9b2J" in logs.stdout, logs.stdout
        assert "\x1b]0;" not in logs.stdout and "\x9b" not in logs.stdout
        assert "\x1b[2J" not in logs.stdout
    assert ESC not in phasegate(repo, "--color", "never", "status", "it").stdout
    as_json = phasegate(repo, "logs", "it", "--json").stdout
    assert ESC not in as_json and "\x9b" not in as_json
    verdicts = [json.loads(line) for line in as_json.splitlines()]
    assert any(e.get("summary") == HOSTILE_VERDICT["summary"] for e in verdicts)

    described = "line1\nline2\x1b[31mRED\x9b"
    assert phasegate(repo, "new", "nl", "-w", "simple", "-d", described).returncode == 0
    shown = phasegate(repo, "status", "nl").stdout
    assert "line1\nline2\\x1b[31mRED\\x9b" in shown, shown
    assert ESC not in shown and "\x9b" not in shown
    raw = phasegate(repo, "status", "nl", "--json").stdout
    assert ESC not in raw and "\x9b" not in raw
    assert json.loads(raw)["description"] == described


# -- input that is not UTF-8 ------------------------------------------------------------


def refused_bytes(repo: Path, *args: str | bytes) -> str:
    """The one error line of phasegate given ``args`` (some of them bytes), exit 2."""
    done = subprocess.run(
        [sys.executable, "-m", "phasegate", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == ExitCode.BAD_INPUT, done.stderr
    assert "internal error" not in done.stderr
    (line,) = error_lines(done.stderr)
    return line


def test_arguments_that_are_not_utf8_are_bad_input_naming_the_option(tmp_path: Path) -> None:
    """`new -d`, `run -a` and `answer` with bytes that are not UTF-8: exit 2 and one line
    naming the argument (not exit 1, "internal error"); no item is made."""
    repo = setup(tmp_path / "repo", "gates", GATES)
    line = refused_bytes(repo, "new", "m2", "-w", "gates", "-d", b"bad\xff")
    assert "--description is not valid UTF-8 text (byte 0xff at character 4)" in line
    assert not (repo / "gitems" / "m2").exists()
    assert phasegate(repo, "new", "g1", "-w", "gates").returncode == 0
    line = refused_bytes(repo, "run", "g1", "-a", b"go-g1=fix: \xff")
    assert "--answer is not valid UTF-8 text" in line
    line = refused_bytes(repo, "answer", "g1", "go-g1", b"fix: \xff")
    assert "the answer is not valid UTF-8 text" in line
    line = refused_bytes(repo, "answer", "g1", "go-g1", "fix", "--note", b"\xff")
    assert "--note is not valid UTF-8 text" in line


# -- a scripted agent's script ----------------------------------------------------------


def test_a_verdict_that_is_not_a_mapping_is_refused_naming_the_script_and_entry(
    tmp_path: Path,
) -> None:
    """`verdict: "OK"` in agents.yaml: the call is refused with one line naming the script
    file and the entry, never exit 1 ("internal error") or Python's own words."""
    script = {
        "writer": {"*": [{"write": {"{item_dir}/doc.md": "x\n"}}]},
        "judge": {"*": [{"verdict": "OK"}]},
    }
    repo = setup(tmp_path / "repo", "simple", SIMPLE, script)
    assert phasegate(repo, "new", "it", "-w", "simple").returncode == 0
    ran = phasegate(repo, "run", "it")
    assert ran.returncode not in (0, 1), ran.stderr
    (line,) = error_lines(ran.stderr)
    assert str(repo / ".phasegate" / "agents.yaml") in line
    assert "judge.*[1]: verdict must be a mapping" in line, line  # as the script spells it
    assert "internal error" not in ran.stderr and "ValueError" not in ran.stderr


def _request(workdir: Path) -> AgentRequest:
    return AgentRequest(
        role="writer",
        prompt=(PromptPart("Instructions", "Write."),),
        workdir=workdir,
        access=Access.WRITE,
        labels={"phase": "draft", "iteration": "1", "item": "it", "item_dir": "simple/it"},
    )


@pytest.mark.parametrize(
    ("replies", "message"),
    [
        ([{"sleep": -1}], "sleep must be a number of at least 0, not -1"),
        ([{"sleep": float("nan")}], "sleep must be a number of at least 0, not nan"),
        ([{"sleep": "forever"}], "sleep must be a number of at least 0, not 'forever'"),
        ([{"sleep": True}], "sleep must be a number of at least 0"),
        ([{"cost_usd": float("inf")}], "cost_usd must be a number of at least 0"),
        ([{"write": "doc.md"}], "write must be a mapping of path: content, not text 'doc.md'"),
        ([{"write": {"doc.md": ["x"]}}], "write['doc.md'] must be text, not a list"),
        ([{"delete": {"a": 1}}], "delete must be a list of paths"),
        ([{"text": {"a": 1}}], "text must be text, not a mapping"),
        ([{"json": [1, 2]}], "json must be a mapping"),
        ([{"verdict": "OK"}], "verdict must be a mapping"),
        ([{"fail": {"exit": "x"}}], "fail.exit must be a whole number 1-255, not 'x'"),
        ([{"fail": {"code": 3}}], "unknown key(s) code in fail"),
        (["hello"], "a scripted reply must be a mapping of reply keys"),
        ("hello", "the replies must be a reply (a mapping) or a list of replies"),
    ],
)
def test_wrong_values_in_a_script_fail_the_call_naming_the_file_and_entry(
    tmp_path: Path, replies: Any, message: str
) -> None:
    """Each wrong value in a script file is the call's failure with one line naming the
    file, the entry and what is wrong: never a Python exception's own text."""
    path = tmp_path / "agents.yaml"
    with open(path, "w") as handle:
        YAML(typ="safe", pure=True).dump({"writer": {"*": replies}}, handle)
    result = ScriptedBackend({"script": str(path)}).run(_request(tmp_path))
    assert not result.ok
    error = result.error or ""
    # The entry as the script spells it: role "writer", key "*" (its first reply).
    entry = "writer.*: " if isinstance(replies, str) else "writer.*[1]: "
    assert error.startswith(f"{path}: {entry}"), error
    assert message in error, error
    assert "\n" not in error and "Error(" not in error


# -- Enter and refused answers at a terminal --------------------------------------------


def test_enter_at_a_gate_without_default_takes_nothing_and_refusals_say_why(
    tmp_path: Path,
) -> None:
    """A gate with neither `default` nor `recommend`: the prompt shows no default, Enter
    takes nothing (it names the choices and asks again, the first choice is not taken), and
    an answer refused at the prompt says why before the question comes back."""
    repo = setup(tmp_path / "repo", "gates", GATES)
    assert phasegate(repo, "new", "t2", "-w", "gates").returncode == 0
    terminal = Terminal(repo, "run", "t2", env={"TERM": "dumb", "NO_COLOR": "1"}, enter="\r")
    shown = terminal.wait_for("Answer (yes / fix / blk)")
    assert "Proceed with t2?" in shown
    terminal.type("")
    shown = terminal.wait_for("Answer (yes / fix / blk)")
    assert "There is no default answer here: type one of yes, fix, blk." in shown, shown
    terminal.type("bogus")
    shown = terminal.wait_for("Answer (yes / fix / blk)")
    assert "answer refused: 'bogus' is not a choice of decision 'go-t2'" in shown, shown
    terminal.type("fix")
    shown = terminal.wait_for("Answer (yes / fix / blk)")
    assert "answer refused: choice 'fix' of decision 'go-t2' needs a note" in shown, shown
    terminal.type("blk")
    code = terminal.finish()
    assert code == ExitCode.BLOCKED
    journal = (repo / "gitems" / "t2" / ".journal.jsonl").read_text().splitlines()
    answered = [e for e in map(json.loads, journal) if e["event"] == "decision.answered"]
    assert [(e["choice"], e["by"]) for e in answered] == [("blk", "prompt")]


# -- --answer for a decision the workflow cannot ask ------------------------------------


def test_an_answer_for_a_decision_the_workflow_cannot_ask_is_refused_before_the_run(
    tmp_path: Path,
) -> None:
    """`run -a other=yes`: exit 2 with one line naming the id and the workflow's decisions,
    and nothing happens; an id a templated gate can ask (`go-{{ item }}`) and phasegate's own
    (`budget`) are taken."""
    repo = setup(tmp_path / "repo", "gates", GATES)
    assert phasegate(repo, "new", "g1", "-w", "gates").returncode == 0
    journal = repo / "gitems" / "g1" / ".journal.jsonl"
    before = journal.read_text() if journal.exists() else ""
    refused = phasegate(repo, "run", "g1", "-a", "other=yes")
    assert refused.returncode == ExitCode.BAD_INPUT, refused.stderr
    (line,) = error_lines(refused.stderr)
    assert "--answer other=...: workflow 'gates' has no decision 'other'" in line, line
    assert "go-<item>" in line and "budget" in line
    assert (journal.read_text() if journal.exists() else "") == before
    taken = phasegate(repo, "run", "g1", "-a", "go-g1=yes", "-a", "budget=stop")
    assert taken.returncode == 0, taken.stderr
    assert json.loads(phasegate(repo, "status", "g1", "--json").stdout)["status"] == "completed"
