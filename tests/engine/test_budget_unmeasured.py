"""A USD cap over calls whose backend reports tokens but no cost (openai, codex, gemini
without ``pricing``) cannot measure them: ``run`` (once, as it starts) and ``doctor`` warn
so, and ``status`` shows those calls as not measured instead of a plain 0%. With
``pricing`` the calls are measured and nothing is said."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from review_loop_helpers import ITEM, make_repo, write_yaml

from cli_process import run_cli
from phasegate.testing import LoggedRequest, Reply, Script, StubLLMServer, Usage

KEY = "stub-provider-key-0123456789"

PLAN = "# Plan\n\nCount requests.\n\n## Tasks\n\n- [ ] T1 Add the limiter\n"
APPROVED = {"verdict": "APPROVED", "summary": "fine", "issues": []}
TASK_APPROVED = {"approved": True, "summary": "fine", "issues": []}


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(root, *args, env={"OPENAI_API_KEY": KEY})


def _repo(root: Path, stub: StubLLMServer, pricing: dict[str, float] | None) -> Path:
    """The review-loop example: the planner and the developer scripted (no cost), the
    critic and the reviewer on the openai backend (the stub), a $0.01 cap on the item."""
    agents: dict[str, Any] = {
        "planner": {"plan": [{"write": {"{item_dir}/plan.md": PLAN}, "text": "plan"}]},
        "developer": {
            "implement:T1": [
                {"write": {"src/t1.py": "X = 1\n", "{item_dir}/reports/T1.md": "# T1\n"}}
            ]
        },
    }
    make_repo(root, agents)
    openai: dict[str, Any] = {"backend": "openai", "model": "stub-chat-model"}
    config: dict[str, Any] = {
        "roles": {"default": {"backend": "scripted"}, "critic": openai, "reviewer": openai},
        "backends": {
            "scripted": {"script": ".phasegate/agents.yaml"},
            "openai": {"base_url": stub.openai_url, "max_retries": 0},
        },
        "budget": {"item": {"usd": 0.01}},
    }
    if pricing is not None:
        config["backends"]["openai"]["pricing"] = pricing
    write_yaml(root / ".phasegate" / "config.yaml", config)
    return root


def _stub() -> StubLLMServer:
    """Approves in the shape each reader asks for: the critic's verdict word, the task
    reviewer's ``approved``."""
    usage = Usage(input_tokens=250_000, output_tokens=25_000)

    def answer(request: LoggedRequest) -> Reply:
        schema = request.body.get("response_format", {}).get("json_schema", {}).get("schema")
        wanted = set((schema or {}).get("properties") or {})
        verdict = TASK_APPROVED if "approved" in wanted else APPROVED
        return Reply(structured=verdict, usage=usage)

    return StubLLMServer(Script(openai=[answer]))


def test_a_usd_cap_over_calls_without_a_cost_is_said_not_measured(tmp_path: Path) -> None:
    with _stub() as stub:
        root = _repo(tmp_path / "repo", stub, None)
        doctor = _cli(root, "doctor")
        done = _cli(root, "run", ITEM)
    assert done.returncode == 0, done.stderr
    for output in (doctor.stderr, done.stderr):
        warned = [line for line in output.splitlines() if "reports no cost" in line]
        assert len(warned) == 1, output  # once: the run says it as it starts
        assert "warning" in warned[0] and "budget item.usd" in warned[0], warned
        assert "openai" in warned[0] and "pricing" in warned[0], warned
        assert "critic" in warned[0] and "reviewer" in warned[0], warned
    # Said before the first call.
    assert done.stderr.index("reports no cost") < done.stderr.index("working on")

    status = json.loads(_cli(root, "status", ITEM, "--json").stdout)
    (cap,) = status["budget"]["caps"]
    assert cap["unit"] == "usd" and cap["spent"] == 0
    assert cap["unmeasured"] == 2  # the critic's call and the reviewer's
    assert status["budget"]["spent"]["uncosted"] == 2
    shown = _cli(root, "status", ITEM).stdout
    line = next(line for line in shown.splitlines() if line.strip().startswith("item: $"))
    assert "$0.00 + 2 calls without a cost of $0.0100" in line, shown
    assert "0%" not in line, line


def test_with_pricing_the_calls_are_measured_and_nothing_is_said(tmp_path: Path) -> None:
    with _stub() as stub:
        root = _repo(tmp_path / "repo", stub, {"input": 0.01, "output": 0.02})
        doctor = _cli(root, "doctor")
        done = _cli(root, "run", ITEM)
    assert done.returncode == 0, done.stderr
    assert "reports no cost" not in doctor.stderr + done.stderr
    status = json.loads(_cli(root, "status", ITEM, "--json").stdout)
    (cap,) = status["budget"]["caps"]
    assert cap["unmeasured"] == 0 and cap["spent"] > 0
    shown = _cli(root, "status", ITEM).stdout
    assert "without a cost" not in shown and "%" in shown
