"""Format gate for issue 9's sixth new incident set (bench/incidents-new6; n6r-* collected by g6r (ROCm), n6c-* by g6c).  The tests are
tests/incident_set_checks.py's, run on this set."""
from __future__ import annotations

import pytest

from incident_set_checks import *  # noqa: F401,F403  (the tests, collected here)
from incident_set_checks import GatheredSet


@pytest.fixture
def incident_set() -> GatheredSet:
    return GatheredSet("incidents-new6", "n6", earlier=("incidents-new", "incidents-new2", "incidents-new3", "incidents-new4", "incidents-new5"))
