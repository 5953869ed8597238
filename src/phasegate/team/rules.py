"""The rules seed 003 leaves to the Orchestrator's judgement, written down as code.

Each rule is a plain function of the session's files; the predicates of
:mod:`phasegate.team.predicates` apply them. The README's ``team`` section
states the same rules.
"""

from __future__ import annotations

import re
from collections import Counter

from phasegate.team.tasks import TeamTask

#: Words that ask for technology evaluation, codebase analysis or best-practice research.
RESEARCH_WORDS = re.compile(
    r"\b(research|evaluate|evaluation|compare|comparison|investigate|investigation|"
    r"best practices?|which (?:library|framework|tool|database)|spike|benchmark|"
    r"trade-?offs?|alternatives)\b",
    re.IGNORECASE,
)
#: Words that say a user interface is involved.
UI_WORDS = re.compile(
    r"\b(ui|ux|user interface|screens?|pages?|forms?|buttons?|layouts?|front-?end|css|html|"
    r"components?|modals?|dialogs?|widgets?|styles?heets?|responsive|accessibility|a11y)\b",
    re.IGNORECASE,
)
#: Risk flags that make a task's Security audit mandatory.
SECURITY_FLAGS = frozenset({"security", "auth", "input", "network"})
#: Words of a task's title or goal that mean it touches auth, input or the network.
SECURITY_WORDS = re.compile(
    r"\b(auth\w*|log ?in|logout|passwords?|tokens?|credentials?|sessions?|permissions?|"
    r"secrets?|crypt\w*|user input|uploads?|network|https?|sockets?|sql|injection|cookies?|"
    r"cors|csrf|xss)\b",
    re.IGNORECASE,
)
#: Risk flags that count as high risk for the review-strategy recommendation.
HIGH_RISK_FLAGS = frozenset({"security", "auth", "breaking-change"})
DOC_SUFFIXES = (".md", ".rst", ".txt", ".adoc")


def research_needed(description: str, spec: str) -> bool:
    """Researcher runs when the request or spec.md asks for evaluation or research, or the
    spec lists open questions."""
    if RESEARCH_WORDS.search(description) or RESEARCH_WORDS.search(spec):
        return True
    return bool(re.search(r"^#+\s*open questions\s*\n+\s*[-*\d]", spec, re.I | re.M))


def ui_involved(description: str, spec: str) -> bool:
    """Designer runs when the request or spec.md names a user interface."""
    return bool(UI_WORDS.search(description) or UI_WORDS.search(spec))


def _is_doc(path: str) -> bool:
    name = path.lower()
    return name.endswith(DOC_SUFFIXES) or name.startswith("docs/") or "/docs/" in name


def behaviour_task(task: TeamTask) -> bool:
    """QA tests a task unless it says ``qa: false`` or every file it names is documentation."""
    if task.qa is not None:
        return task.qa
    return not (task.files and all(_is_doc(f) for f in task.files))


def risky_task(task: TeamTask) -> bool:
    """Security audits a task whose risk_flags hold security, auth, input or network, or whose
    title or goal names authentication, credentials, user input or the network (``security:
    true|false`` in the task decides instead)."""
    if task.security is not None:
        return task.security
    if SECURITY_FLAGS & set(task.risk_flags):
        return True
    return bool(SECURITY_WORDS.search(f"{task.title} {task.goal}"))


def recommend_strategy(tasks: list[TeamTask]) -> tuple[str, str]:
    """``(choice, reason)``: per-batch for 5 or more tasks, cross-cutting dependencies (a task
    depending on two or more, or two or more depending on one) or high risk flags; otherwise
    single-final."""
    if len(tasks) >= 5:
        return "per-batch", f"{len(tasks)} tasks (5 or more)"
    depended = Counter(d for t in tasks for d in t.dependencies)
    wide = [t.id for t in tasks if len(t.dependencies) >= 2]
    wide += [tid for tid, n in depended.items() if n >= 2]
    if wide:
        return "per-batch", f"cross-cutting dependencies ({', '.join(sorted(set(wide)))})"
    risky = sorted({f for t in tasks for f in t.risk_flags} & HIGH_RISK_FLAGS)
    if risky:
        return "per-batch", f"high risk flags ({', '.join(risky)})"
    return "single-final", f"{len(tasks)} task(s), no cross-cutting dependencies, no high risk"


APPROVE_WORDS = re.compile(
    r"^(approved?|approve it|yes|y|ok|okay|lgtm|looks good|looks great|go ahead|ship it|"
    r"sounds good|fine|accept(?:ed)?|good)(?:[\s,.!]+(?:go ahead|thanks?|thank you|approved?|"
    r"lgtm|proceed))*[\s.!]*$",
    re.IGNORECASE,
)
CHANGE_WORDS = re.compile(
    r"\b(fix|change|changes|concerns?|but|however|except|instead|add|remove|rename|replace|"
    r"missing|wrong|should|must|needs?|please|don't|do not|update|move|split|drop)\b",
    re.IGNORECASE,
)
CANCEL_WORDS = re.compile(r"^(cancel|defer|later|stop|abort|postpone|not now)\b", re.IGNORECASE)


def classify_approval(raw: str) -> str:
    """A person's answer at APPROVE_DESIGN as ``approved``, ``changes-requested: <summary>``,
    ``cancel: <why>``, or unchanged (invalid: asked again)."""
    text = " ".join(raw.split())
    low = text.lower()
    head, sep, rest = text.partition(":")
    if re.fullmatch(r"changes?[- _]requested", head.strip(), re.IGNORECASE):
        return f"changes-requested: {rest.strip()}" if sep else "changes-requested"
    if re.fullmatch(r"approved?", head.strip(), re.IGNORECASE) and not CHANGE_WORDS.search(rest):
        return "approved"
    if CANCEL_WORDS.match(low):
        return _cancel(text)
    if APPROVE_WORDS.match(low):
        return "approved"
    if CHANGE_WORDS.search(low) and len(text.split()) >= 2:
        return f"changes-requested: {text}"
    return text


def classify_strategy(raw: str) -> str:
    """A person's answer at REVIEW_STRATEGY as ``per-batch``, ``single-final``, ``cancel``, or
    unchanged (invalid: asked again)."""
    low = " ".join(raw.lower().replace("_", "-").split())
    if re.fullmatch(r"per[- ]?batch|batch|per[- ]task|each task|after each (?:task|batch)", low):
        return "per-batch"
    if re.fullmatch(r"single[- ]?final|single|final|once|single final review|at the end", low):
        return "single-final"
    if CANCEL_WORDS.match(low):
        return _cancel(" ".join(raw.split()))
    return raw.strip()


def _cancel(text: str) -> str:
    match = CANCEL_WORDS.match(text)
    why = text[match.end() :].strip(" :,.") if match else ""
    return f"cancel: {why}" if why else "cancel"
