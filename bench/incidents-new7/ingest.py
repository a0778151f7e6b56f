"""Add collected incident cases to bench/incidents-new7 (issue 9's seventh batch, day 7), split by thread URL.

Usage:
    python3 bench/incidents-new7/ingest.py --tag r|c|a BATCH [...]  # r: g7r's ROCm cases, c: g7c's everything else, a: g7a's ROCm cases
    python3 bench/incidents-new7/ingest.py --stats [--write]        # count tables (--write: into README.md)

Ids: n7r-tNNNN / n7r-fNNNN (--tag r), n7c-tNNNN / n7c-fNNNN (--tag c), n7a-tNNNN / n7a-fNNNN (--tag a).  Threads already used in
../shared/benchmarks/incidents/dev, bench/incidents-heldout, bench/incidents-new, incidents-new2, incidents-new3, incidents-new4, incidents-new5 and incidents-new6
(both halves), in tests/fixtures or in this set are refused.  The batch format, split rule and refusals are
bench/incident_sets.py's (one implementation for every gathered set).  Nothing here runs gpuvet.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from incident_sets import BASE_DIRS, HALVES, IncidentSet, format_problem, halves_of, thread_key  # noqa: E402,F401

SET = IncidentSet(name="incidents-new7", prefix="n7", collectors={"r": "g7r", "c": "g7c", "a": "g7a"},
                  earlier={**BASE_DIRS, "incidents-new2": halves_of("incidents-new2"),
                           "incidents-new3": halves_of("incidents-new3"),
                           "incidents-new4": halves_of("incidents-new4"),
                           "incidents-new5": halves_of("incidents-new5"),
                           "incidents-new6": halves_of("incidents-new6")})
used_threads, cases_here, ingest, stats, write_stats, main = (
    SET.used_threads, SET.cases_here, SET.ingest, SET.stats, SET.write_stats, SET.main)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
