"""The engine: run loop, review loop, checks and transitions (knows no particular workflow)."""
