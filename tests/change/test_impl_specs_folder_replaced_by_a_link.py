"""An implementer that replaces the change's specs/ folder by a link to another folder
(the repository's root) does not have phasegate remove that folder's files as specs it
added: the link is removed and the challenged specs put back, the files it led to kept."""

from __future__ import annotations

import os
from pathlib import Path

from change_helpers import ChangeAgents, changes, plan_approved

from phasegate.agents.base import AgentRequest
from phasegate.agents.scripted import ScriptedReply

FOLDER = Path("changes/add-oauth")


class LinkingImplementer(ChangeAgents):
    """An implementer whose first call moves specs/ aside and links it to the root."""

    def __call__(self, request: AgentRequest) -> ScriptedReply | None:
        if request.role == "implementer" and not any(r == "implementer" for r, _ in self.steps):
            self.steps.append(("implementer", "link specs"))
            specs = self.repo / request.labels["item_dir"] / "specs"
            specs.rename(specs.with_name("moved-specs"))
            os.symlink(self.repo, specs)
            return ScriptedReply(write={"app/x.py": "X = 1\n"}, text="did it")
        return super().__call__(request)


def test_a_specs_folder_replaced_by_a_link_keeps_the_files_it_leads_to(repo: Path) -> None:
    plan_approved(repo)
    specs = repo / FOLDER / "specs"
    approved = {p.name: p.read_text() for p in specs.iterdir()}
    readme = (repo / "README.md").read_text()
    outcome = changes(repo).impl(
        "add-oauth", backends={"default": LinkingImplementer(repo).backend()}
    )
    assert outcome.status == "complete", outcome.message
    assert (repo / "README.md").read_text() == readme
    assert not specs.is_symlink()
    assert {p.name: p.read_text() for p in specs.iterdir()} == approved
