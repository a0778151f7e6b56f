"""The distributed case: collectives on every rank checked against closed-form values, nccl-tests' busbw,
a hang and a wrong rank becoming findings, and the misconfiguration findings.

The process-spawning tests (two gloo ranks on the CPU, real torch) are slow-marked; the rest exercise the
parent-side logic on result dicts shaped like the case's (the ranks' facts as the child records them).
"""
from __future__ import annotations

import importlib.util
import io
import os
import sys
import time
from pathlib import Path

import pytest

from gpuvet.cli.env import Environment
from gpuvet.model import Outcome
from gpuvet.validate import distributed as dist

CHILD = Path(__file__).resolve().parent.parent / "src" / "gpuvet" / "validate" / "child"
slow = pytest.mark.slow
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch in this interpreter")


def _child_module():
    sys.path.insert(0, str(CHILD))
    try:
        import cases_dist  # standard library only at import time

        return cases_dist
    finally:
        sys.path.remove(str(CHILD))


def test_sizes_and_bus_factors_are_nccl_tests():
    cd = _child_module()
    assert cd.GPU_SIZES[0] == 1024 and cd.GPU_SIZES[-1] == 1 << 30
    assert all(b == 4 * a for a, b in zip(cd.GPU_SIZES, cd.GPU_SIZES[1:]))
    f = {k: v(8) for k, v in cd.BUS_FACTOR.items()}
    assert f == {"all_reduce": 2 * 7 / 8, "all_gather": 7 / 8, "reduce_scatter": 7 / 8, "broadcast": 1.0}


def test_socket_ifname_semantics():
    names = ["eth0", "ib0", "lo"]
    assert dist.socket_ifname_unmatched("eth", names) == []  # prefix
    assert dist.socket_ifname_unmatched("=eth0", names) == []
    assert dist.socket_ifname_unmatched("=eth", names) == ["eth"]  # exact: no interface is called "eth"
    assert dist.socket_ifname_unmatched("bond0,enp", names) == ["bond0", "enp"]
    assert dist.socket_ifname_unmatched("nosuch,ib", names) == []  # one entry selecting something is enough
    assert dist.socket_ifname_unmatched("^docker,lo", names) == []
    assert dist.socket_ifname_unmatched("^e,i,l", names) == ["e", "i", "l"]  # everything excluded


def test_parse_topo_matrix_and_expected_bandwidth():
    # hand-written in the layout of `nvidia-smi topo -m` (not a capture): two NVLinked GPUs and a PCIe one
    text = ("\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\n"
            "GPU0\t X \tNV18\tSYS\t0-15\t0\n"
            "GPU1\tNV18\t X \tSYS\t0-15\t0\n"
            "GPU2\tSYS\tSYS\t X \t16-31\t1\n\nLegend:\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n")
    topo = dist.parse_nvidia_topo(text)
    assert topo["gpus"] == ["GPU0", "GPU1", "GPU2"]
    assert topo["links"]["GPU0-GPU1"] == "NV18" and topo["links"]["GPU2-GPU0"] == "SYS"
    assert dist.expected_busbw(topo, 2) == (18 * 25.0, "NV18 x 25 GB/s per link and direction")
    assert dist.expected_busbw(topo, 3)[0] is None  # a PCIe/SYS hop: no fixed expectation


def _gpu_rank(i, uuid, visible=None, count=2, p2p=None, **nccl):
    return {"pid": 100 + i, "host": "h", "CUDA_VISIBLE_DEVICES": visible, "device_count": count, "device": i % count,
            "uuid": uuid, "p2p": p2p or [[True] * count for _ in range(count)], "nccl_env": {"NCCL_NVLS_ENABLE": "0", **nccl}}


def _codes(fs):
    return [(f.code, f.title) for f in fs]


def test_misconfigurations_become_findings():
    topo = {"interfaces": ["eth0", "lo"], "gpus": ["GPU0", "GPU1"], "links": {"GPU0-GPU1": "NV18", "GPU1-GPU0": "NV18"}}
    clean = {"status": "ok", "info": {"backend": "nccl", "world_size": 2,
                                      "ranks": [_gpu_rank(0, "GPU-a"), _gpu_rank(1, "GPU-b")]}}
    assert dist.findings(clean, topo, {}) == []
    # two ranks on one GPU (the child saw the same UUID on both) and NCCL's refusal recorded
    shared = {"status": "unsupported", "info": {"backend": "nccl", "world_size": 2, "shared_gpu": True,
                                                "shared_gpu_error": "DistBackendError: Duplicate GPU detected",
                                                "ranks": [_gpu_rank(0, "GPU-a", count=1), _gpu_rank(1, "GPU-a", count=1)]}}
    fs = dist.findings(shared, {**topo, "gpus": ["GPU0"]}, {})
    assert [f.code for f in fs] == ["VAL013"] and "share one GPU" in fs[0].title and fs[0].outcome == Outcome.FAILED
    assert any("Duplicate GPU" in e.text for e in fs[0].evidence)
    # CUDA_VISIBLE_DEVICES hides GPUs: the ranks see 1 of the host's 2
    hidden = {"status": "ok", "info": {"backend": "nccl", "world_size": 2,
                                       "ranks": [_gpu_rank(0, "GPU-a", "0", 1), _gpu_rank(1, "GPU-b", "1", 1)]}}
    fs = dist.findings(hidden, topo, {})
    assert any("CUDA_VISIBLE_DEVICES hides" in f.title for f in fs)
    # P2P off between the pair, NCCL_P2P_DISABLE and NCCL_SHM_DISABLE set, an interface that does not exist
    p2p = [[True, False], [False, True]]
    bad = {"status": "ok", "info": {"backend": "nccl", "world_size": 2, "ranks": [
        _gpu_rank(0, "GPU-a", p2p=p2p, NCCL_P2P_DISABLE="1", NCCL_SHM_DISABLE="1", NCCL_SOCKET_IFNAME="bond9"),
        _gpu_rank(1, "GPU-b", p2p=p2p, NCCL_P2P_DISABLE="1", NCCL_SHM_DISABLE="1", NCCL_SOCKET_IFNAME="bond9")]}}
    titles = " | ".join(f.title for f in dist.findings(bad, topo, {}))
    for part in ("NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "NCCL_SOCKET_IFNAME=bond9", "P2P access is disabled"):
        assert part in titles


def test_bandwidth_far_below_the_links_is_flagged():
    topo = {"interfaces": ["lo"], "gpus": ["GPU0", "GPU1"], "links": {"GPU0-GPU1": "NV18", "GPU1-GPU0": "NV18"}}

    def res(busbw):
        return {"status": "ok", "info": {"backend": "nccl", "world_size": 2,
                                         "ranks": [_gpu_rank(0, "GPU-a"), _gpu_rank(1, "GPU-b")]},
                "tables": {"collectives": {"rows": [["all_reduce", 1 << 30, 1 << 28, 100, 1.0, busbw, busbw, 0]]}}}

    assert dist.findings(res(400.0), topo, {}) == []
    fs = dist.findings(res(60.0), topo, {})
    assert [f.code for f in fs] == ["VAL014"] and "60.0 GB/s" in fs[0].title


# ---------------------------------------------------------------------------------------------- real ranks
def _validate(params=None, environ=None, world=None):
    from gpuvet.app import validate as app

    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(),
                      environ=dict(environ if environ is not None else {"PATH": os.environ.get("PATH", "")}))
    opts = app.ValidateOptions(cases=("distributed",), device="cpu", save=False,
                               params={"distributed": dict(params or {})})
    report = app.run_validate(opts, env)
    case = report.extra["validate"]["cases"][0]
    return report, case


@slow
@needs_torch
def test_two_gloo_ranks_check_every_collective_and_report_busbw():
    report, case = _validate()
    assert case["status"] == "ok", case.get("error")
    assert case["info"]["backend"] == "gloo" and case["info"]["world_size"] == 2
    rows = case["tables"]["collectives"]["rows"]
    assert {r[0] for r in rows} == {"all_reduce", "all_gather", "reduce_scatter", "broadcast"}
    assert {r[1] for r in rows} == {1024, 16384, 262144}
    factor = {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5, "broadcast": 1.0}  # 2(n-1)/n, (n-1)/n
    for name, nbytes, _, iters, us, algbw, busbw, wrong in rows:
        assert wrong == 0 and iters == 3 and us > 0
        assert algbw == pytest.approx(nbytes / (us * 1e-6) / 1e9, rel=1e-2)
        assert busbw == pytest.approx(algbw * factor[name], rel=1e-2)
    assert {c["rank"] for c in case["checks"]} == {0, 1} and all(c["ok"] for c in case["checks"])
    assert len(case["info"]["ranks"]) == 2 and "interfaces" in report.extra["validate"]["distributed"]["topology"]
    assert [f.code for f in report.findings] == ["VAL003"] and not report.findings[0].failed


@slow
@needs_torch
def test_a_hung_rank_is_a_timeout_finding_and_every_rank_is_gone(tmp_path):
    t0 = time.monotonic()
    report, case = _validate({"inject_hang_rank": 1, "collective_timeout_s": 3, "pid_dir": str(tmp_path)})
    assert time.monotonic() - t0 < 60
    # the hung rank times out; its peer either times out too or sees the connection close when it exits
    assert case["status"] == "timeout" and case["ranks"][1]["status"] == "timeout"
    assert case["ranks"][0]["status"] in ("timeout", "error")
    f = report.findings[0]
    assert f.code == "VAL002" and f.failed
    text = " ".join(e.text for e in f.evidence)
    assert "hung in: all_reduce of 262144 B" in text and "did not finish within 3 s" in text
    assert any("NCCL_DEBUG=INFO" in x.text for x in f.fixes)
    pids = [int(p.read_text()) for p in tmp_path.glob("rank*.pid")]
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@slow
@needs_torch
def test_a_rank_returning_a_wrong_result_is_named(tmp_path):
    report, case = _validate({"inject_wrong_rank": 1, "pid_dir": str(tmp_path)},
                             environ={"PATH": os.environ.get("PATH", ""), "NCCL_SOCKET_IFNAME": "nosuch9"})
    assert case["status"] == "failed"
    bad = [c for c in case["checks"] if not c["ok"]]
    assert [(c["rank"], c["collective"], c["bytes"]) for c in bad] == [(1, "all_reduce", 1024)]
    assert "3 of 3 iterations wrong" in bad[0]["detail"]
    codes = [f.code for f in report.findings if f.failed]
    assert codes == ["VAL003", "VAL013"]
    assert "rank 1" in report.findings[0].evidence[0].text
    assert "NCCL_SOCKET_IFNAME=nosuch9" in report.findings[1].title
    for pid in (int(p.read_text()) for p in tmp_path.glob("rank*.pid")):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_merged_ranks_keep_what_hung_when_the_peer_failed_first():
    # CI at load: rank 1 timed out in all_reduce, rank 0 saw the connection close first (status error); the
    # merged case took info from rank 0 only and the VAL002 finding lost "hung in: all_reduce of 262144 B"
    from gpuvet.validate.runner import CaseSpec, _merge_ranks

    spec = CaseSpec(name="distributed", level="full", title="distributed", code="VAL003")
    rank0 = {"status": "error", "error": "RuntimeError: Connection closed by peer", "info": {"backend": "gloo"}}
    rank1 = {"status": "timeout", "error": "all_reduce of 262144 B did not finish within 3 s (rank 1)",
             "info": {"backend": "gloo", "hung": "all_reduce of 262144 B"}}
    merged = _merge_ranks(spec, [rank0, rank1])
    assert merged["status"] == "timeout" and merged["info"]["hung"] == "all_reduce of 262144 B"
    assert merged["info"]["backend"] == "gloo"
