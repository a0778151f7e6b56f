"""Format gate for issue 9's ninth new incident set (bench/incidents-new9; n9r-*, n9a-* and n9b-* collected by g9r, g9a and g9b (ROCm), n9c-* by g9c).  The tests are
tests/incident_set_checks.py's, run on this set."""
from __future__ import annotations

import pytest

from incident_set_checks import *  # noqa: F401,F403  (the tests, collected here)
from incident_set_checks import GatheredSet


@pytest.fixture
def incident_set() -> GatheredSet:
    return GatheredSet("incidents-new9", "n9", earlier=("incidents-new", "incidents-new2", "incidents-new3", "incidents-new4", "incidents-new5", "incidents-new6", "incidents-new7", "incidents-new8"))


def test_second_rocm_collector_tag_a_takes_only_rocm_cases(incident_set, tmp_path):
    """The second ROCm collector (g9a, tag a): its cases are n9a-*, ROCm only, numbered apart from n9r-*."""
    from incident_set_checks import _ingest, _load

    ing = _ingest(incident_set)
    block = ("@@ {src} | {plat} | null | gpu-arch-unsupported | framework-build | likely\n--log\nRuntimeError: HIP error\n"
             "--detail\nthe wheel lacks kernels for this arch\n--fix\ninstall a wheel that has them\n")
    batch = tmp_path / "a.txt"
    batch.write_text(block.format(src="https://github.com/example/repo/issues/918171", plat="rocm")
                     + block.format(src="https://github.com/example/repo/issues/918172", plat="cuda"), encoding="utf-8")
    added, refused = ing.ingest([batch], "a", dest=tmp_path)
    assert sum(added.values()) == 1 and len(refused) == 1 and "takes only rocm" in refused[0], refused
    (p,) = [p for h in ("tuning", "frozen") for p in (tmp_path / h).glob("*.yaml")]
    assert p.stem.startswith("n9a-") and _load(p)["platform"] == "rocm"
