"""A ``roles:`` entry of the config spelt like a role of the repository's workflows but
none of theirs (``reviwer``) binds nothing: the role meant stays on ``default``.
``doctor`` warns of it, naming the key and the role meant. An entry that is a role of
any workflow (implement's ``implementer`` too), an agent file's name, or a name close to
no role (an implement agent bound in the config) is not warned of."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cli_process import cli_in_process as cli


def doctor_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str], roles: str) -> list[str]:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".phasegate").mkdir()
    (root / ".phasegate" / "config.yaml").write_text(
        f"roles:\n  default: {{backend: auto}}\n{roles}"
    )
    agents = root / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewr.md").write_text("---\nname: reviewr\ndescription: x\n---\nReview.\n")
    code, _, err = cli(capsys, "doctor", "-C", str(root))
    assert code == 0, err
    return [
        line.removeprefix("phasegate: warning: ")
        for line in err.splitlines()
        if line.startswith("phasegate: warning: ")
    ]


def test_a_misspelt_role_is_named_with_the_role_meant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = doctor_warnings(tmp_path, capsys, "  reviwer: {backend: auto}\n")
    config = tmp_path / "repo" / ".phasegate" / "config.yaml"
    assert len(found) == 1, found
    assert found[0].startswith(f"{config}: roles.reviwer: no workflow has a role 'reviwer'")
    assert found[0].endswith("did you mean 'reviewer'?"), found[0]


def test_roles_of_any_workflow_agents_and_other_names_are_not_warned_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roles = (
        "  implementer: {backend: auto}\n"  # implement's
        "  chain-reviewer: {backend: auto}\n"  # feature's
        "  reviewr: {backend: auto}\n"  # an agent file's name
        "  the-developer: {backend: auto}\n"  # an implement agent bound in the config
    )
    assert doctor_warnings(tmp_path, capsys, roles) == []
