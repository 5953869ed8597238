"""The ``implement`` workflow's plug-ins (seed 004): what is its own, not a second engine.

PLAN.md's phases and tasks (:mod:`.plan`) and the byte-exact checkbox writer
(:mod:`.checkboxes`), the agents a repository has (:mod:`.agents`), the reviewer
selection with its priorities, failure rates and pattern specialists
(:mod:`.selection`, :mod:`.patterns`), the context package of each task
(:mod:`.context`), the review-cycle record (:mod:`.cycles`) and its
``.the-startup/review-cycles.json`` state view (:mod:`.view`); the plug-in
objects are in :mod:`.plugins` and :mod:`.actions` (escalation included).
Loops, budgets, verdict reading, gates, timeouts and resume are the engine's.
"""
