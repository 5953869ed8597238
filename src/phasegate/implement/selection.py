"""Seed 004's ``selectReviewer``: review priorities from what a task changed, then the agent
whose description covers them best.

**Priorities.** The task's text (title, sub-items, ``review_focus``), the paths
of the files it changed and the lines it added are searched for the seed's
five concerns: authentication, authorization, encryption → *security*;
database, queries, migrations → *data integrity*; new patterns, architectural
changes → *architecture*; performance, caching, optimisation → *performance*;
APIs, contracts, interfaces → *integration*. ``review_focus`` areas come first.

**Scores.** Each agent (the implementer excluded) scores 6 for every focus
priority (what the plan asked for outweighs what was inferred) and 2 for every
other priority its name or description covers (1 more for each further word of
that expertise it uses, up to 2), and
2 for every specific word of the task (its title, sub-items, focus and file
names) that its description uses, 1 more when its name does (so a newly added
``the-ai-engineer`` wins an AI task without being named anywhere in code). The
highest score wins; ties go to the name first in order. With nothing to go by,
the architect (if there is one) reviews.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from phasegate.implement.agents import Agent

PRIORITIES: dict[str, str] = {
    "security": (
        r"\bauth\w*|\blogin|\bpasswords?\b|\bjwt\b|\btokens?\b|\boauth|\bsessions?\b|encrypt\w*"
        r"|\bcrypt\w*|\bsecrets?\b|\bpermissions?\b|\bcsrf\b|\bxss\b|\bsanitiz\w*|\bbcrypt\b"
    ),
    "data integrity": (
        r"\bdatabases?\b|\bdb\b|\bsql\b|\bquer(y|ies)\b|\bmigrations?\b|\bschemas?\b"
        r"|\btransactions?\b|\bindex(es)?\b|\borm\b|\btables?\b|\bconstraints?\b"
    ),
    "architecture": (
        r"\barchitect\w*|\bpatterns?\b|\brefactor\w*|\babstraction\w*|\blayers?\b"
        r"|\bmodules?\b|\bdependency injection\b|\bplugins?\b"
    ),
    "performance": (
        r"\bperformance\b|\bcach(e|es|ed|ing)\b|\boptimi[sz]\w*|\blatency\b|\bthroughput\b"
        r"|\bbenchmarks?\b|\bslow\b|\bscal(e|ing|ability)\b"
    ),
    "integration": (
        r"\bapis?\b|\bendpoints?\b|\bcontracts?\b|\binterfaces?\b|\bwebhooks?\b|\bgraphql\b"
        r"|\bgrpc\b|\bsdk\b|\bintegrat\w*"
    ),
}
_PRIORITY_PATTERNS = {k: re.compile(v, re.I) for k, v in PRIORITIES.items()}

#: What a reviewer's name or description says when it covers a priority.
EXPERTISE: dict[str, re.Pattern[str]] = {
    "security": re.compile(r"secur|vulnerab|threat|\bauth|crypt|complian|owasp|privacy", re.I),
    "data integrity": re.compile(
        r"\bdata\b|database|\bsql\b|schema|migration|integrity|consisten|\betl\b", re.I
    ),
    "architecture": re.compile(r"architect|design|pattern|scalab|\bsystem", re.I),
    "performance": re.compile(
        r"performance|reliab|latency|scalab|optimi|\bsre\b|observab|capacity", re.I
    ),
    "integration": re.compile(r"\bapis?\b|integration|contract|interface|protocol", re.I),
}
#: Focus words of PLAN.md's ``review_focus`` that name a priority.
FOCUS_WORDS: dict[str, str] = {
    "security": "security",
    "auth": "security",
    "authentication": "security",
    "data": "data integrity",
    "database": "data integrity",
    "patterns": "architecture",
    "architecture": "architecture",
    "design": "architecture",
    "performance": "performance",
    "scalability": "performance",
    "api": "integration",
    "integration": "integration",
    "interfaces": "integration",
}
#: Words too common to say what a task or an agent is about.
_GENERIC_WORDS = """
    a an the and or of to in on for with from by as is are be it its this that these
    those add adds added create creates update updates implement implements
    implementation make new use uses using file files code src lib test tests spec
    specs py js ts md txt json yaml yml feature features task tasks change changes
    basic simple support step steps main index init app module agent agents when need
    needs you your will can should read write run runs ensure include includes at who
    about under over into onto out up down all each every any some not no but if then
    so do does we our they them their was were has have had after before than also only
    one two very more most less just there here what which how why where while
"""
_GENERIC = frozenset(_GENERIC_WORDS.split())


@dataclass(frozen=True)
class ChangeAnalysis:
    """What a task changed, as the selector reads it."""

    priorities: tuple[str, ...]
    focus: tuple[str, ...]
    words: tuple[str, ...]
    files: tuple[str, ...] = ()
    evidence: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Ranked:
    """One candidate reviewer and its score."""

    agent: str
    score: int
    covers: tuple[str, ...]
    shared: tuple[str, ...]


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z0-9]+", text.lower()) if w not in _GENERIC]


def analyze_changes(
    task_text: str, review_focus: Sequence[str], files: Sequence[str], added: str
) -> ChangeAnalysis:
    """The review priorities and specific words of a task and what it changed."""
    paths = " ".join(re.sub(r"[/_.\-]+", " ", f) for f in files)
    signals = f"{task_text}\n{' '.join(review_focus)}\n{paths}\n{added}"
    evidence: dict[str, list[str]] = {}
    for name, pattern in _PRIORITY_PATTERNS.items():
        hits = sorted({m.group(0).lower() for m in pattern.finditer(signals)})
        if hits:
            evidence[name] = hits[:5]
    focus_priorities: list[str] = []
    for area in review_focus:
        for word in _words(area) or [area.lower()]:
            mapped = FOCUS_WORDS.get(word)
            if mapped and mapped not in focus_priorities:
                focus_priorities.append(mapped)
    ordered = [*focus_priorities, *(p for p in PRIORITIES if p in evidence)]
    words = list(dict.fromkeys(_words(f"{task_text} {' '.join(review_focus)} {paths}")))
    return ChangeAnalysis(
        priorities=tuple(dict.fromkeys(ordered)),
        focus=tuple(focus_priorities),
        words=tuple(words),
        files=tuple(files),
        evidence=evidence,
    )


def rank_reviewers(agents: Iterable[Agent], analysis: ChangeAnalysis) -> list[Ranked]:
    """Every candidate with its score, best first."""
    ranked: list[Ranked] = []
    for agent in agents:
        text = agent.expertise
        name_words = set(_words(agent.name.replace("-", " ")))
        own = set(_words(text))
        evidence = {
            p: {m.group(0).lower() for m in EXPERTISE[p].finditer(text)}
            for p in analysis.priorities
        }
        covers = tuple(p for p in analysis.priorities if evidence[p])
        shared = tuple(w for w in analysis.words if w in own)
        # More ways of saying it (reliability *and* latency) mean more of a specialist.
        score = sum(
            (6 if p in analysis.focus else 2) + min(len(evidence[p]) - 1, 2) for p in covers
        )
        score += sum(2 + (1 if w in name_words else 0) for w in shared)
        ranked.append(Ranked(agent.name, score, covers, shared))
    ranked.sort(key=lambda r: (-r.score, r.agent))
    return ranked


def reasoning(
    analysis: ChangeAnalysis, chosen: Ranked | None, agent: str, history: str = ""
) -> str:
    """Seed 004's sentence: given the changes, the concerns and the history, the agent and why."""
    changed = ", ".join(analysis.files[:5]) or "no changed files"
    concerns = ", ".join(analysis.priorities) or "no specific review priority"
    because = ", ".join(
        dict.fromkeys((*(chosen.covers if chosen else ()), *(chosen.shared if chosen else ())))
    )
    text = (
        f"Given that this task involved {changed}, and considering {concerns}"
        + (f", and noting {history}" if history else "")
        + f", the best agent to review this would be {agent}"
    )
    return text + (f" because of their expertise in {because}." if because else ".")
