"""Workflow definitions: data validated on load."""
