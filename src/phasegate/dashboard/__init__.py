"""The web dashboard (``phasegate serve``) and what it shares with ``phasegate logs``.

:mod:`phasegate.dashboard.data` reads work items, journals, artifacts and
decisions; :mod:`phasegate.dashboard.events` turns journal events into lines;
:mod:`phasegate.dashboard.server` is the Starlette app and
:mod:`phasegate.dashboard.guard` decides who may use it (both imported only by
``serve``, so other commands do not pay for the web stack).
"""
