"""A tiny sample project: a rate-limiting library (to be written by the agents)."""

__version__ = "0.1.0"
