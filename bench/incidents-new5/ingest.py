"""Add collected incident cases to bench/incidents-new5 (issue 9's fifth batch, day 5), split by thread URL.

Usage:
    python3 bench/incidents-new5/ingest.py --tag r|c BATCH [...]    # r: g5r's ROCm cases, c: g5c's everything else
    python3 bench/incidents-new5/ingest.py --stats [--write]        # count tables (--write: into README.md)

Ids: n5r-tNNNN / n5r-fNNNN (--tag r), n5c-tNNNN / n5c-fNNNN (--tag c).  Threads already used in
../shared/benchmarks/incidents/dev, bench/incidents-heldout, bench/incidents-new, incidents-new2, incidents-new3 and incidents-new4
(both halves), in tests/fixtures or in this set are refused.  The batch format, split rule and refusals are
bench/incident_sets.py's (one implementation for every gathered set).  Nothing here runs gpuvet.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from incident_sets import BASE_DIRS, HALVES, IncidentSet, format_problem, halves_of, thread_key  # noqa: E402,F401

SET = IncidentSet(name="incidents-new5", prefix="n5", collectors={"r": "g5r", "c": "g5c"},
                  earlier={**BASE_DIRS, "incidents-new2": halves_of("incidents-new2"),
                           "incidents-new3": halves_of("incidents-new3"),
                           "incidents-new4": halves_of("incidents-new4")})
used_threads, cases_here, ingest, stats, write_stats, main = (
    SET.used_threads, SET.cases_here, SET.ingest, SET.stats, SET.write_stats, SET.main)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
