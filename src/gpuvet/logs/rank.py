"""Rank causes: join signature matches, context hints and check findings into diagnoses.

Scoring (all weights are data: signature ``weight``/``alternatives``/``resolve`` in signatures.yaml):

* each matched signature proposes its readings: the primary cause at its weight, the alternatives, and
  any ``resolve`` rule whose context hints are all present in the text (an AMD GPU, a CUDA build, a
  nightly version, a container, ...).  A rule that applies means the context settles the message, so
  the primary reading is discounted.
* a failed check finding (a fact: framework HIP 5.7 vs ROCm 5.6, gfx1010 not in the build's targets,
  a CPU-only build, a driver too old) proposes its cause.  When one of the matched signatures can mean
  that cause, the fact *explains the error* and gets a weight above any signature's; with no signature
  at all it stands on its own; otherwise it is context, ranked low.
* user-code signals (signatures with cause ``none``: an index assert, a shape mismatch) discount
  generic stack readings, so a plain user error blames nothing.
* per cause, contributions combine as a damped noisy-or; diagnoses under ``MIN_CONFIDENCE`` are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from gpuvet.model import Finding, Severity
from gpuvet.model.taxonomy import CAUSE_FIX

from .match import ScanResult
from .signatures import Signature

import re
from ..model.lazyre import lazy

MIN_CONFIDENCE = 0.2
GPU_WORDS = re.compile(r"cuda|CUDA|hip|HIP|gpu|GPU|device|nvidia|NVIDIA|rocm|ROCm|cudnn|nccl|driver", re.I)
FACT_EXPLAINS = {Severity.CRITICAL: 0.95, Severity.ERROR: 0.93, Severity.WARNING: 0.8, Severity.INFO: 0.0}
FACT_ALONE = {Severity.CRITICAL: 0.7, Severity.ERROR: 0.6, Severity.WARNING: 0.3, Severity.INFO: 0.0}
FACT_CONTEXT = {Severity.CRITICAL: 0.35, Severity.ERROR: 0.3, Severity.WARNING: 0.15, Severity.INFO: 0.0}
RESOLVED_DISCOUNT = 0.75  # primary reading of a signature whose context rule applied
USER_CODE_DISCOUNT = 0.35  # generic readings when the text shows a user-code error
USER_DATA_DECISIVE = 0.8  # a user-code signature this strong (not generic) also claims the workload-side symptoms
SECONDARY = 0.3  # damping of each further contribution to the same cause
GENERIC_DISCOUNT = 0.6  # a generic symptom adds little when a specific message is present
# Facts of a version skew under the whole stack (framework HIP vs system ROCm, a kernel driver older than
# the runtime): every library above them is built against one release and runs on another, so any error
# they raise (BLAS statuses, workspace allocations, MIOpen databases, memory faults, crashes) is explained
# by the skew -- unless a decisive message names a different cause.
SKEW_CAUSES = ("runtime-mismatch", "driver-too-old")
# user-code messages that are themselves a version comparison done wrong (LOG380: a CI gate comparing rocminfo's HSA API
# version with a ROCm release): the gate's failure is the gate's, but it says nothing about whether the versions really
# agree, so a version-skew fact in the same text keeps its own weight beside it
VERSION_GATE_SIGNATURES = frozenset({"LOG380"})
DECISIVE = 0.9
# words of the GPU stack's layers: a line naming none of them (a checkpoint, a dataset) is no stack error to guess at
STACK_WORDS = lazy(GPU_WORDS.pattern + r"|\b(?:roc|hip|miopen|rccl|amdgpu|kfd|hsa|gfx|tensile|cu[a-z]*|nvcc|ptx|sm_\d"
                         r"|triton|inductor|xformers|bitsandbytes|flash|vllm|jax|xla|tensorflow|onnx|tensorrt|llama|ggml"
                         r"|ollama|torch|deepspeed|apex|kernel|driver|lib\w+\.so|\.dll|compil|ninja|gcc|clang|nvml|amdgcn|wavefront"
                         r"|radeon|instinct|\bMI\d{3}|\bRX ?\d{3,4}|xtx|core dumped|docker|container|podman|\bgid\b|render|video)", re.I)
# ... and NVIDIA's GPUs by name (a separate, word-anchored pattern: each alternative more in STACK_WORDS costs every
# character of every line it reads)
NVIDIA_GPU_WORDS = lazy(r"\b(?:[RG]TX ?\d{3,4}(?:ti)?|geforce|quadro|tesla|[AHB]100|[HB]200)\b", re.I)


# Fix shown when a signature's alternative/contextual reading names another cause than its own: the
# taxonomy's generic fix of that cause (gpuvet.model.taxonomy).


@dataclass
class Contribution:
    weight: float
    component: str
    kind: str  # signature | context | fact | fallback | learned | tentative | honest (the `none` of _honest_none)
    ref: str  # signature id or check code
    reason: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    fix: str = ""
    fixes: list[dict[str, Any]] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    first_line: int = 10**12


@dataclass
class Diagnosis:
    cause: str
    component: str
    confidence: float
    title: str
    evidence: list[dict[str, Any]]
    facts: list[dict[str, Any]]
    fix: str
    fixes: list[dict[str, Any]]
    why: str
    signatures: list[str]
    checks: list[str]
    references: list[str]
    contributions: list[Contribution] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"cause": self.cause, "component": self.component, "confidence": round(self.confidence, 3),
                "title": self.title, "evidence": self.evidence, "facts": self.facts, "fix": self.fix,
                "fixes": self.fixes, "why": self.why, "signatures": self.signatures, "checks": self.checks,
                "references": self.references}


def _names_other_cause(sig: Signature, cause: str) -> bool:
    """A message a version skew does not explain away: a decisive one naming another cause, or the
    framework's own out-of-memory report (capacity, not a library failing) unless it can mean ``cause``."""
    if cause in _hyp_causes(sig):
        return False
    if sig.weight >= DECISIVE and not sig.generic:
        return True
    return sig.cause == "memory-allocator" and sig.component == "user-code" and not sig.generic


def _hyp_causes(sig: Signature) -> set[str]:
    return {sig.cause} | {a.cause for a in sig.alternatives} | {r.cause for r in sig.resolve}


def _readings_here(sig: Signature, hints: set[str]) -> set[str]:
    """The causes a signature can mean in this text: its own, its alternatives, and the context rules whose
    context is present (a rule for a container does not make a host's message mean the container's cause)."""
    return {sig.cause} | {a.cause for a in sig.alternatives if a.applies(hints)} | {
        r.cause for r in sig.resolve if r.applies(hints)}


# The learned fallback (logs/learned.py): where it may speak and how much its probability weighs.
# a reading's contribution is this times its probability ... and never more than this, below a fact that explains the
# error or a decisive signature.  (LOSO, 1,260 cases: a confident first reading shows 0.45 and is right 61% of the
# time, under-stated; at 0.75 / 0.6 it showed 0.57 and was right 64%, but it lifted more second readings of weak
# signatures to first: top-1 69.7% -> 69.5% with this session's features; bench/results/issue9-m11-learned.md)
LEARNED_WEIGHT = 0.6
LEARNED_CAP = 0.5
LEARNED_ANCHOR = 0.5  # the error lines' own tokens must carry this much weight for the reading
LEARNED_NEW_BELOW = 0.9  # a cause no signature or fact proposed stays below the best of their readings
LEARNED_READINGS = 3  # how many of a confident model's readings speak ...
LEARNED_FURTHER = 0.21  # ... the further ones at this weight (just over MIN_CONFIDENCE: they fill the top three) ...
LEARNED_FURTHER_MIN_P = 0.1  # ... and only when this likely
# nothing else proposes a cause and the model is under its abstain threshold: its likeliest readings, tentatively
LEARNED_TENTATIVE = True
LEARNED_TENTATIVE_WEIGHT = 0.3  # the first one's weight (MIN_CONFIDENCE 0.2 < this < any confident reading)
LEARNED_TENTATIVE_READINGS = 3
# the first (and every) tentative reading speaks from this probability (day 6: 0.2 -> 0.15; leave-one-set-out, 13 sets,
# 1,525 cases: top-1 70.1% -> 70.4%, top-3 79.2% -> 79.6%, `none` right 100/132 either way; new5/frozen 51.1/63.1% ->
# 52.5/66.0%, new5/tuning 62.1/73.4% -> 62.9/74.2%; at 0.1 the same gains and one `none` case more blamed;
# bench/results/issue9-m12-learned.md)
LEARNED_TENTATIVE_MIN_P = 0.15
LEARNED_TENTATIVE_MODE = "vocab-first"  # the vocabulary fallback's readings, when it has any, come first
LEARNED_TENTATIVE_ANCHOR = 0.25  # ... its first reading resting this much on the error lines' own words
LEARNED_TENTATIVE_PROSE = True  # ... and on an error line, not on prose that tells a symptom
LEARNED_TENTATIVE_STACK_WORDS = True  # ... and on lines that name the GPU stack ("Unable to load checkpoint" does not)
LEARNED_TENTATIVE_NONE_BELOW = 0.3  # ... unless the model thinks user code this likely
# ... and not when the exception that ended the run is the framework refusing the program's own data: an index,
# label or shape the program passed, checked by the framework before any GPU library runs.  Each pattern is the
# message as the upstream check prints it (the user-code signatures, LOG140-LOG142, hold the rest of the family;
# these are the wordings they do not match).  Day 7: the unsure model blamed two such errors on the stack in
# leave-one-set-out (heldout-0069, n7c-t0008), and no stack case's tentative reading ends in one
# (bench/results/issue9-m13-learned.md).
LEARNED_USER_DATA = lazy(
    # torch, aten/src/ATen/native/TensorAdvancedIndexing.cpp (check_indices_on_cpu_or_selfdevice)
    r"indices should be either on \w+ or on the same device as the indexed tensor"
    # TensorFlow, tensorflow/core/kernels/gather_op.cc (and the embedding lookups built on it)
    r"|\bindices(?:\[[0-9, ]*\])? = -?[0-9]+ is not in \[0, [0-9]+\)"
    # TensorFlow, tensorflow/core/kernels/sparse_xent_op.cc (Keras' sparse categorical cross-entropy)
    r"|Received a label value of -?[0-9]+ which is outside the valid range of \[0, [0-9]+\)"
    # torch, aten/src/ATen/InferSize.h (view / reshape)
    r"|shape '\[[-0-9, ]*\]' is invalid for input of size [0-9]+")
# Python's own errors about a missing value ("'NoneType' object has no attribute 'shape'", "... is not subscriptable",
# "object of type 'NoneType' has no len()"): a program's error by themselves.  The model learned them as `other` from a
# few library bugs whose tracebacks name the library (a DeepSpeed op builder on ROCm); with no stack word on any line
# it saw (the error lines and the traceback's frames), a confident reading of such a line is the token, not the
# stack, and it says nothing.
LEARNED_NONE_VALUE = lazy(r"'NoneType' object (?:has no attribute|is not (?:subscriptable|callable|iterable))"
                          r"|object of type 'NoneType' has no len\(\)")
# (Letting a confident model outrank weak signatures -- first place at p >= 0.8 / 0.9 -- cost 1.0 / 0.7 points of
# leave-one-set-out top-1 on 1,260 cases: where the rules' first reading is weak, it is right 505 times in 654 and the
# model's 387; bench/results/issue9-m11-learned.md.)
# Fewer than three causes named: the model's likeliest other readings fill the places after them, below every cause
# the rules, the vocabulary or the model's own confident reading named (they never reorder those, nor come first),
# also under a fact or a decisive signature.  Leave-one-set-out on 1,260 tuning cases: top-3 75.0% -> 78.2%
# (ROCm 64.7% -> 70.5%), top-1 and the `none` cases unchanged; at LEARNED_FILL_MIN_P 0.1, 77.1%.
LEARNED_FILL = True
LEARNED_FILL_DECISIVE = True  # ... under a fact or a decisive signature too (+0.4 points of the 3.2)
LEARNED_FILL_UPTO = 3
LEARNED_FILL_MIN_P = 0.02  # day 6: 0.05 -> 0.02, LOSO 1,525 cases top-3 79.6% -> 80.1% (new5/frozen 66.0 -> 67.4%,
# new5/tuning 74.2 -> 75.8%); a filled place never comes first, so top-1 and `none` cannot change (at 0: 80.9%, but a
# reading the model gives 1 chance in 100 is noise on the screen)
LEARNED_FILL_WEIGHT = 0.2  # = MIN_CONFIDENCE: the lowest confidence shown
# a filled place needs the context its cause needs: a regression of a pre-release build names one (LOSO: filled without
# a nightly or pre-release named, prerelease-regression was right 3 times in 37)
LEARNED_FILL_NEEDS = {"prerelease-regression": "prerelease"}


def _combined(weights: Sequence[float]) -> float:
    """A cause's confidence from its contributions' weights: a damped noisy-or, strongest first."""
    score = 0.0
    for i, w in enumerate(sorted(weights, reverse=True)):
        score = 1 - (1 - score) * (1 - (w if i == 0 else w * SECONDARY))
    return min(score, 0.99)


def _decisive(by_cause: dict[str, list[Contribution]], stack_sigs: Sequence[Signature]) -> bool:
    """A fact that explains the error, or a decisive specific signature: the learned model stays silent."""
    if any(s.weight >= DECISIVE and not s.generic for s in stack_sigs):
        return True
    return any(c.kind == "fact" and c.weight >= FACT_EXPLAINS[Severity.WARNING] for cs in by_cause.values() for c in cs)


def rank(scan: ScanResult, findings: Sequence[Finding] = (), min_confidence: float = MIN_CONFIDENCE,
         learned: Any = "shipped") -> list[Diagnosis]:
    """``learned``: the learned fallback's model (logs/learned.Model), ``"shipped"`` for the packaged one
    (loaded lazily, only when nothing decisive applies), or None to rank by signatures and facts alone."""
    hints = scan.hint_names
    if "dml-vulkan" in hints and "rocm-said" not in hints:
        # DirectML or Vulkan alone: no ROCm build, so no ROCm target list a context rule could read the GPU against
        hints = hints - {"amd-unlisted-arch"}
    by_cause: dict[str, list[Contribution]] = {}
    stack_sigs: list[Signature] = []
    user_code: list[Signature] = []
    for sid, ms in scan.matches.items():
        sig = ms[0].signature
        if sig.user_code and sig.generic and all(GPU_WORDS.search(m.text) for m in ms):
            continue  # a weak user-code signal whose message is about the GPU says nothing either way
        # a message whose context rule reads it as the user's own (cause none: "Torch not compiled with CUDA" from
        # someone who says the machine has no GPU) is a user-code signal here
        here_user = any(r.cause == "none" and r.applies(hints) for r in sig.resolve)
        # ... and a user-code message whose context rule names a stack cause (an invalid device ordinal under MIG,
        # where a process sees one instance whatever the launcher asks) is a stack message here
        here_stack = sig.user_code and any(r.cause != "none" and r.applies(hints) for r in sig.resolve)
        (user_code if (sig.user_code or here_user) and not here_stack else stack_sigs).append(sig)
    if any(not s.generic and s.weight >= USER_DATA_DECISIVE for s in user_code):
        # a decisive user-data error (an index or label out of range) is what failed first: the workload-side
        # symptoms CUDA reports after it (a cuBLAS handle that cannot be created, out of memory) are that failure
        # seen later, not a second, stack cause
        user_code += [s for s in stack_sigs if s.component == "user-code"]
        stack_sigs = [s for s in stack_sigs if s.component != "user-code"]
    only_generic = all(s.generic for s in stack_sigs)

    for sig in stack_sigs:
        ms = scan.matches[sig.id]
        ev = [{"line": m.line, "text": m.text, "signature": sig.id} for m in ms[:3]]
        resolved = [r for r in sig.resolve if r.applies(hints)]
        readings = [(sig.cause, sig.component, sig.weight * (RESOLVED_DISCOUNT if resolved else 1.0), "signature",
                     f"{sig.id} {sig.name}: {sig.title}")]
        readings += [(a.cause, a.component, a.weight, "signature",
                      f"{sig.id} can also mean {a.cause}" + (f" ({a.note})" if a.note else ""))
                     for a in sig.alternatives if a.applies(hints)]
        for r in resolved:
            ctx = [scan.hints[w] for w in r.when if not w.startswith("!") and w in scan.hints]
            shown = "; ".join(f"{h.name} (line {h.line})" for h in ctx) or "context"
            readings.append((r.cause, r.component, r.weight, "context",
                             f"{sig.id} in this context ({shown}) means {r.cause}" + (f": {r.note}" if r.note else "")))
            for h in ctx:
                ev.append({"line": h.line, "text": h.text, "hint": h.name})
        for cause, comp, w, kind, reason in readings:
            if cause == "none":
                continue
            fix_text = sig.fix if cause == sig.cause else CAUSE_FIX.get(cause, sig.fix)
            if user_code and sig.generic:
                w *= USER_CODE_DISCOUNT
            if sig.generic and not only_generic:
                w *= GENERIC_DISCOUNT
            by_cause.setdefault(cause, []).append(Contribution(
                w, comp, kind, sig.id, reason, list(ev), fix_text, [], [u for u in (sig.source, *sig.references) if u],
                scan.first_line.get(sig.id, 10**12)))

    related_causes: set[str] = set()
    for s in stack_sigs:
        related_causes |= _readings_here(s, hints)
    for f in findings:
        if not f.failed or f.acknowledged or f.cause in ("", "none"):
            continue
        skew_explains = (f.cause in SKEW_CAUSES and f.severity >= Severity.ERROR and stack_sigs
                         and not any(_names_other_cause(s, f.cause) for s in stack_sigs))
        if f.cause in related_causes or skew_explains:
            w, how = FACT_EXPLAINS[f.severity], "explains the error"
            if skew_explains and f.cause not in related_causes:
                how = ("explains the error: a version skew under the stack makes the libraries above it fail "
                       "in ways their own messages misattribute")
        elif not stack_sigs and f.severity < Severity.ERROR:
            # no error message at all (an empty log, a hang): a warning-level fact (a shadowed library
            # copy, a nightly) is not a diagnosis of a failure nothing describes
            continue
        elif not stack_sigs or only_generic:
            w, how = FACT_ALONE[f.severity], "stands on its own (no specific error message)"
            if user_code and not (f.cause in SKEW_CAUSES and all(u.id in VERSION_GATE_SIGNATURES for u in user_code)):
                w *= 0.3  # the text shows a user-code error: a stack fact alone does not explain it
        else:
            w, how = FACT_CONTEXT[f.severity], "is a problem, though not the one the error names"
        if w <= 0:
            continue
        ev = [{"text": e.text, "source": e.source, "check": f.code} for e in f.evidence[:4]]
        by_cause.setdefault(f.cause, []).append(Contribution(
            w, f.component or "", "fact", f.code, f"{f.code} {f.name}: {f.title} — this fact {how}", ev,
            f.fixes[0].text if f.fixes else "", [x.to_dict() for x in f.fixes], []))

    vc = vendor_contradiction(scan)
    # only a failure is explained: the contradiction needs an error (a signature, the other vendor's library or
    # device looked for, an error line, a symptom told in prose), never a listing or a test run that merely names
    # both vendors
    if vc is not None and not user_code and (stack_sigs or {"cuda-only-msg", "hip-only-msg", "cuda-build-said"} & hints or _has_error(scan)):
        reason, ctx = vc
        w = VENDOR_EXPLAINS if stack_sigs else VENDOR_ALONE
        ev = [{"line": h.line, "text": h.text, "hint": h.name} for h in ctx]
        by_cause.setdefault("wrong-vendor-build", []).append(Contribution(
            w, "framework-build", "fact", "BLD042", f"BLD042 wrong-vendor-build: {reason} — this fact explains the error",
            ev, CAUSE_FIX.get("wrong-vendor-build", ""), [], [VENDOR_SOURCE],
            min((h.line for h in ctx), default=10**12)))

    cb = cpu_build_on_gpu(scan)
    if cb is not None and not user_code and not by_cause.get("cpu-only-build") and (
            stack_sigs or "gpu-unused" in hints or _has_error(scan)):
        reason, ctx = cb
        w = VENDOR_EXPLAINS if stack_sigs else VENDOR_ALONE
        ev = [{"line": h.line, "text": h.text, "hint": h.name} for h in ctx]
        by_cause.setdefault("cpu-only-build", []).append(Contribution(
            w, "framework-build", "fact", "BLD041", f"BLD041 cpu-only-build: {reason} — this fact explains the error",
            ev, CAUSE_FIX.get("cpu-only-build", ""), [], [CPU_BUILD_SOURCE],
            min((h.line for h in ctx), default=10**12)))

    learned_said_none = False
    # the model explains an error: a text without one (a healthy report, a listing) gets no reading
    decisive = _decisive(by_cause, stack_sigs)
    if learned is not None and _has_error(scan) and not user_code and not decisive:
        learned_said_none = _learned(scan, findings, by_cause, learned)

    out: list[Diagnosis] = []
    for cause, cs in by_cause.items():
        cs.sort(key=lambda c: (-c.weight, c.first_line))
        score = _combined([c.weight for c in cs])
        if score < min_confidence:
            continue
        top = cs[0]
        evidence: list[dict[str, Any]] = []
        facts: list[dict[str, Any]] = []
        seen: set[tuple] = set()
        for c in cs:
            for e in c.evidence:
                key = (e.get("line"), e.get("text"))
                if key in seen:
                    continue
                seen.add(key)
                (facts if "check" in e else evidence).append(e)
        # the fix of this diagnosis's own cause and component: the strongest contribution's, else the
        # strongest one of the same component -- never another finding's that merely shares the cause
        same = [c for c in cs if c.component == top.component]
        fix = top.fix or next((c.fix for c in same if c.fix), "")
        fixes = top.fixes or (next((c.fixes for c in same if c.fixes and c.fix == fix), []) if fix else [])
        refs: list[str] = []
        for c in cs:
            for u in c.references:
                if u not in refs:
                    refs.append(u)
        out.append(Diagnosis(
            cause=cause, component=top.component, confidence=score, title=top.reason.split(" — ")[0],
            evidence=sorted(evidence, key=lambda e: e.get("line") or 0)[:8] + facts[:4], facts=facts[:8], fix=fix,
            fixes=fixes,
            why="", signatures=sorted({c.ref for c in cs if c.kind != "fact"}),
            checks=sorted({c.ref for c in cs if c.kind == "fact"}), references=refs[:5], contributions=cs))
    if not user_code and not learned_said_none:
        if not out:
            out = _fallback(scan)
        elif all(c.kind in ("tentative", "learned") for d in out for c in d.contributions):
            # only the model reads the error (confidently or not): the layer vocabulary, when the error lines use
            # its words, comes first (day 6: where the rules had only the vocabulary, a confident model reading
            # replaced it and lost 5 of its 31 right first places on the three newest sets; vocabulary first,
            # LOSO 1,612 cases: top-1 70.2 -> 70.3%, top-3 80.0 -> 80.2%, the newest three sets 60.5/70.5% ->
            # 61.4/71.3%, `none` unchanged; bench/results/issue9-m12-learned.md)
            out = _with_vocabulary(scan, out)
    if not user_code and not learned_said_none:
        out = _arch_prior(scan, out, follow=learned is None)
        out = _prerelease_prior(scan, out)
    out.sort(key=lambda d: (-d.confidence, min(c.first_line for c in d.contributions)))
    if (LEARNED_FILL and out and len(out) < LEARNED_FILL_UPTO and learned is not None and not user_code
            and not learned_said_none and (LEARNED_FILL_DECISIVE or not decisive) and _has_error(scan)):
        out += _learned_fill(scan, out, learned)
    if (HONEST_NONE and not out and learned is not None and _has_error(scan)
            and not any(not s.generic and s.weight >= USER_DATA_DECISIVE for s in user_code)):
        # (a decisive user-code message -- an index out of range, a CI gate comparing the wrong versions -- has settled
        # it: guesses after it would be noise; LOSO: 1 stack case of the 1,996 lost a third place)
        out = _honest_none(scan, learned)
    for i, d in enumerate(out):
        d.why = _why(d, out[:i] + out[i + 1:], i)
    return out


# A build of one vendor's stack named next to the other vendor's GPU hardware (and nothing of the GPU's own
# vendor's build): "a CUDA build on an AMD machine, a ROCm build on an NVIDIA machine" is the cause, whatever
# the error says (a CUDA library not found, no HIP GPU, a CUDA driver "too old" on a Radeon).  The build side is
# read from what only that build prints or installs (hints in logs/extract.py: cuda-build/rocm-build versions,
# the vendor's wheel index, a CUDA library or HIP device looked for); the hardware side from GPU names.
VENDOR_EXPLAINS = 0.82
VENDOR_ALONE = 0.6
VENDOR_SOURCE = "https://pytorch.org/get-started/locally/"
_CPU_LINE = re.compile(r"Ryzen|with Radeon Graphics|Model name|CPU", re.I)
# the GPU itself named (not a tool such as rocminfo, or /dev/kfd, that a text can name without the hardware)
_AMD_HW = re.compile(r"\bgfx[0-9]{3,4}|Radeon|Instinct|\bMI[1-3][0-9]{2}|\bRX ?[4-9][0-9]{2,3}|\bNavi|\bVega|\bPolaris"
                     r"|\bAMD (?:GPU|[Gg]raphics|[Cc]ard|video)", re.I)


def vendor_contradiction(scan: ScanResult) -> tuple[str, list[Any]] | None:
    """(what contradicts what, the hints that show it), or None."""
    hs = scan.hints
    if "zluda" in hs:  # ZLUDA runs CUDA builds on AMD GPUs on purpose
        return None
    amd_hw = [hs[k] for k in ("amd-gpu", "amd-gpu-said")
              if k in hs and _AMD_HW.search(hs[k].text) and not _CPU_LINE.search(hs[k].text)]
    nv_hw = "nvidia-gpu" in hs
    # the ROCm index asked for (or an AMD GPU named) and the wheel pip then fetched is PyPI's CUDA build: the
    # ROCm index had no wheel for that release / Python, or --extra-index-url let PyPI's higher version win
    if (amd_hw or "rocm-index" in hs) and not nv_hw and "rocm-build" not in hs and "pypi-cuda-wheel" in hs:
        return ("the text asks for an AMD (ROCm) build and the wheel pip fetched is PyPI's CUDA (NVIDIA) build",
                [(amd_hw or [hs["rocm-index"]])[0], hs["pypi-cuda-wheel"]])
    if amd_hw and not nv_hw and "rocm-build" not in hs and "rocm-index" not in hs:
        cuda = [hs[k] for k in ("cuda-build", "cuda-index", "cuda-only-msg", "cuda-build-said") if k in hs]
        if cuda:
            return "the text names an AMD GPU and a CUDA (NVIDIA) build of the stack, and no ROCm build", [amd_hw[0], cuda[0]]
    # the reporter says the machine is an AMD/ROCm one without naming the GPU model ("I installed ROCm", "for AMD",
    # "--amd"): the same contradiction, read from what only a CUDA build prints, installs or is said to be
    if "amd-said" in hs and not amd_hw and not nv_hw and "rocm-build" not in hs and "rocm-index" not in hs:
        cuda = [hs[k] for k in ("cuda-build", "cuda-only-msg", "cuda-build-said") if k in hs]
        if cuda:
            return ("the text says the machine is an AMD (ROCm) one and shows a CUDA (NVIDIA) build of the stack, and no "
                    "ROCm build", [hs["amd-said"], cuda[0]])
    if nv_hw and not amd_hw and "cuda-build" not in hs and "amd-gpu" not in hs:
        rocm = [hs[k] for k in ("rocm-build", "rocm-index", "hip-only-msg") if k in hs]
        if rocm:
            return "the text names an NVIDIA GPU and a ROCm (AMD) build of the stack, and no CUDA build", [hs["nvidia-gpu"], rocm[0]]
    return None


# A CPU-only build of torch shown or said ("torch 2.10.0+cpu", "falling back to CPU-only PyTorch", "the CPU version of
# torch") in a text that names a GPU (AMD or NVIDIA hardware, or an AMD/ROCm machine in words) and no GPU build: the
# build has no GPU back end at all, whatever the error says (BLD041's reading when the build and the GPU are facts).
# Not where the CPU build is the point: DirectML and ZLUDA set-ups run on a CPU torch, and a program asked for the CPU.
CPU_BUILD_SOURCE = "https://pytorch.org/get-started/locally/"


def cpu_build_on_gpu(scan: ScanResult) -> tuple[str, list[Any]] | None:
    """(what contradicts what, the hints that show it), or None."""
    hs = scan.hints
    cpu = [hs[k] for k in ("cpu-build", "cpu-build-said") if k in hs]
    if not cpu or {"rocm-build", "cuda-build", "zluda", "dml-vulkan", "cpu-device-asked", "no-gpu-stated"} & set(hs):
        return None
    gpu = [hs[k] for k in ("amd-gpu", "amd-gpu-said") if k in hs and _AMD_HW.search(hs[k].text)
           and not _CPU_LINE.search(hs[k].text)] + [hs[k] for k in ("nvidia-gpu", "amd-said") if k in hs]
    if not gpu:
        return None
    return "the text shows a CPU-only build of torch on a machine with a GPU, and no GPU build", [gpu[0], cpu[0]]


def _has_error(scan: ScanResult) -> bool:
    from .learned import reading_lines

    return bool(reading_lines(scan.error_lines, getattr(scan, "symptom_lines", ())))


def _model_features(scan: ScanResult, model: Any) -> tuple[Any, dict, list[tuple[int, str]]]:
    """The model (``"shipped"``: the packaged one, loaded lazily; None when it is absent), the features of the scan's
    error and symptom lines, and those symptom lines."""
    from . import learned as lm

    if model == "shipped":
        model = lm.load()
    if model is None:
        return None, {}, []
    symptoms = list(getattr(scan, "symptom_lines", ()))
    return model, lm.features(list(scan.error_lines), scan.hint_names, symptoms), symptoms


def _learned(scan: ScanResult, findings: Sequence[Finding], by_cause: dict[str, list[Contribution]],
             model: Any) -> bool:
    """Add the learned model's readings to ``by_cause``; True when its best reading is ``none`` (user code,
    confidently), which also silences the vocabulary fallback.  When signatures or facts already propose
    causes, a cause none of them proposed stays below the strongest of them: the model re-ranks the readings
    of a known message (and speaks freely where nothing else does), it does not overrule the context that
    settled one.  When nothing else proposes anything and the model is unsure, it still names its likeliest
    causes, tentatively (``LEARNED_TENTATIVE``): an error nobody reads is the commonest miss on unseen text."""
    from . import learned as lm

    model, feats, symptoms = _model_features(scan, model)
    if model is None:
        return False
    readings = model.read(feats, limit=4)
    if not readings:
        return False
    if readings[0].cause == "none":
        return readings[0].probability >= model.abstain
    err = lm.reading_lines(scan.error_lines, symptoms)
    confident = (readings[0].probability >= model.abstain and readings[0].anchor >= LEARNED_ANCHOR
                 and not (err and LEARNED_NONE_VALUE.search(err[-1][1])
                          and not any(STACK_WORDS.search(t) or NVIDIA_GPU_WORDS.search(t)
                                      for _n, t in [*scan.error_lines, *symptoms])))
    p_none = next((r.probability for r in readings if r.cause == "none"), 0.0)
    if confident:
        speak = [(r, min(LEARNED_CAP, LEARNED_WEIGHT * r.probability) if i == 0 else LEARNED_FURTHER)
                 for i, r in enumerate(readings[:LEARNED_READINGS])
                 if r.cause != "none" and (i == 0 or r.probability >= LEARNED_FURTHER_MIN_P)]
        tentative = False
    elif (not by_cause and LEARNED_TENTATIVE and p_none < LEARNED_TENTATIVE_NONE_BELOW
          and readings[0].anchor >= LEARNED_TENTATIVE_ANCHOR
          and not (err and LEARNED_USER_DATA.search(err[-1][1]))
          and (LEARNED_TENTATIVE_PROSE or lm.model_lines(scan.error_lines))
          and (not LEARNED_TENTATIVE_STACK_WORDS
               or any(STACK_WORDS.search(t) or NVIDIA_GPU_WORDS.search(t) for _n, t in err))):
        # nothing else reads this error: the likeliest causes, each below any confident reading
        top_p = readings[0].probability
        speak = [(r, LEARNED_TENTATIVE_WEIGHT * (r.probability / top_p) ** 0.5)
                 for r in readings[:LEARNED_TENTATIVE_READINGS]
                 if r.cause != "none" and r.probability >= LEARNED_TENTATIVE_MIN_P]
        tentative = True
    else:
        return False  # unsure, or sure only from the context (an AMD GPU, a nightly) and not the error lines
    best_other = max((c.weight for cs in by_cause.values() for c in cs), default=0.0)
    best_fact = max((_combined([c.weight for c in cs]) for cs in by_cause.values() if any(c.kind == "fact" for c in cs)),
                    default=0.0)
    for r, w in speak:
        words = [t.split(":", 1)[-1].replace("#", "") for t in r.terms]
        ev_lines = [(n, t) for n, t in err if any(w and w in t.lower() for w in words)][-3:] or err[-1:]
        ev = [{"line": n, "text": t[:300], "signature": "learned"} for n, t in ev_lines]
        comp = model.components.get(r.cause, "")
        if r.cause not in by_cause and best_other:
            w = min(w, LEARNED_NEW_BELOW * best_other)
        if best_fact and not any(c.kind == "fact" for c in by_cause.get(r.cause, ())):
            # never lifts a cause above a fact (one that stands alone, or is context): at most just under it
            w = _below(w, [c.weight for c in by_cause.get(r.cause, ())], best_fact - 0.01)
            if w <= 0:
                continue
        terms = _shown_terms(r.terms) or "context"
        reason = (f"learned fallback, low confidence: no known message matched; the error lines' words lean towards "
                  f"{r.cause} (p={r.probability:.2f}; {terms})" if tentative else
                  f"learned fallback: the error lines read as {r.cause} (p={r.probability:.2f}; {terms})")
        by_cause.setdefault(r.cause, []).append(Contribution(
            w, comp, "tentative" if tentative else "learned", "learned", reason, ev, CAUSE_FIX.get(r.cause, ""),
            first_line=ev_lines[0][0] if ev_lines else 10**12))
    return False


def _below(w: float, others: Sequence[float], ceiling: float) -> float:
    """The largest weight <= ``w`` that, added to a cause's ``others``, keeps its confidence under ``ceiling``
    (0 when its others alone reach it)."""
    if _combined([*others, w]) <= ceiling:
        return w
    lo, hi = 0.0, w
    for _ in range(20):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _combined([*others, mid]) <= ceiling else (lo, mid)
    return lo if lo > 0.005 else 0.0


def _learned_fill(scan: ScanResult, named: list[Diagnosis], model: Any) -> list[Diagnosis]:
    """The model's likeliest readings of causes not yet named, to follow the named ones (never above them: their
    confidence is ``LEARNED_FILL_WEIGHT`` at most, and under the weakest named one), up to ``LEARNED_FILL_UPTO``
    causes in all."""
    from . import learned as lm

    model, feats, symptoms = _model_features(scan, model)
    if model is None:
        return []
    have = {d.cause for d in named}
    floor = min(d.confidence for d in named)
    err = lm.reading_lines(scan.error_lines, symptoms)
    out: list[Diagnosis] = []
    for r in model.read(feats, limit=LEARNED_FILL_UPTO + 2):
        if len(named) + len(out) >= LEARNED_FILL_UPTO:
            break
        if r.cause in have or r.cause == "none" or r.probability < LEARNED_FILL_MIN_P:
            continue
        if LEARNED_FILL_NEEDS.get(r.cause, "") not in ("", *scan.hints):
            continue
        w = min(LEARNED_FILL_WEIGHT, floor - 0.001 * (len(out) + 1))
        if w < MIN_CONFIDENCE - 1e-9:
            break
        words = [t.split(":", 1)[-1].replace("#", "") for t in r.terms]
        ev_lines = [(n, t) for n, t in err if any(x and x in t.lower() for x in words)][-3:] or err[-1:]
        ev = [{"line": n, "text": t[:300], "signature": "learned"} for n, t in ev_lines]
        reason = (f"learned fallback, low confidence, after the causes above: the error lines also lean towards "
                  f"{r.cause} (p={r.probability:.2f}; {_shown_terms(r.terms) or 'context'})")
        c = Contribution(w, model.components.get(r.cause, ""), "tentative", "learned", reason, ev,
                         CAUSE_FIX.get(r.cause, ""), first_line=ev_lines[0][0] if ev_lines else 10**12)
        out.append(Diagnosis(cause=r.cause, component=c.component, confidence=w,
                             title=f"{r.cause} (learned reading of the error lines, low confidence)", evidence=ev,
                             facts=[], fix=c.fix, fixes=[], why="", signatures=["learned"], checks=[],
                             references=[], contributions=[c]))
    return out


# Nothing is blamed although the text holds an error (no signature, fact or vocabulary reads it, and the model is unsure,
# or reads user code, or a user-code signal silenced it): an honest ranked list instead of silence -- "probably not a
# stack problem" first (cause ``none``), then the model's two likeliest stack causes, marked as guesses.  Silence there
# scored a stack case a miss at top-1 AND top-3; `none` first keeps every `none` case right and the top-1 of every other
# case as it was.  Leave-one-set-out, 1,996 tuning cases (bench/results/issue9-m8-honest-none.md): top-3 79.7% -> 81.0%,
# cause-balanced top-3 79.4% -> 81.2%, ROCm top-3 71.4% -> 72.7%, new7/frozen 62.4% -> 64.4%; top-1 and `none` right
# unchanged.  A stack cause first there instead (at p(none) under 0.05 ... 0.3, with or without stack words) cost 6-24
# `none` cases for at most 1 right first place: where the rules are silent on an error, 116 of 191 texts were `none`
# and the model's first stack reading was right in 18 of the other 75.
HONEST_NONE = True
HONEST_NONE_READINGS = 2
# ... each at least this likely (LOSO: 0.02 / 0.05 / 0.1 / 0.2 top-3 80.9 / 80.8 / 80.6 / 80.1%; guesses the model gives 1
# chance in 50 are noise on the screen); requiring a stack word on the error lines as well halved the gain (30 of the
# 75 stack cases there name none)
HONEST_NONE_MIN_P = 0.05
# the `none` reading's confidence: of the LOSO texts with an error and nothing blamed, 116 of 191 (61%) were `none`
HONEST_NONE_CONFIDENCE = 0.6


def _honest_none(scan: ScanResult, model: Any) -> list[Diagnosis]:
    """``none`` first, then the model's likeliest stack causes (low confidence); [] when the model has no stack reading
    worth a place (the list would say nothing more than silence)."""
    from . import learned as lm

    model, feats, symptoms = _model_features(scan, model)
    if model is None:
        return []
    err = lm.reading_lines(scan.error_lines, symptoms)
    readings = model.read(feats, limit=HONEST_NONE_READINGS + 3)
    guesses = []
    for r in readings:
        if r.cause == "none" or r.probability < HONEST_NONE_MIN_P:
            continue
        if LEARNED_FILL_NEEDS.get(r.cause, "") not in ("", *scan.hints):
            continue
        guesses.append(r)
        if len(guesses) >= HONEST_NONE_READINGS:
            break
    if not guesses:
        return []
    p_none = next((r.probability for r in model.read(feats, limit=len(model.classes)) if r.cause == "none"), 0.0)
    last = err[-1:]
    ev = [{"line": n, "text": t[:300], "signature": "none"} for n, t in last]
    reason = ("no known stack message, fact or confident reading explains the error: most such errors are the "
              f"program's own (its code, data or resources), not the GPU stack (the learned model's p(user code)="
              f"{p_none:.2f})")
    c = Contribution(HONEST_NONE_CONFIDENCE, "user-code", "honest", "none", reason, ev, "",
                     first_line=last[0][0] if last else 10**12)
    out = [Diagnosis(cause="none", component="user-code", confidence=HONEST_NONE_CONFIDENCE,
                     title="probably not a stack problem (no stack message explains the error)", evidence=ev, facts=[],
                     fix="", fixes=[], why="", signatures=[], checks=[], references=[], contributions=[c])]
    for i, r in enumerate(guesses):
        words = [t.split(":", 1)[-1].replace("#", "") for t in r.terms]
        ev_lines = [(n, t) for n, t in err if any(x and x in t.lower() for x in words)][-3:] or err[-1:]
        gev = [{"line": n, "text": t[:300], "signature": "learned"} for n, t in ev_lines]
        w = LEARNED_FILL_WEIGHT - 0.001 * i
        reason = (f"learned fallback, a guess: if the stack is at fault after all, the error lines lean towards "
                  f"{r.cause} (p={r.probability:.2f}; {_shown_terms(r.terms) or 'context'})")
        gc = Contribution(w, model.components.get(r.cause, ""), "tentative", "learned", reason, gev,
                          CAUSE_FIX.get(r.cause, ""), first_line=ev_lines[0][0] if ev_lines else 10**12)
        out.append(Diagnosis(cause=r.cause, component=gc.component, confidence=w,
                             title=f"only if it is the stack: a learned guess from the error lines (p={r.probability:.2f})",
                             evidence=gev, facts=[], fix=gc.fix, fixes=[], why="", signatures=["learned"], checks=[],
                             references=[], contributions=[gc]))
    return out


def _with_vocabulary(scan: ScanResult, tentative: list[Diagnosis]) -> list[Diagnosis]:
    """Nothing but the model's readings (tentative or confident): the layers' vocabulary (logs/fallback.py) names
    the layer when the error lines use its words; the model's readings then only fill the places after it."""
    vocab = _fallback(scan)
    if not vocab or LEARNED_TENTATIVE_MODE == "model-first":
        return tentative
    named = {d.cause for d in vocab}
    rest = [d for d in tentative if d.cause not in named]
    if LEARNED_TENTATIVE_MODE == "vocab-only":
        return vocab
    floor = min(d.confidence for d in vocab)
    for d in rest:
        d.confidence = min(d.confidence, floor * 0.95)
    return vocab + [d for d in rest if d.confidence >= MIN_CONFIDENCE]


# An AMD GPU whose gfx target no official ROCm build carries kernels for (the ``amd-unlisted-arch`` hint: RDNA1,
# the smaller RDNA2/RDNA3 parts, Polaris, APU graphics, and the GCN generations ROCm dropped), named in a text
# that shows a stack error or a symptom: by the taxonomy's definition the likeliest reading of an error no
# message explains is that the build has no kernels for the GPU (gpu-arch-unsupported), whatever the wording.
# A fact about the GPU, not a wording: it leads only over readings that are themselves weak (the vocabulary, a
# tentative model reading, a generic signature), and follows a decisive message or an explaining fact.
ARCH_PRIOR = 0.4
ARCH_PRIOR_LEADS_BELOW = 0.5  # a first reading weaker than this is overtaken
ARCH_PRIOR_FOLLOW = 0.21  # else it joins the first three, just above the minimum


def _generic_only(scan: ScanResult, d: Diagnosis) -> bool:
    """Every reading of ``d`` comes from a generic signature (a crash, an abort): no layer's own words."""
    for c in d.contributions:
        ms = scan.matches.get(c.ref) if c.kind in ("signature", "context") else None
        if not ms or not ms[0].signature.generic:
            return False
    return True


def _tentative_only(d: Diagnosis) -> bool:
    """Only the learned model's unsure readings (it speaks tentatively where nothing else reads the error)."""
    return all(c.kind == "tentative" for c in d.contributions)


def _vocabulary_other(d: Diagnosis) -> bool:
    """``other`` read only from the vocabulary (an error of one of ROCm's tools): on a GPU no official build
    carries, the tool failing for the GPU is the likelier reading than a defect of the tool."""
    return d.cause == "other" and all(c.kind == "fallback" for c in d.contributions)


# an out-of-memory report names its own layer (capacity or the allocator), whatever the GPU
_OOM_WORDS = re.compile(r"out of (?:GPU |device |video )?memory|not enough (?:GPU |device |video )*memory|\bOOM\b", re.I)


_GFX = re.compile(r"\bgfx[0-9]{3,4}[a-z]?\b")
_TARGET_LIST = re.compile(r"(?i)(?:targets?|_ARCH|arch_list|offload-arch)\s*[=:]\s*['\"]?gfx")


def _arch_prior(scan: ScanResult, out: list[Diagnosis], follow: bool = True) -> list[Diagnosis]:
    """``follow``: also join the first three behind stronger readings (without a learned model; with one, its
    readings of the error lines fill those places, and the GPU's name alone should not push them out)."""
    h = scan.hints.get("amd-unlisted-arch")
    hints = scan.hint_names
    if h is None and "strix-halo" not in hints:
        h = scan.hints.get("igpu-said")  # an integrated GPU, enumerated next to the discrete one
    if h is None or not {"amd", "amd-gpu", "amd-gpu-said"} & hints:
        return out
    # an error or a symptom line, or the reporter saying the work runs on the CPU (the GPU not taken: what a build
    # without kernels for the GPU's target looks like to someone using an app that picks the device itself)
    if not (_has_error(scan) or "gpu-unused" in hints):
        return out
    if "dml-vulkan" in hints and "rocm-said" not in hints:
        return out  # DirectML or Vulkan alone: a back end that does not depend on ROCm's gfx target lists
    if _TARGET_LIST.search(h.text) or len(set(_GFX.findall(h.text))) >= 3:
        return out  # a build's target list (--rocm_amdgpu_targets=gfx803,...), not the GPU of this machine
    from .learned import reading_lines

    if any(_OOM_WORDS.search(t) for _n, t in reading_lines(scan.error_lines, getattr(scan, "symptom_lines", ()))):
        return out
    have = next((d for d in out if d.cause == "gpu-arch-unsupported"), None)
    others = [d for d in out if d is not have]
    top = max((d.confidence for d in others), default=0.0)
    if have is not None and have.confidence >= min(top, ARCH_PRIOR):
        return out
    # an integrated GPU is only said to be there (not that the work ran on it): it leads only where nothing but the
    # model, unsure, reads the error
    weak_ok = (lambda d: _tentative_only(d)) if h.name == "igpu-said" else (
        lambda d: _generic_only(scan, d) or _vocabulary_other(d) or _tentative_only(d))
    if top < ARCH_PRIOR_LEADS_BELOW and all(weak_ok(d) for d in others):
        w = max(ARCH_PRIOR, round(top + 0.01, 3))
    elif follow and (len(out) < 3 or have is not None):
        w = ARCH_PRIOR_FOLLOW
    else:
        return out
    what = ("an integrated GPU (ROCm lists it as a device next to the discrete one)" if h.name == "igpu-said" else
            "the GPU named on line {}".format(h.line))
    reason = (f"{what} is a gfx target no official ROCm build carries kernels for; no message "
              "that explains the error points elsewhere, so the build's missing kernels are the likeliest reading")
    ev = [{"line": h.line, "text": h.text[:300], "hint": h.name}]
    c = Contribution(w, "framework-build", "context", "amd-unlisted-arch", reason, ev,
                     CAUSE_FIX.get("gpu-arch-unsupported", ""), first_line=h.line)
    if have is not None:
        have.contributions.insert(0, c)
        have.confidence = max(have.confidence, w)
        have.evidence = (ev + have.evidence)[:12]
        return out
    return out + [Diagnosis(cause="gpu-arch-unsupported", component="framework-build", confidence=w,
                            title="gpu-arch-unsupported (the GPU's gfx target is in no official ROCm build, low "
                                  "confidence)", evidence=ev, facts=[], fix=c.fix, fixes=[], why="",
                            signatures=["amd-unlisted-arch"], checks=[], references=[], contributions=[c])]


# A pre-release build named (the ``prerelease`` hint: a nightly or dev/rc/alpha version, a nightly index) in a text with
# an error that no message, fact or vocabulary reads: by the taxonomy's definition ("a bug in a nightly / pre-release
# build; stable works") the likeliest reading is a regression of that build.  It leads only where nothing reads the
# error, or only the learned model does, tentatively (leave-one-set-out, day 7: of the 22 tuning cases with a
# pre-release named and the rules silent, 8 are prerelease-regression and the model, unsure, had none of the 22 right
# first); after any other reading it stays out (the model's fill may still name it, LEARNED_FILL_NEEDS).
PRERELEASE_PRIOR = 0.35


def _prerelease_prior(scan: ScanResult, out: list[Diagnosis]) -> list[Diagnosis]:
    h = scan.hints.get("prerelease")
    if h is None or not _has_error(scan) or any(d.cause == "prerelease-regression" for d in out):
        return out
    if not all(_tentative_only(d) for d in out):
        return out
    from .learned import reading_lines

    err = reading_lines(scan.error_lines, getattr(scan, "symptom_lines", ()))
    if any(_OOM_WORDS.search(t) for _n, t in err):
        return out  # capacity names its own layer, whatever the build
    if err and LEARNED_USER_DATA.search(err[-1][1]):
        return out  # the framework refusing the program's own data (an index, a label, a shape): the program's error
    top = max((d.confidence for d in out), default=0.0)
    w = max(PRERELEASE_PRIOR, round(top + 0.01, 3))
    reason = (f"a pre-release build is named on line {h.line} and no message that explains the error points "
              "elsewhere: a regression of that build (stable releases work) is the likeliest reading")
    ev = [{"line": h.line, "text": h.text[:300], "hint": h.name}]
    c = Contribution(w, "framework-build", "context", "prerelease", reason, ev,
                     CAUSE_FIX.get("prerelease-regression", ""), first_line=h.line)
    return out + [Diagnosis(cause="prerelease-regression", component="framework-build", confidence=w,
                            title="prerelease-regression (a pre-release build is named, low confidence)", evidence=ev,
                            facts=[], fix=c.fix, fixes=[], why="", signatures=["prerelease"], checks=[], references=[],
                            contributions=[c])]


def _shown_terms(terms: Sequence[str]) -> str:
    """Model tokens as a reader sees them: "last:core" -> "core", "aborted_core" -> "aborted core",
    "h:amd-gpu" -> "context amd-gpu"."""
    out: list[str] = []
    for t in terms:
        kind, _, word = t.rpartition(":")
        word = word.replace("_", " ")
        shown = f"context {word}" if kind == "h" else word
        if shown not in out:
            out.append(shown)
    return ", ".join(out)


def _fallback(scan: ScanResult) -> list[Diagnosis]:
    """No signature and no fact applies: read the error lines for each layer's vocabulary (low
    confidence, see logs/fallback.py)."""
    from .fallback import propose

    out = []
    for p in propose(list(getattr(scan, "error_lines", ()))):
        reason = (f"no known error message matched; the error lines use the vocabulary of {p.cause} "
                  f"({', '.join(p.terms)})")
        ev = [{"line": n, "text": t, "signature": "fallback"} for n, t in p.evidence]
        c = Contribution(p.confidence, p.component, "fallback", "fallback", reason, ev, CAUSE_FIX.get(p.cause, ""),
                         first_line=p.evidence[0][0] if p.evidence else 10**12)
        out.append(Diagnosis(cause=p.cause, component=p.component, confidence=p.confidence,
                             title=f"{p.cause} (vocabulary of the error lines, low confidence)", evidence=ev,
                             facts=[], fix=c.fix, fixes=[], why="", signatures=["fallback"], checks=[],
                             references=[], contributions=[c]))
    return out


def _why(d: Diagnosis, others: list[Diagnosis], pos: int) -> str:
    reasons = "; ".join(c.reason for c in d.contributions[:3])
    if pos > 0 and others and others[0].cause == "none" and any(c.kind == "honest" for c in others[0].contributions):
        return f"A guess, after the likelier reading that the stack is not at fault. {reasons}."
    if not others:
        return f"Only cause the text points at. {reasons}."
    if pos == 0:
        nxt = others[0]
        return (f"Ranked above {nxt.cause} ({nxt.confidence:.2f}) because {reasons}. "
                f"{nxt.cause} rests on: {nxt.contributions[0].reason}.")
    best = others[0] if others[0].confidence >= d.confidence else None
    lead = f"Ranked below {best.cause} ({best.confidence:.2f}): weaker support. " if best else ""
    return f"{lead}Supported by: {reasons}."


def user_code_signals(scan: ScanResult) -> list[dict[str, Any]]:
    out = []
    for sid, ms in scan.matches.items():
        sig = ms[0].signature
        # a message read as the user's own in this context (a resolve rule with cause none) is one too
        here = next((r for r in sig.resolve if r.cause == "none" and r.applies(scan.hint_names)), None)
        if sig.user_code or here is not None:
            out.append({"signature": sid, "title": sig.title,
                        "meaning": here.note if here is not None and here.note else sig.meaning,
                        "evidence": [{"line": m.line, "text": m.text} for m in ms[:3]]})
    return out


def blames_nothing(diags: Iterable[Any]) -> bool:
    """Nothing in the stack is blamed: no diagnosis, or ``none`` first (an honest "probably not a stack problem" with the
    model's guesses after it, ``_honest_none``), as ../shared/benchmarks/score_incidents.py reads a `none` case.
    ``diags``: Diagnosis objects, their JSON dicts, or cause names."""
    first = next(iter(diags), None)
    if first is None:
        return True
    cause = first if isinstance(first, str) else first.get("cause") if isinstance(first, dict) else first.cause
    return cause == "none"


def causes(diags: Iterable[Diagnosis]) -> list[str]:
    return [d.cause for d in diags]
