"""Adapters that put phasegate inside other tools (Claude Code)."""
