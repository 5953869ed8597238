"""The agents a repository has: its ``.claude/agents/*.md`` files and its config roles.

An agent is a role resolved at run time, never a code change: a task's
``[`agent: the-developer`]`` names one, and the reviewer selector chooses among
all of them. Agent files are read again at every look-up, so a file added
while a plan is being implemented is usable at once, as implementer and as
reviewer. An agent's frontmatter ``name`` (else its file name) names it; its
``description`` (and the first paragraph of its body) says what it is good at.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from phasegate.config import Config
from phasegate.errors import BadInputError
from phasegate.yaml_errors import yaml_error_detail

AGENTS_DIR = Path(".claude") / "agents"


@dataclass(frozen=True)
class Agent:
    """One agent: its name, what it is good at, and the instructions of its file."""

    name: str
    description: str = ""
    instructions: str = ""
    source: str = "config"

    @property
    def expertise(self) -> str:
        """The text a reviewer is chosen by: name, description, the body's first paragraph."""
        first = self.instructions.strip().split("\n\n", 1)[0]
        return f"{self.name.replace('-', ' ')} {self.description} {first}"


@dataclass(frozen=True)
class AgentRoster:
    """The agents found, and the files that could not be read (``path:line: why``)."""

    agents: dict[str, Agent]
    problems: tuple[str, ...] = ()
    #: Config roles that bind a role of the workflow (``reviewer``...), not agents.
    bindings: tuple[str, ...] = ()

    def names(self) -> list[str]:
        return sorted(self.agents)

    def advice(self, names: Iterable[str]) -> str:
        """How to make the unknown agents ``names`` known: why a binding is not one."""
        bound = [n for n in dict.fromkeys(names) if n in self.bindings]
        why = "".join(
            f"; roles.{n} in .phasegate/config.yaml binds "
            + ("every role not listed" if n == "default" else f"the workflow's {n} role")
            + f", not an agent: name an agent file or another roles entry (e.g. the-{n})"
            for n in bound
        )
        return f"add {AGENTS_DIR}/NAME.md, or roles.NAME in .phasegate/config.yaml{why}"

    def get(self, name: str, where: str) -> Agent:
        """The agent ``name``; an unknown one stops (exit 2) naming the known ones."""
        found = self.agents.get(name)
        if found is None:
            known = ", ".join(self.names()) or "none"
            raise BadInputError(
                f"{where} names agent {name!r}, which is not known here (known agents: {known}; "
                f"{self.advice([name])})"
            )
        return found


def _frontmatter(text: str) -> tuple[dict[str, object], str, str | None]:
    """``(frontmatter, body, problem)`` of an agent file."""
    from ruamel.yaml import YAML

    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text, None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            head, body = "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
            try:
                data = YAML(typ="safe", pure=True).load(head)
            except Exception as exc:
                at, detail = yaml_error_detail(exc, first_line=2)  # line 1 is the ---
                line = f":{at}" if at is not None else ""
                return {}, body, f"{line}: invalid frontmatter: {detail}"
            if data is None:
                return {}, body, None
            if not isinstance(data, dict):
                return {}, body, ":1: the frontmatter is not a mapping"
            return data, body, None
    return {}, text, ":1: the frontmatter is not closed with ---"


def read_agent_file(path: Path, repo: Path) -> tuple[Agent | None, str | None]:
    """The agent of one file, or the problem (``path:line: why``) that stops it being read."""
    rel = path.relative_to(repo).as_posix() if path.is_relative_to(repo) else str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{rel}: cannot be read ({exc})"
    data, body, problem = _frontmatter(text)
    if problem is not None:
        return None, f"{rel}{problem}"
    name = data.get("name")
    description = data.get("description")
    agent = Agent(
        name=str(name).strip() if isinstance(name, str) and name.strip() else path.stem,
        description=" ".join(str(description).split()) if description else "",
        instructions=body.strip(),
        source=rel,
    )
    return agent, None


def find_agents(repo: Path, config: Config, workflow_roles: Iterable[str] = ()) -> AgentRoster:
    """Every agent of the repository: its agent files, then config roles not already found.

    Config roles named in ``workflow_roles`` (the roles of the workflow being run, such
    as ``implementer`` and ``reviewer``) and ``default`` are bindings, not agents.
    """
    agents: dict[str, Agent] = {}
    problems: list[str] = []
    folder = repo / AGENTS_DIR
    files = sorted(folder.rglob("*.md")) if folder.is_dir() else []
    for path in files:
        agent, problem = read_agent_file(path, repo)
        if problem is not None:
            problems.append(problem)
            continue
        assert agent is not None
        if agent.name in agents:
            problems.append(
                f"{agent.source}: agent {agent.name!r} is also defined in "
                f"{agents[agent.name].source}; the first one is used"
            )
            continue
        agents[agent.name] = agent
    skip = {"default", *workflow_roles}
    for name in config.roles:
        if name not in skip and name not in agents:
            agents[name] = Agent(name=name)
    bindings = tuple(n for n in config.roles if n in skip and n not in agents)
    return AgentRoster(agents, tuple(problems), bindings)
