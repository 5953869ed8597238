"""Benchmarks (``make bench``): orchestration cost per agent call, in both commit modes.

The loop of :mod:`loop` (phases of an executor and a reviewer that approves
on look 3: 30 zero-latency agent calls per item at 5 phases) runs on:

- phasegate ``every-step``: the path real agents take (agents slower than the
  coalescing window): the state is committed before every agent call;
- phasegate ``coalesced``: group commit, which only agents answering in
  under 0.25 s trigger;
- LangGraph with SqliteSaver in ``durability="sync"``, and DBOS on SQLite
  (both in the optional ``bench`` extra);
- ``floor``: the every-step path's file operations alone, without the engine
  (see :func:`loop.bench_floor`): the part of the ratio no code change reaches;
  and ``floor-journal``: the agent's artifact and the fsync'd journal alone,
  the least any engine keeping a durable record of each step in a file writes.

Rounds alternate between the engines so that load on a shared machine weighs
on all alike; each engine's median round is shown, and each ratio is the
median of the ratios within rounds. Goal: every-step at most 0.5x LangGraph.

Then the cost per call of the every-step path against the item's history:
5 against 200 phases, and 2 against 50 review iterations. Goal: flat.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from loop import Missing, measure

ROUNDS = 5
GOAL = 0.5
FLAT = 1.25
MODES = {"phasegate": "every-step", "phasegate-coalesced": "coalesced"}


def _rounds(engines: list[str], rounds: int) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    present = list(engines)
    for _ in range(rounds):
        for engine in list(present):
            try:
                found.setdefault(engine, []).append(measure(engine))
            except Missing:
                present.remove(engine)
                print(f"{engine}: not installed (pip install -e '.[bench]'); skipped")
    return found


def _ratio(found: dict[str, list[dict[str, Any]]], ours: str, theirs: str, key: str) -> float:
    pairs = zip(found[ours], found[theirs], strict=True)
    return statistics.median(a[key] / b[key] for a, b in pairs)


def compare(rounds: int) -> None:
    """Both phasegate modes against LangGraph and DBOS."""
    engines = ["phasegate", "phasegate-coalesced", "langgraph", "dbos", "floor", "floor-journal"]
    found = _rounds(engines, rounds)
    print(
        "Loop: 5 phases x approve on look 3 = 30 zero-latency agent calls per item, 10 items, "
        f"every step durable; median of {rounds} alternating rounds."
    )
    for engine, results in found.items():
        ordered = sorted(results, key=lambda r: r["ms_per_call"])
        mid = ordered[len(ordered) // 2]
        name = f"phasegate {MODES[engine]}" if engine in MODES else engine
        if engine == "floor":
            name = "file-system floor"
        elif engine == "floor-journal":
            name = "journal-only floor"
        print(
            f"{name:22}: {mid['ms_per_call']:7.3f} ms per call (CPU {mid['cpu_ms_per_call']:.3f}), "
            f"peak RSS {mid['peak_rss_mb']:.0f} MB, rounds "
            f"{[round(r['ms_per_call'], 2) for r in results]}"
        )
    for engine, mode in MODES.items():
        for anchor in ("langgraph", "dbos"):
            if anchor not in found:
                continue
            time_ratio = _ratio(found, engine, anchor, "ms_per_call")
            cpu_ratio = _ratio(found, engine, anchor, "cpu_ms_per_call")
            rss_ratio = _ratio(found, engine, anchor, "peak_rss_mb")
            print(
                f"ratio phasegate {mode}/{anchor}: time per call {time_ratio:.2f}, "
                f"CPU {cpu_ratio:.2f}, peak RSS {rss_ratio:.2f}"
            )
    if "langgraph" in found:
        floor = _ratio(found, "floor", "langgraph", "ms_per_call")
        left = (
            f"leaving {GOAL - floor:.2f}x for all of the engine's own work"
            if floor < GOAL
            else f"above the goal of {GOAL}x before any of the engine's own work"
        )
        print(
            "file-system floor of every-step (journal fsync, state and view files replaced): "
            f"{floor:.2f}x LangGraph, {left}"
        )
        record = _ratio(found, "floor-journal", "langgraph", "ms_per_call")
        print(
            "journal-only floor (the agent's artifact and the fsync'd journal, no state file): "
            f"{record:.2f}x LangGraph, leaving {GOAL - record:.2f}x for writing the state "
            "and all of the engine's own work"
        )
        ratio = _ratio(found, "phasegate", "langgraph", "ms_per_call")
        verdict = "met" if ratio <= GOAL else "MISSED"
        print(f"goal every-step <= {GOAL}x LangGraph (sync): {ratio:.2f}x {verdict}")


def flatness(rounds: int) -> None:
    """Cost per call of the every-step path as the item's history grows."""
    print("Every-step cost per call against the item's history (one item, median of rounds):")
    cases = {
        "5 phases": (5, 3, 4),
        "200 phases": (200, 3, 1),
        "2 iterations": (2, 2, 8),
        "50 iterations": (2, 50, 1),
    }
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in cases}
    for _ in range(max(1, rounds // 2)):
        for name, (phases, approve_on, items) in cases.items():
            found[name].append(measure("phasegate", phases, approve_on, items))
    mid = {
        name: statistics.median(r["ms_per_call"] for r in results)
        for name, results in found.items()
    }
    cpu = {
        name: statistics.median(r["cpu_ms_per_call"] for r in results)
        for name, results in found.items()
    }
    size = {name: results[-1]["state_bytes"] for name, results in found.items()}
    for small, large in (("5 phases", "200 phases"), ("2 iterations", "50 iterations")):
        ratio = mid[large] / mid[small]
        verdict = "flat" if ratio <= FLAT else "GROWS"
        print(
            f"  {small:12} {mid[small]:7.3f} ms (CPU {cpu[small]:.3f}), {large:13} "
            f"{mid[large]:7.3f} ms (CPU {cpu[large]:.3f}): {ratio:.2f}x "
            f"(CPU {cpu[large] / cpu[small]:.2f}x) {verdict}; state file at the end "
            f"{size[small]:,} and {size[large]:,} bytes"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    compare(args.rounds)
    flatness(args.rounds)


if __name__ == "__main__":
    main()
