"""The vocabulary fallback: a low-confidence reading when no signature and no fact applies."""
from gpuvet.app.diagnose import scan_text as scan
from gpuvet.logs.fallback import MAX_CONFIDENCE, error_lines_of, propose
from gpuvet.logs.match import Scanner
from gpuvet.logs.rank import blames_nothing, rank
from gpuvet.logs.extract import PREFILTER_PATTERNS
from gpuvet.logs.signatures import build_catalog


def top(lines):
    props = propose(error_lines_of(enumerate(lines, 1)))
    return props[0].cause if props else None


def test_layers_vocabulary():
    assert top(["ImportError: libhsa-runtime64.so.1: cannot open shared object file: No such file or directory"]) \
        == "runtime-mismatch"
    assert top(["[W] ProcessGroupNCCL watchdog caught collective operation timeout: WorkNCCL(SeqNum=12)"]) \
        == "collective-comm"
    assert top(["error: ptxas fatal   : Unsupported .version 8.5; current version is '8.4'"]) == "toolchain"
    assert top(["amdgpu 0000:03:00.0: amdgpu: GPU reset begin!", "RuntimeError: HIP error: unspecified launch failure"]) \
        == "hardware-fault"
    assert top(["RuntimeError: the installed NVIDIA driver is too old for this build (found 470)"]) == "driver-too-old"


def test_quiet_on_plain_text_and_on_oom():
    assert propose(error_lines_of(enumerate(["epoch 3 loss 0.21", "saving checkpoint"], 1))) == []
    # an OOM no allocator signature read is plain capacity: no vocabulary for it
    assert top(["RuntimeError: Cuda error: kernel_reduce_ccontig_node_0: out of memory."]) is None


def test_confidence_stays_low_and_last_lines_count_most():
    props = propose([(1, "warning: cuDNN not found, falling back"), (9, "fatal: NCCL error: unhandled system error")])
    assert props[0].cause == "collective-comm"
    assert all(p.confidence <= MAX_CONFIDENCE for p in props)




def test_rank_uses_fallback_only_when_nothing_else_applies():
    novel = "Traceback (most recent call last):\n  File \"x.py\", line 3\nOSError: libroctx64.so.4: cannot open shared object file: No such file or directory"
    sc = Scanner(build_catalog([], PREFILTER_PATTERNS))  # as if no signature knew this wording
    sc.feed_text(novel)
    d = rank(sc.result, learned=None)  # the vocabulary fallback alone (the learned model is tests/test_learned_fallback.py's)
    assert [x.cause for x in d][:1] == ["runtime-mismatch"] and d[0].signatures == ["fallback"]
    assert d[0].confidence <= MAX_CONFIDENCE and d[0].evidence[0]["line"] == 3
    assert [x.cause for x in rank(sc.result)][:1] == ["runtime-mismatch"]  # the shipped model, if it reads it, agrees
    # a user-code error: nothing is blamed, the fallback stays silent
    user = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)"
    assert blames_nothing(rank(scan(user)))
