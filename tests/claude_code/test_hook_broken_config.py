"""``phasegate hook session-start`` with a broken ``.phasegate/config.yaml``: the session is
told its config cannot be read, not that a workflow cannot."""

from __future__ import annotations

import json

from claude_code_helpers import cli

from phasegate.api import Repo


def test_a_broken_config_is_named_as_the_config_not_as_a_workflow(repo: Repo) -> None:
    config = repo.root / ".phasegate/config.yaml"
    config.parent.mkdir()
    config.write_text("roles:\n  default: {backend: auto}\n", encoding="utf-8")
    made = cli(repo.root, "new", "rate-limit", "--description", "Add rate limiting")
    assert made.returncode == 0, made.stderr
    config.write_text("roles: [\n", encoding="utf-8")
    payload = {"session_id": "s", "cwd": str(repo.root), "source": "startup"}
    done = cli(repo.root, "hook", "session-start", stdin=json.dumps(payload))
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "phasegate could not read its config: " in context
    assert "could not read a workflow" not in context
    assert f"{config}:2:1: invalid YAML" in context
