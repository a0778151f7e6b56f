"""Add collected incident cases to bench/incidents-new2 (issue 9's second batch), split by thread URL.

Usage:
    python3 bench/incidents-new2/ingest.py --tag r|c BATCH [...]    # r: h9gather's ROCm cases, c: h9gather2's everything else
    python3 bench/incidents-new2/ingest.py --stats [--write]        # count tables (--write: into README.md)

Ids: n2r-tNNNN / n2r-fNNNN (--tag r), n2c-tNNNN / n2c-fNNNN (--tag c).  Threads already used in
../shared/benchmarks/incidents/dev, bench/incidents-heldout, bench/incidents-new (both halves), in tests/fixtures or in this set are refused.  The batch format, split rule and refusals are
bench/incident_sets.py's (one implementation for every gathered set).  Nothing here runs gpuvet.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from incident_sets import BASE_DIRS, HALVES, IncidentSet, format_problem, halves_of, thread_key  # noqa: E402,F401

SET = IncidentSet(name="incidents-new2", prefix="n2", collectors={"r": "h9gather", "c": "h9gather2"},
                  earlier={**BASE_DIRS})
used_threads, cases_here, ingest, stats, write_stats, main = (
    SET.used_threads, SET.cases_here, SET.ingest, SET.stats, SET.write_stats, SET.main)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
