"""Format gate for issue 9's seventh new incident set (bench/incidents-new7; n7r-* and n7a-* collected by g7r and g7a (ROCm), n7c-* by g7c).  The tests are
tests/incident_set_checks.py's, run on this set."""
from __future__ import annotations

import pytest

from incident_set_checks import *  # noqa: F401,F403  (the tests, collected here)
from incident_set_checks import GatheredSet


@pytest.fixture
def incident_set() -> GatheredSet:
    return GatheredSet("incidents-new7", "n7", earlier=("incidents-new", "incidents-new2", "incidents-new3", "incidents-new4", "incidents-new5", "incidents-new6"))


def test_second_rocm_collector_tag_a_takes_only_rocm_cases(incident_set, tmp_path):
    """The second ROCm collector (g7a, tag a): its cases are n7a-*, ROCm only, numbered apart from n7r-*."""
    from incident_set_checks import _ingest, _load

    ing = _ingest(incident_set)
    block = ("@@ {src} | {plat} | null | gpu-arch-unsupported | framework-build | likely\n--log\nRuntimeError: HIP error\n"
             "--detail\nthe wheel lacks kernels for this arch\n--fix\ninstall a wheel that has them\n")
    batch = tmp_path / "a.txt"
    batch.write_text(block.format(src="https://github.com/example/repo/issues/717171", plat="rocm")
                     + block.format(src="https://github.com/example/repo/issues/717172", plat="cuda"), encoding="utf-8")
    added, refused = ing.ingest([batch], "a", dest=tmp_path)
    assert sum(added.values()) == 1 and len(refused) == 1 and "takes only rocm" in refused[0], refused
    (p,) = [p for h in ("tuning", "frozen") for p in (tmp_path / h).glob("*.yaml")]
    assert p.stem.startswith("n7a-") and _load(p)["platform"] == "rocm"
