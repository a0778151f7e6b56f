"""The last resort: when no signature and no fact explains an error, read the error lines for the
vocabulary of each layer of the stack and propose a low-confidence cause.

Signatures know exact messages; real logs keep inventing new wordings of the same few failures ("no
diagnosis" is the commonest miss on unseen incidents).  Every layer has its own vocabulary: loader
errors name ``lib*.so`` files, collectives name NCCL/RCCL, allocators talk about memory, the toolchain
names its compilers, architectures are spelled ``gfx90a``/``sm_90``.  This module scores the error
lines of a log against that vocabulary.  It only runs when nothing else applies and the text shows no
user-code error, and its confidence stays below any signature's.  Out-of-memory has no vocabulary
here on purpose: an OOM that no allocator signature reads (fragmentation, alloc-conf, oversubscription)
is most often plain capacity, the model or batch being too large, which is not a stack problem.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from .gate import LiteralGate

# An error line: what a failure prints, not a progress or info line.
ERROR_LINE = re.compile(
    r"(error|exception|fail(ed|ure)?|fatal|abort(ed)?|denied|cannot|can't|could not|unable to|invalid|"
    r"not (found|supported|available|compiled)|segmentation fault|core dumped|illegal|unsupported|"
    r"mismatch|incompatible|undefined symbol|no such file|killed|timed? ?out|hang|reset|fault|\bXid\b|\bmissing\b)", re.I)


_ERROR_GATE = LiteralGate(ERROR_LINE.pattern, ERROR_LINE.flags)


def error_line(text: str) -> bool:
    """ERROR_LINE.search, behind its literal gate (the case-insensitive alternation is slow on every line)."""
    return _ERROR_GATE(text) and ERROR_LINE.search(text) is not None


# Lines that look like errors but are fields of a tool's report or listing: collect_env / lscpu / nvidia-smi -q
# fields ("Vulnerability Tsx async abort:      Not affected", "Uncorrectable Error   : 0"), KEY=value lines,
# JSON members, section headings ("ECC Errors"), a passed check ("✓ EXT003 ... [error]"), ls of a path
# that is absent (the device-node signatures read those where they matter).
REPORT_LINE = re.compile(
    r"^\s*[A-Za-z][\w .()/#+,-]{0,60}?(?::\s{2,}|\s+:(?:\s|$))"
    r"|^\s*[A-Z][A-Z0-9_]*=|^\s*\"[^\"]{1,60}\":\s"
    r"|^\s*[A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*){1,3}\s*$"
    r"|^\s*[\u2713\u2714]\s|^\s*[-?]\s+[A-Z]{2,4}[0-9]{3}\s"
    r"|^ls: cannot access |^[^\n]*\u2502|^\s*\|.*\|\s*$")


def is_error_line(text: str) -> bool:
    return error_line(text) and not REPORT_LINE.match(text)


# A symptom told in prose: bug reports often describe the failure instead of pasting it ("ComfyUI is trying to
# detect an nVidia GPU", "the CPU version is installed instead", "ollama only uses the CPU after sleep", "stuck on
# ncclGroupEnd").  These lines are read (by the learned fallback only) when the text holds no error line at all.
# Matched case-sensitively against the lower-cased line: without IGNORECASE and without a leading \b the engine
# skips, in C, every position whose character cannot start a branch (a leading \b or re.I defeat that, and the
# alternation then costs ~4 us a character).
SYMPTOM_LINE = re.compile(
    r"(?:doesn'?t|does not|don'?t|didn'?t|won'?t|isn'?t|is not|are not|aren'?t|not|never|no longer) "
    r"(?:work|working|use|using|used|detect|detected|detecting|recogni[sz]e|recogni[sz]ed|see|seen|find|visible|"
    r"available|load|loaded|enumerated|persistent|released|updated?|present|utili[sz]ed|start|run|running)\b"
    r"|instead of\b|only (?:uses?|using|runs?|sees?|builds?|installs?)\b|falls? back\b|stuck\b|hangs?\b"
    r"|deadlocks?\b|freez|crash|broken\b|regression\b|quirk|clash"
    r"|trying to (?:detect|use|find|load)\b|wrong (?:version|build|gpu|device|library)\b|cpu version\b|\[(?:bug|issue)\]")
_SYMPTOM_GATE = LiteralGate(SYMPTOM_LINE.pattern)
_NEGATED = re.compile(r"(?:\bno known|\bwithout(?: a| any)?|\bnever) $")


def is_symptom_line(text: str) -> bool:
    low = text.lower()
    if not _SYMPTOM_GATE(low) or REPORT_LINE.match(text):
        return False
    for m in SYMPTOM_LINE.finditer(low):
        i = m.start()
        if _NEGATED.search(low, max(0, i - 12), i):  # "no known broken combination", "without a crash"
            continue
        if m.group(0).startswith("[") or i == 0 or not (low[i - 1].isalnum() or low[i - 1] == "_"):  # a word starts here
            return True
    return False


# (cause, component, weight, pattern): the vocabulary of each layer.  Weights: 1.0 names the layer
# unambiguously, 0.5 leans towards it.
_VOCAB_SPECS: list[tuple[str, str, float, str]] = [
    ("gpu-arch-unsupported", "framework-build", 1.0,
     r"\b(no kernel image|invalid device function|no (binary|code object|kernels?) (is )?(available )?for|"
     r"NoBinaryForGpu|not compatible with the current|unsupported (gpu|architecture|arch)|"
     r"compute capabilit(y|ies) .*(not|un)supported)"),
    ("gpu-arch-unsupported", "framework-build", 0.5, r"\b(gfx[0-9]{3,4}[a-f]?|sm_[0-9]{2,3}[af]?)\b"),
    ("driver-too-old", "driver", 1.0,
     r"\bdriver\b[^\n]{0,60}\b(too old|insufficient|older than|not (new|recent) enough|update your)|"
     r"InsufficientDriver|CUDA_ERROR_COMPAT_NOT_SUPPORTED|unsupported (ptx|toolchain) version"),
    ("driver-too-old", "driver", 0.5, r"\b(amdgpu|nvidia)\b[^\n]{0,40}\bdriver\b[^\n]{0,40}\bversion"),
    ("runtime-mismatch", "system-library", 1.0,
     r"\blib(cudart|cublas(Lt)?|cudnn\w*|cufft|curand|cusparse\w*|cusolver|nvrtc|nvJitLink|nccl|amdhip64|"
     r"hsa-runtime64|rocblas|MIOpen|hipblas(lt)?|rccl|rocsolver|hipfft|roctx64|nvToolsExt)[\w.]*\.so[\w.]*"
     r"[^\n]{0,80}(cannot open|not found|No such file|wrong ELF|version)|version `[^']+' not found"),
    ("runtime-mismatch", "system-library", 0.5,
     r"\b(cannot open shared object file|DLL load failed|dlopen|LD_LIBRARY_PATH|version mismatch)\b"),
    ("extension-abi", "extension", 1.0,
     # (the linker's own "ld: error: undefined symbol" is the build phase, below: not a loaded library's ABI; "ABI" as a
     # word: the vocabulary is case-insensitive, and "capability" or "__oclc_ABI_version" hold the letters)
     r"(?<!ld: error: )undefined symbol|\bABI\b|compiled (against|with|for) [^\n]{0,40}(torch|pytorch|CUDA|ROCm)|"
     r"built for [^\n]{0,40}(PyTorch|torch|CUDA)"),
    ("collective-comm", "runtime", 1.0, r"\b(NCCL|RCCL)\b|ProcessGroup(NCCL|Gloo)?|c10d|all_?reduce|rendezvous"),
    ("collective-comm", "runtime", 0.5, r"\b(collective|watchdog|barrier|init_process_group)\b"),
    ("math-library-unsupported", "runtime", 1.0,
     r"\b(CUBLAS|CUDNN|HIPBLAS(LT)?|ROCBLAS|MIOPEN|CUSOLVER|CUFFT|CUSPARSE|HIPFFT)_STATUS_\w+|"
     r"miopenStatus\w+|rocblas_status_\w+|hipblasLt error|rocBLAS error|hipBLAS error"),
    ("math-library-unsupported", "runtime", 0.5, r"\b(cuDNN|MIOpen|cuBLAS|rocBLAS|hipBLASLt|Tensile)\b"),
    ("kernel-cache-db", "config-env", 1.0,
     r"\b(MIOpen|miopen)\b[^\n]{0,80}\b(db|database|sqlite|user ?db|perf ?db|cache)\b|"
     r"\b(kernel|JIT|compile|triton|inductor) cache\b[^\n]{0,60}(corrupt|read-only|permission|lock|stale)"),
    ("toolchain", "toolchain", 1.0,
     r"\b(nvcc|hipcc|ptxas|nvlink|amdclang|hip-clang|ld\.lld)\b[^\n]{0,80}(error|fatal|fail|unsupported)|"
     r"unsupported GNU version|#error|error: command '[^']*(gcc|g\+\+|nvcc|hipcc|c\+\+)[^']*' failed|"
     r"(triton|inductor)[^\n]{0,60}(compil\w+ (error|fail)|CompilationError)"),
    ("toolchain", "toolchain", 0.5, r"\b(gcc|g\+\+|clang|ninja|cmake|setup\.py|build_ext|CUDA_HOME|ROCM_PATH)\b"),
    ("toolchain", "extension", 0.8, r"\b(build|compil\w*) (error|fail\w*)\b|\bDS_BUILD_\w+|\bop[_ ]builder\b|JIT (compil\w+|build) (of|for) "),
    ("hardware-fault", "hardware", 1.0,
     r"\bXid\b|\bECC\b|uncorrectable|fell off the bus|GPU (has )?(hung|hang|reset)|ring \w+ timeout|"
     r"MMU fault|page fault|memory access fault|\bthermal\b|power brake|PCIe? (bus )?error|AER"),
    ("device-access", "config-env", 1.0,
     r"/dev/(kfd|dri|nvidia\w*)|no (CUDA|HIP|ROCm)[- ]capable device|no (GPUs?|devices?) (were )?(found|available|detected)|"
     r"(render|video) group|(CUDA|HIP|ROCR)_VISIBLE_DEVICES"),
    ("device-access", "config-env", 0.5, r"\bpermission denied\b|\bWSL\b|--gpus|--device"),
    # the build phase, read from the structure of the output rather than a tool's name: a compiler's own
    # diagnostic (``file.cpp:12:5: error:``, the clang/gcc diagnostic format), CMake's and make's error
    # reports, and the C++ front end's error texts -- a failed compile is the toolchain's layer
    ("toolchain", "toolchain", 1.0,
     r"\.(?:c|cc|cpp|cxx|cu|cuh|hip|h|hh|hpp|inc)(?::[0-9]+){1,2}: (?:fatal )?error:|^\s*CMake Error\b|"
     r"\bmake(?:\[[0-9]+\])?: \*\*\*|\bninja: build stopped|\berror: (?:no matching function|no member named|"
     r"use of undeclared identifier|unknown type name|cannot initialize|too (?:few|many) arguments|"
     r"unknown target|invalid target ID)|\(Producer: 'LLVM[^']*' Reader: 'LLVM"
     # LLVM's linker's own diagnostics (lld links HIP device code): a link step of the build failed
     r"|^\s*(?:ld\.lld|lld): (?:fatal )?error:"),
    # ROCm's own tools and their libraries (profilers, tracers, debugger, graph compiler, validation suite,
    # SMI libraries, the OpenCL runtime's API errors, the Kubernetes device plugin): an error from one of
    # them that no signature knows is most often a release-specific defect of that component (``other``)
    ("other", "runtime", 1.0,
     r"\b(?:rocprof(?:v[23])?|roctracer|rocprofiler(?:-sdk)?|roctx|aqlprofile|omnitrace|omniperf|rocgdb|"
     r"amd-dbgapi|migraphx|MIGraphX|RVS-ERROR|rocm[-_]smi|rsmi_\w+|amdsmi\w*|amd-smi|libkfdwrapper64|"
     r"amdgpu-(?:node-labeller|device-plugin)|k8s-device-plugin)\b|\bclGet\w+\(-?[0-9]+\)|\bcl::Error\b"),
    ("cpu-only-build", "framework-build", 1.0,
     r"not compiled with (CUDA|ROCm|HIP|GPU)|\+cpu\b|CPU-only (build|version)|built without (CUDA|GPU)"),
]

MAX_CONFIDENCE = 0.45
_vocab: list[tuple[str, str, float, re.Pattern[str]]] | None = None


def vocab() -> list[tuple[str, str, float, re.Pattern[str]]]:
    """The vocabulary, compiled on first use: only a text no signature or fact explains reads it (~5% of the
    tuning cases), and compiling its case-insensitive alternations cost every process ~15 ms."""
    global _vocab
    if _vocab is None:
        _vocab = [(c, comp, w, re.compile(p, re.I)) for c, comp, w, p in _VOCAB_SPECS]
    return _vocab


@dataclass(frozen=True)
class Proposal:
    cause: str
    component: str
    confidence: float
    evidence: tuple[tuple[int, str], ...]  # (line number, text)
    terms: tuple[str, ...]


def propose(error_lines: Sequence[tuple[int, str]], limit: int = 3) -> list[Proposal]:
    """Score the error lines against the layers' vocabulary; the last error lines count most (the
    final exception is usually the one that matters)."""
    if not error_lines:
        return []
    n = len(error_lines)
    scores: dict[str, float] = {}
    comps: dict[str, str] = {}
    ev: dict[str, list[tuple[int, str]]] = {}
    terms: dict[str, list[str]] = {}
    for i, (lineno, text) in enumerate(error_lines):
        recency = 0.5 + 0.5 * (i + 1) / n
        seen_here: set[tuple[str, float]] = set()
        for cause, comp, weight, rx in vocab():
            m = rx.search(text)
            if not m or (cause, weight) in seen_here:
                continue
            seen_here.add((cause, weight))
            scores[cause] = scores.get(cause, 0.0) + weight * recency
            comps.setdefault(cause, comp)
            if len(ev.setdefault(cause, [])) < 3 and (lineno, text) not in ev[cause]:
                ev[cause].append((lineno, text[:300]))
            terms.setdefault(cause, []).append(m.group(0)[:60])
    if not scores:
        return []
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    best = ranked[0][1]
    out = []
    for cause, s in ranked[:limit]:
        if s < 0.5:  # one weak term on an early line is not a reading
            continue
        conf = min(MAX_CONFIDENCE, 0.2 + 0.1 * s) * (s / best) ** 0.5
        if conf < 0.21:
            continue
        out.append(Proposal(cause, comps[cause], round(conf, 3), tuple(ev[cause]),
                            tuple(dict.fromkeys(terms[cause]))[:4]))
    return out


def error_lines_of(lines: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    return [(n, t) for n, t in lines if is_error_line(t)]
