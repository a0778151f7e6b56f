"""Format gate for issue 9's eighth new incident set (bench/incidents-new8; n8r-* and n8a-* collected by g8r and g8a (ROCm), n8c-* by g8c).  The tests are
tests/incident_set_checks.py's, run on this set."""
from __future__ import annotations

import pytest

from incident_set_checks import *  # noqa: F401,F403  (the tests, collected here)
from incident_set_checks import GatheredSet


@pytest.fixture
def incident_set() -> GatheredSet:
    return GatheredSet("incidents-new8", "n8", earlier=("incidents-new", "incidents-new2", "incidents-new3", "incidents-new4", "incidents-new5", "incidents-new6", "incidents-new7"))


def test_second_rocm_collector_tag_a_takes_only_rocm_cases(incident_set, tmp_path):
    """The second ROCm collector (g8a, tag a): its cases are n8a-*, ROCm only, numbered apart from n7r-*."""
    from incident_set_checks import _ingest, _load

    ing = _ingest(incident_set)
    block = ("@@ {src} | {plat} | null | gpu-arch-unsupported | framework-build | likely\n--log\nRuntimeError: HIP error\n"
             "--detail\nthe wheel lacks kernels for this arch\n--fix\ninstall a wheel that has them\n")
    batch = tmp_path / "a.txt"
    batch.write_text(block.format(src="https://github.com/example/repo/issues/818171", plat="rocm")
                     + block.format(src="https://github.com/example/repo/issues/818172", plat="cuda"), encoding="utf-8")
    added, refused = ing.ingest([batch], "a", dest=tmp_path)
    assert sum(added.values()) == 1 and len(refused) == 1 and "takes only rocm" in refused[0], refused
    (p,) = [p for h in ("tuning", "frozen") for p in (tmp_path / h).glob("*.yaml")]
    assert p.stem.startswith("n8a-") and _load(p)["platform"] == "rocm"
