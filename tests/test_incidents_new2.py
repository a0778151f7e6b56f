"""Format gate for issue 9's second new incident set (bench/incidents-new2; n2r-* collected by h9gather (ROCm), n2c-* by h9gather2).  The tests are
tests/incident_set_checks.py's, run on this set."""
from __future__ import annotations

import pytest

from incident_set_checks import *  # noqa: F401,F403  (the tests, collected here)
from incident_set_checks import GatheredSet


@pytest.fixture
def incident_set() -> GatheredSet:
    return GatheredSet("incidents-new2", "n2", earlier=("incidents-new",))
