"""The scripted backend: answers written in advance, keyed by role, phase and iteration."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from phasegate.agents.base import Access, AgentRequest, AgentResult, PromptPart
from phasegate.agents.scripted import ScriptedBackend, ScriptedReply
from phasegate.errors import ConfigError
from phasegate.verdicts import ReadContext
from phasegate.verdicts.readers import APPROVAL

ITEM_DIR = "docs/features/auth"


def request(
    workdir: Path,
    role: str = "executor",
    phase: str = "specify",
    iteration: int = 1,
    access: Access = Access.WRITE,
    **labels: str,
) -> AgentRequest:
    return AgentRequest(
        role=role,
        prompt=(PromptPart("Instructions", "Write the spec."),),
        workdir=workdir,
        access=access,
        labels={
            "phase": phase,
            "iteration": str(iteration),
            "item": "auth",
            "item_dir": ITEM_DIR,
            **labels,
        },
    )


def scripted(script: Mapping[str, Any]) -> ScriptedBackend:
    return ScriptedBackend(script=script)


REVIEW_SCRIPT: dict[str, Any] = {
    "chain-reviewer": {
        "specify": [
            {"text": "first", "verdict": {"approved": False, "summary": "Needs criteria"}},
            {"text": "second", "verdict": {"approved": False, "summary": "Still vague"}},
            {"text": "third", "verdict": {"approved": True, "summary": "Complete"}},
        ],
        "*": {"text": "any phase", "verdict": {"approved": True, "summary": "Fine"}},
    },
    "*": {"*": [{"text": "any role"}]},
}


@pytest.mark.parametrize(("iteration", "text"), [(1, "first"), (2, "second"), (3, "third")])
def test_replies_are_keyed_by_role_phase_and_iteration(
    tmp_path: Path, iteration: int, text: str
) -> None:
    """One reply per review iteration, so a resumed run gets the same answers."""
    req = request(tmp_path, "chain-reviewer", "specify", iteration, Access.READ_ONLY)
    assert scripted(REVIEW_SCRIPT).run(req).text == text


def test_last_reply_repeats_after_the_script_runs_out(tmp_path: Path) -> None:
    req = request(tmp_path, "chain-reviewer", "specify", 7, Access.READ_ONLY)
    result = scripted(REVIEW_SCRIPT).run(req)
    assert result.text == "third"
    assert result.structured == {"approved": True, "summary": "Complete"}


def test_star_phase_is_the_fallback_for_other_phases(tmp_path: Path) -> None:
    req = request(tmp_path, "chain-reviewer", "design", 1, Access.READ_ONLY)
    assert scripted(REVIEW_SCRIPT).run(req).text == "any phase"


def test_star_role_is_the_fallback_for_other_roles(tmp_path: Path) -> None:
    req = request(tmp_path, "final-reviewer", "implement", 1, Access.READ_ONLY)
    assert scripted(REVIEW_SCRIPT).run(req).text == "any role"


def test_write_lands_relative_to_workdir_with_item_dir_filled_in(tmp_path: Path) -> None:
    script = {
        "executor": {
            "specify": {"write": {"{item_dir}/spec.md": "# Spec of {item}\n"}, "text": "Wrote it."}
        }
    }
    result = scripted(script).run(request(tmp_path))
    assert result.ok, result.error
    written = tmp_path / ITEM_DIR / "spec.md"
    assert written.read_text(encoding="utf-8") == "# Spec of {item}\n"  # content is verbatim


def test_delete_removes_a_file_in_the_workdir(tmp_path: Path) -> None:
    stale = tmp_path / ITEM_DIR / "old.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("old", encoding="utf-8")
    result = scripted({"executor": {"*": {"delete": ["{item_dir}/old.md"]}}}).run(request(tmp_path))
    assert result.ok
    assert not stale.exists()


@pytest.mark.parametrize("path", ["../escaped.md", "{item_dir}/../../../../escaped.md"])
def test_write_outside_the_workdir_is_refused(tmp_path: Path, path: str) -> None:
    workdir = tmp_path / "repo"
    workdir.mkdir()
    result = scripted({"executor": {"*": {"write": {path: "x"}}}}).run(request(workdir))
    assert not result.ok
    assert "escapes the working directory" in (result.error or "")
    assert not (tmp_path / "escaped.md").exists()


def test_absolute_write_path_outside_the_workdir_is_refused(tmp_path: Path) -> None:
    workdir = tmp_path / "repo"
    workdir.mkdir()
    target = tmp_path / "abs.md"
    result = scripted({"executor": {"*": {"write": {str(target): "x"}}}}).run(request(workdir))
    assert not result.ok
    assert not target.exists()


def test_write_through_a_symlink_out_of_the_workdir_is_refused(tmp_path: Path) -> None:
    workdir = tmp_path / "repo"
    outside = tmp_path / "outside"
    workdir.mkdir()
    outside.mkdir()
    (workdir / "link").symlink_to(outside, target_is_directory=True)
    result = scripted({"executor": {"*": {"write": {"link/x.md": "x"}}}}).run(request(workdir))
    assert not result.ok
    assert not (outside / "x.md").exists()


def test_write_to_an_extra_dir_is_allowed(tmp_path: Path) -> None:
    """Directories the request grants (e.g. a worktree) count as inside."""
    workdir, extra = tmp_path / "repo", tmp_path / "worktree"
    workdir.mkdir()
    extra.mkdir()
    req = AgentRequest(
        role="executor",
        prompt=(),
        workdir=workdir,
        access=Access.WRITE,
        extra_dirs=(extra,),
        labels={"phase": "implement"},
    )
    result = scripted({"executor": {"*": {"write": {"../worktree/code.py": "pass\n"}}}}).run(req)
    assert result.ok, result.error
    assert (extra / "code.py").read_text(encoding="utf-8") == "pass\n"


def test_read_only_request_may_not_write(tmp_path: Path) -> None:
    """Reviewers are read-only: a scripted reviewer that writes is a failed call."""
    script = {"chain-reviewer": {"*": {"write": {"notes.md": "x"}, "verdict": {"approved": True}}}}
    req = request(tmp_path, "chain-reviewer", access=Access.READ_ONLY)
    result = scripted(script).run(req)
    assert not result.ok
    assert "read-only" in (result.error or "")
    assert result.structured is None
    assert not (tmp_path / "notes.md").exists()


def test_no_reply_is_an_error_result_never_an_approval(tmp_path: Path) -> None:
    """A missing reply fails the call; read as a verdict it does not approve."""
    req = request(tmp_path, "chain-reviewer", "design", access=Access.READ_ONLY)
    result = scripted({"executor": {"*": {"text": "x"}}}).run(req)
    assert not result.ok
    assert "no reply for role 'chain-reviewer' in phase 'design'" in (result.error or "")
    assert APPROVAL.read(result, ReadContext()).word != "APPROVED"


def test_empty_reply_list_is_no_reply(tmp_path: Path) -> None:
    result = scripted({"executor": {"specify": []}}).run(request(tmp_path))
    assert not result.ok


def test_fail_gives_an_error_result_with_its_exit_code(tmp_path: Path) -> None:
    script = {"executor": {"*": {"fail": {"exit": 3, "error": "rate limited"}}}}
    result = scripted(script).run(request(tmp_path))
    assert (result.ok, result.exit_status, result.error) == (False, 3, "rate limited")


def test_fail_as_a_plain_string_exits_1(tmp_path: Path) -> None:
    result = scripted({"executor": {"*": {"fail": "crashed"}}}).run(request(tmp_path))
    assert (result.exit_status, result.error) == (1, "crashed")


def test_a_reply_reports_the_cost_and_tokens_it_is_given(tmp_path: Path) -> None:
    """``cost_usd`` and ``usage`` stand in for what a real backend reports (a failed call's
    too), so budget caps can be tried without a model."""
    usage = {"input_tokens": 800, "output_tokens": 200, "cache_read_tokens": 5}
    script = {"executor": {"*": {"fail": "overloaded", "cost_usd": 0.25, "usage": usage}}}
    result = scripted(script).run(request(tmp_path))
    assert (result.ok, result.cost_usd) == (False, 0.25)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (800, 200)
    assert result.usage.cache_read_tokens == 5


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"cost_usd": -1}, "cost_usd must be a number of at least 0"),
        ({"cost_usd": "cheap"}, "cost_usd must be a number"),
        ({"usage": {"input_tokens": "many"}}, "usage.input_tokens must be a number"),
        ({"usage": {"prompt_tokens": 1}}, "unknown key(s) prompt_tokens in usage"),
        ({"usage": 5}, "usage must be a mapping"),
    ],
)
def test_a_bad_cost_or_usage_is_an_error_naming_it(
    tmp_path: Path, reply: dict[str, Any], message: str
) -> None:
    result = scripted({"executor": {"*": reply}}).run(request(tmp_path))
    assert not result.ok and message in (result.error or "")


def test_unknown_placeholder_in_a_path_is_an_error_result(tmp_path: Path) -> None:
    """A bad script fails the call; run() never raises for the agent's own failure."""
    result = scripted({"executor": {"*": {"write": {"{name}.md": "x"}}}}).run(request(tmp_path))
    assert not result.ok
    assert "unknown placeholder" in (result.error or "")


def test_unwritable_path_is_an_error_result(tmp_path: Path) -> None:
    (tmp_path / "spec.md").mkdir()
    result = scripted({"executor": {"*": {"write": {"spec.md": "x"}}}}).run(request(tmp_path))
    assert not result.ok


def test_script_file_is_loaded_relative_to_base_dir(tmp_path: Path) -> None:
    (tmp_path / "agents.yaml").write_text(
        "executor:\n"
        "  specify:\n"
        '    - write: {"{item_dir}/spec.md": "# Spec\\n"}\n'
        "      text: Wrote the spec.\n"
        "chain-reviewer:\n"
        '  "*":\n'
        "    - verdict: {approved: true, summary: Complete, issues: []}\n",
        encoding="utf-8",
    )
    backend = ScriptedBackend({"script": "agents.yaml", "base_dir": str(tmp_path)})
    assert backend.run(request(tmp_path)).text == "Wrote the spec."
    assert (tmp_path / ITEM_DIR / "spec.md").read_text(encoding="utf-8") == "# Spec\n"
    review = backend.run(request(tmp_path, "chain-reviewer", "design", access=Access.READ_ONLY))
    assert APPROVAL.read(review, ReadContext()).word == "APPROVED"


def test_unknown_key_in_a_script_reply_is_an_error_naming_it(tmp_path: Path) -> None:
    script = tmp_path / "agents.yaml"
    script.write_text("executor:\n  specify:\n    - txet: typo\n", encoding="utf-8")
    result = ScriptedBackend({"script": str(script)}).run(request(tmp_path))
    assert not result.ok
    assert str(script) in (result.error or "")
    assert "executor.specify[1]" in (result.error or "")
    assert "unknown key(s) txet" in (result.error or "")


def test_unknown_key_in_reply_mapping_raises_config_error() -> None:
    with pytest.raises(ConfigError, match=r"here: unknown key\(s\) bogus, wrte"):
        ScriptedReply.from_mapping({"text": "x", "wrte": {}, "bogus": 1}, "here")


def test_missing_script_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        ScriptedBackend({"script": str(tmp_path / "missing.yaml")})


def test_invalid_script_yaml_is_a_config_error(tmp_path: Path) -> None:
    script = tmp_path / "agents.yaml"
    script.write_text("executor: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        ScriptedBackend({"script": str(script)})
    assert str(refused.value).startswith(f"{script}:2:1: invalid YAML: ")


def test_duplicate_key_in_the_script_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    """Reported as a workflow file's would be, without the parser's own multi-line text."""
    script = tmp_path / "agents.yaml"
    script.write_text("executor:\n  draft: ok\nexecutor:\n  polish: ok\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        ScriptedBackend({"script": str(script)})
    assert str(refused.value) == (
        f'{script}:3:1: invalid YAML: found duplicate key "executor" '
        "(while constructing a mapping started on line 1)"
    )


def test_script_that_is_not_a_mapping_is_a_config_error(tmp_path: Path) -> None:
    script = tmp_path / "agents.yaml"
    script.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a mapping"):
        ScriptedBackend({"script": str(script)})


def test_backend_without_a_script_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="needs a script"):
        ScriptedBackend({})


def test_python_handler_answers_each_request(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []

    def handler(req: AgentRequest) -> ScriptedReply | None:
        seen.append((req.role, req.labels["phase"]))
        return ScriptedReply(text=f"{req.role} did {req.labels['phase']}", write={"out.md": "x"})

    result = ScriptedBackend(handler=handler).run(request(tmp_path, phase="design"))
    assert (result.ok, result.text) == (True, "executor did design")
    assert seen == [("executor", "design")]
    assert (tmp_path / "out.md").exists()


def test_python_handler_returning_none_is_an_error_result(tmp_path: Path) -> None:
    result = ScriptedBackend(handler=lambda req: None).run(request(tmp_path))
    assert not result.ok


def test_python_handler_that_raises_is_an_error_result(tmp_path: Path) -> None:
    def handler(req: AgentRequest) -> ScriptedReply | None:
        raise RuntimeError("boom")

    result = ScriptedBackend(handler=handler).run(request(tmp_path))
    assert not result.ok
    assert "boom" in (result.error or "")


def test_calls_are_logged_as_json_lines(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    backend = ScriptedBackend({"calls_log": str(log)}, script={"*": {"*": {"text": "ok"}}})
    backend.run(request(tmp_path, "executor", "specify", 1, attempt="a1"))
    backend.run(request(tmp_path, "chain-reviewer", "specify", 2, Access.READ_ONLY, attempt="a2"))
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert lines == [
        {"attempt": "a1", "item": "auth", "phase": "specify", "iteration": "1", "role": "executor"},
        {
            "attempt": "a2",
            "item": "auth",
            "phase": "specify",
            "iteration": "2",
            "role": "chain-reviewer",
        },
    ]


def test_json_key_is_structured_output_like_verdict(tmp_path: Path) -> None:
    result: AgentResult = scripted({"executor": {"*": {"json": {"k": [1, 2]}}}}).run(
        request(tmp_path)
    )
    assert result.structured == {"k": [1, 2]}


def test_role_without_the_phase_falls_back_to_the_any_role_entry(tmp_path: Path) -> None:
    """A role listed without the phase (and without "*") still gets the "*" role's reply."""
    backend = scripted(
        {
            "executor": {"design": [{"text": "design only"}]},
            "*": {"specify": [{"text": "any role, specify"}]},
        }
    )
    result = backend.run(request(tmp_path, role="executor", phase="specify"))
    assert result.ok and result.text == "any role, specify"
