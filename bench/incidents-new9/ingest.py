"""Add collected incident cases to bench/incidents-new9 (issue 9's ninth batch, day 9), split by thread URL.

Usage:
    python3 bench/incidents-new9/ingest.py --tag r|a|b|c|d BATCH [...]  # r, a, b: g9r, g9a, g9b (ROCm cases); c, d: g9c, g9d (everything else)
    python3 bench/incidents-new9/ingest.py --stats [--write]        # count tables (--write: into README.md)

Ids: n9<tag>-tNNNN / n9<tag>-fNNNN.  Threads already used in
../shared/benchmarks/incidents/dev, bench/incidents-heldout, bench/incidents-new and incidents-new2 ... incidents-new8
(both halves), in tests/fixtures or in this set are refused.  The batch format, split rule and refusals are
bench/incident_sets.py's (one implementation for every gathered set).  Nothing here runs gpuvet.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from incident_sets import BASE_DIRS, HALVES, IncidentSet, format_problem, halves_of, thread_key  # noqa: E402,F401

SET = IncidentSet(name="incidents-new9", prefix="n9", collectors={"r": "g9r", "a": "g9a", "b": "g9b", "c": "g9c", "d": "g9d"},
                  earlier={**BASE_DIRS, **{f"incidents-new{n}": halves_of(f"incidents-new{n}") for n in range(2, 9)}})
used_threads, cases_here, ingest, stats, write_stats, main = (
    SET.used_threads, SET.cases_here, SET.ingest, SET.stats, SET.write_stats, SET.main)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
