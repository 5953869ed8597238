"""A reviewer's prompt states the verdict schema only when its backend does not enforce it.

A backend that receives the schema itself (a ``--json-schema`` flag, a
``response_format``) is not also told it in the prompt: that would only add
tokens to every review. A backend that does not enforce it gets it in the
prompt, as the only place the model learns the shape of its answer. The
reviewer here is the openai backend against the stub, in JSON-schema mode and
in ``json_mode: none``; the executor is scripted.
"""

from __future__ import annotations

from pathlib import Path

from backend_helpers import APPROVE, VERDICT_SCHEMA, init_git_repo, openai_settings

from phasegate.agents.scripted import ScriptedBackend
from phasegate.api import Repo
from phasegate.config import Config
from phasegate.engine.runner import RunOptions
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer
from phasegate.verdicts.readers import schema_text

BRAINSTORM = {"executor": {"brainstorm": [{"write": {"{item_dir}/brainstorm.md": "# Ideas\n"}}]}}


def _review_request(tmp_path: Path, json_mode: str) -> LoggedRequest:
    """The chain reviewer's request of the feature workflow's brainstorm phase."""
    root = init_git_repo(tmp_path / "repo")
    with StubLLMServer(Script(openai=[lambda _: Reply.json(APPROVE)])) as stub:
        config = {
            "retries": {"agent": 0},
            "roles": {"default": {"backend": "openai"}},
            "backends": {"openai": openai_settings(stub, json_mode=json_mode)},
        }
        repo = Repo(root, Config.model_validate(config))
        repo.new("item", mode="hotfix", description="Add rate limiting")
        executor = ScriptedBackend(script=BRAINSTORM)
        outcome = repo.run(
            "item", backends={"executor": executor}, options=RunOptions(until="brainstorm")
        )
        (review,) = stub.model_requests("openai")
    assert outcome.status != "failed"
    assert "chain reviewer" in review.text  # the instructions are the system message
    return review


def test_schema_a_backend_enforces_is_not_restated_in_the_prompt(tmp_path: Path) -> None:
    """The backend hands the schema over as ``response_format``: no message has a "Your
    answer" section or a copy of the schema."""
    review = _review_request(tmp_path, "json_schema")
    assert review.body["response_format"]["json_schema"]["schema"] == VERDICT_SCHEMA
    assert "## Your answer" not in review.text
    assert '"approved"' not in review.text


def test_schema_stated_by_the_backend_is_not_stated_twice(tmp_path: Path) -> None:
    """``json_object`` mode holds the model to JSON only, so the backend states the schema
    (once, compact); the engine's prompt does not add its own copy."""
    review = _review_request(tmp_path, "json_object")
    assert review.body["response_format"] == {"type": "json_object"}
    assert "## Your answer" not in review.text
    assert review.text.count('"approved"') == 2  # the property and its "required" entry


def test_schema_a_backend_does_not_enforce_is_stated_in_the_prompt(tmp_path: Path) -> None:
    """Without JSON mode nothing holds the model to the schema: the prompt states it."""
    review = _review_request(tmp_path, "none")
    assert "response_format" not in review.body
    assert "## Your answer" in review.prompt
    assert schema_text(VERDICT_SCHEMA) in review.prompt
