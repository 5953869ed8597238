"""Durable state: atomic files under a lock, and an append-only journal."""
