"""``NAME=value``, ``NAME: value`` and ``NAME = value`` whose name says it holds a
secret are redacted wherever phasegate writes them (a check's output included);
names that merely contain ``key`` or ``auth`` inside an ordinary word are not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import run_cli as _cli
from phasegate.redact import MASK, Redactor

# Built by concatenation so the test file itself holds no secret-looking literal.
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
SHORT_KEY = "Zq8vN3xL" + "p0Rt7Yw2"


@pytest.fixture
def redactor() -> Redactor:
    return Redactor(use_environ=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", f"AWS_SECRET_ACCESS_KEY={MASK}"),
        (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {MASK}"),
        (f"key={SHORT_KEY}", f"key={MASK}"),
        (f"KEY: {SHORT_KEY}", f"KEY: {MASK}"),
        (f"export GH_TOKEN={SHORT_KEY}", f"export GH_TOKEN={MASK}"),
        (f'"clientSecret": "{SHORT_KEY}"', f'"clientSecret": "{MASK}"'),
        (f"db.password = '{SHORT_KEY}'", f"db.password = '{MASK}'"),
        (f"DB_PASSWD={SHORT_KEY}", f"DB_PASSWD={MASK}"),
        (f"credentials: {SHORT_KEY}", f"credentials: {MASK}"),
        (f"OAUTH={SHORT_KEY}", f"OAUTH={MASK}"),
        (f"run --api-key={SHORT_KEY} now", f"run --api-key={MASK} now"),
        (f"secretKey: {SHORT_KEY}==", f"secretKey: {MASK}"),
    ],
)
def test_a_secret_named_assignment_is_masked(redactor: Redactor, text: str, expected: str) -> None:
    assert redactor.text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "keyboard = qwertyuiopasdf",
        "monkey=bananas-and-more",
        "author: JohnathanSmithers",
        "keys = 3",
        "token: 42",
        "password: hunter2",
        "see https://example.com/path/to/page and the key points below",
        "turkey: roasted-with-potatoes",
        # A variable's name says where a key is; it is not one.
        "credentials: ANTHROPIC_API_KEY",
        "api_key=OPENAI_API_KEY",
        # A path to a file: the change add-oauth's spec, not a secret.
        "add-oauth: changes/add-oauth/specs/session.md",
        "oauth=docs/auth/flows.md",
    ],
)
def test_ordinary_words_and_short_values_are_kept(redactor: Redactor, text: str) -> None:
    assert redactor.text(text) == text


CONFIG = """\
version: 1
roles:
  default: {backend: scripted}
backends:
  scripted: {script: .phasegate/agents.yaml}
"""

WORKFLOW = """\
name: envcheck
modes:
  standard: {max_iterations: 1}
roles:
  worker: {description: works}
nodes:
  - id: checks
    kind: check
    run: [{name: env-dump, run: "cat env.txt; exit 1"}]
    on: {pass: done, fail: broken}
  - id: done
    kind: end
  - id: broken
    kind: end
    status: blocked
    message: the environment check failed
"""


def test_secrets_a_check_prints_never_reach_the_items_files(tmp_path: Path) -> None:
    """The check's output is kept in the journal and the state: its secrets are masked."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / ".phasegate" / "workflows").mkdir(parents=True)
    (root / ".phasegate" / "config.yaml").write_text(CONFIG)
    (root / ".phasegate" / "agents.yaml").write_text("{}\n")
    (root / ".phasegate" / "workflows" / "envcheck.yaml").write_text(WORKFLOW)
    (root / "env.txt").write_text(
        f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nkey={SHORT_KEY}\n"
        f"aws_secret_access_key = {AWS_SECRET}\nkeyboard = qwertyuiopasdf\n"
    )
    created = _cli(root, "new", "e1", "--workflow", "envcheck", "--description", "x")
    assert created.returncode == 0, created.stderr
    done = _cli(root, "run", "e1")
    assert done.returncode == 4, done.stdout + done.stderr
    item = root / "work" / "e1"
    written = {name: (item / name).read_text() for name in (".journal.jsonl", ".engine.json")}
    for name, text in written.items():
        assert AWS_SECRET not in text, name
        assert SHORT_KEY not in text, name
        assert f"AWS_SECRET_ACCESS_KEY={MASK}" in text, name
        assert f"key={MASK}" in text, name
        assert "keyboard = qwertyuiopasdf" in text, name
    assert AWS_SECRET not in done.stdout + done.stderr
