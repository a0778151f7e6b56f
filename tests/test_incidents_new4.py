"""Format gate for issue 9's fourth new incident set (bench/incidents-new4; n4r-* collected by g4r (ROCm), n4c-* by g4c).  The tests are
tests/incident_set_checks.py's, run on this set."""
from __future__ import annotations

import pytest

from incident_set_checks import *  # noqa: F401,F403  (the tests, collected here)
from incident_set_checks import GatheredSet


@pytest.fixture
def incident_set() -> GatheredSet:
    return GatheredSet("incidents-new4", "n4", earlier=("incidents-new", "incidents-new2", "incidents-new3"))
