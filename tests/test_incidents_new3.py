"""Format gate for issue 9's third new incident set (bench/incidents-new3; n3r-* collected by g3r (ROCm), n3c-* by g3c).  The tests are
tests/incident_set_checks.py's, run on this set."""
from __future__ import annotations

import pytest

from incident_set_checks import *  # noqa: F401,F403  (the tests, collected here)
from incident_set_checks import GatheredSet


@pytest.fixture
def incident_set() -> GatheredSet:
    return GatheredSet("incidents-new3", "n3", earlier=("incidents-new", "incidents-new2"))
