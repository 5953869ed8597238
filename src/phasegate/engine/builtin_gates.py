"""The engine's own decisions: confirm a transition warning, handle a half-done phase.

They are asked through the same gate mechanism as a workflow's gates
(persisted pending before asking, answered before acting); the old flags
answer them: ``--yes`` is ``transition-warning=proceed``, ``--partial X`` is
``partial-phase=X``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from phasegate.engine.answers import ACTED, TRANSITION_WARNING, Question
from phasegate.engine.gates import ask
from phasegate.errors import WaitingForHuman

if TYPE_CHECKING:
    from phasegate.engine.run import Run

PARTIAL_PHASE = "partial-phase"
PARTIAL_CHOICES = ("continue", "fresh", "review")
#: A transition warning asks "Start X anyway?": yes and no are its answers too.
YES_NO = {"yes": "proceed", "y": "proceed", "no": "stop", "n": "stop"}
#: The state key holding, per decision withdrawn, the last visit it was asked at.
WITHDRAWN_VISITS = "withdrawn_visits"


def _visit(run: Run, decision: str, question: str) -> int:
    """The visit of ``decision`` to ask ``question`` at: the one on record while it waits
    for an answer to this very question, or holds one (``phasegate answer``) no run has
    acted on yet; a new visit otherwise (a new warning, or the answer was used)."""
    record = run.state.decisions.get(decision)
    if record is None:  # never asked, or withdrawn: visits go on from the last one asked
        return int((run.state.get(WITHDRAWN_VISITS) or {}).get(decision, 0)) + 1
    visit = int(record.get("visit", 0))
    status = record.get("status")
    if record.get("question") == question and (
        status == "pending" or (status == "answered" and not record.get(ACTED))
    ):
        return visit
    return visit + 1


def _acted(run: Run, decision: str) -> None:
    """The run acts on ``decision``'s answer: the next time it is met it is asked again."""
    record = run.state.decisions.get(decision)
    if record is not None:
        record[ACTED] = True


class Declined(WaitingForHuman):
    """A transition warning answered ``stop``: that answer declines this start only (the
    next run that meets the warning asks again)."""


def confirm_warning(run: Run, target: str, message: str) -> None:
    """A transition warning: proceed only when confirmed (``--yes``, a terminal, an answer);
    :class:`Declined` when the start was declined."""
    phase_flag = f" --phase {target}" if run.options.phase else ""
    how = f"phasegate run {run.item.name}{phase_flag} --yes"
    text = f"Warning: {message}. Start {target} anyway?"
    record = run.state.decisions.get(TRANSITION_WARNING)
    if (
        record is not None
        and record.get("status") == "answered"
        and not record.get(ACTED)
        and (record.get("answer") or {}).get("choice") != "proceed"
    ):
        # ``stop`` given with ``phasegate answer``: it declined the start that asked it.
        record[ACTED] = True
    question = Question(
        id=TRANSITION_WARNING,
        question=text,
        choices={"proceed": f"start {target}", "stop": "do not start it"},
        visit=_visit(run, TRANSITION_WARNING, text),
        aliases=YES_NO,
        unanswered_message=f"{message}: confirm by running again with --yes ({how})",
        context=target,
    )
    if run.options.yes:
        run.presets.setdefault(TRANSITION_WARNING, "proceed")
    try:
        answer = ask(run, question)
    except WaitingForHuman:
        raise WaitingForHuman(f"{message}: confirm by running again with --yes ({how})") from None
    _acted(run, TRANSITION_WARNING)
    if answer.choice != "proceed":
        run.save(durable=True)  # the next run that meets the warning asks again
        raise Declined(f"not starting {target}: declined; phasegate run {run.item.name} asks again")


def withdraw_warning(run: Run, target: str) -> None:
    """A transition warning still waiting (unanswered, or answered by ``phasegate answer``
    with no run acting on it yet) to start another node than ``target``, the one this run
    starts (``--phase``) or goes on from: the run goes on another way, so the warning no
    longer waits for anyone. It is journaled as withdrawn."""
    record = run.state.decisions.get(TRANSITION_WARNING)
    if record is None or record.get("context") == target:
        return
    status = record.get("status")
    if status != "pending" and not (status == "answered" and not record.get(ACTED)):
        return
    visit = int(record.get("visit", 0))
    del run.state.decisions[TRANSITION_WARNING]
    visits = dict(run.state.get(WITHDRAWN_VISITS) or {})
    visits[TRANSITION_WARNING] = visit
    run.state[WITHDRAWN_VISITS] = visits
    run.item.record(
        "decision.withdrawn",
        id=TRANSITION_WARNING,
        visit=visit,
        reason=f"the run went on from {target}, not starting {record.get('context')}",
    )
    run.save()


def partial_phase(run: Run, path: str, iteration: int, stage: str) -> str:
    """A phase started but not completed: continue (the default), start fresh, or review."""
    text = (
        f"Phase {run.label(path)} was started but not completed (iteration {iteration}, "
        f"at {_stage_words(stage)}). Continue, start fresh, or review what is there?"
    )
    question = Question(
        id=PARTIAL_PHASE,
        question=text,
        choices={
            "continue": "carry on where it stopped",
            "fresh": "start the phase again from its first iteration",
            "review": "send what is there to the reviewer",
        },
        visit=_visit(run, PARTIAL_PHASE, text),
        default="continue",
        context=path,
    )
    if run.options.partial is not None:
        run.presets.setdefault(PARTIAL_PHASE, run.options.partial)
    choice = ask(run, question).choice
    _acted(run, PARTIAL_PHASE)
    return choice


def _stage_words(stage: str) -> str:
    """Where in its iteration a phase stopped, in words (``review:0`` is the review)."""
    words = {"execute": "the executor's work", "checks": "the checks", "review": "the review"}
    return words.get(stage.split(":", 1)[0], stage)
