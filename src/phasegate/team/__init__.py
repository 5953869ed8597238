"""The ``team`` workflow's plug-ins (seed 003): its state view, parsers, predicates, actions.

The workflow itself is data (``workflow/builtin/team.yaml``); what the seed
trusted an orchestrating model with (gates, routes, budgets, the Definition
of Done) is checked here in code, and the engine walks the graph.
"""
