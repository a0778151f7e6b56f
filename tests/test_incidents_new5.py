"""Format gate for issue 9's fifth new incident set (bench/incidents-new5; n5r-* collected by g5r (ROCm), n5c-* by g5c).  The tests are
tests/incident_set_checks.py's, run on this set."""
from __future__ import annotations

import pytest

from incident_set_checks import *  # noqa: F401,F403  (the tests, collected here)
from incident_set_checks import GatheredSet


@pytest.fixture
def incident_set() -> GatheredSet:
    return GatheredSet("incidents-new5", "n5", earlier=("incidents-new", "incidents-new2", "incidents-new3", "incidents-new4"))
