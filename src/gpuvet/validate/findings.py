"""Case results (plain data from the workers) -> Findings with VAL codes.

One finding per case.  Its code names the problem the case looks for when it ran to the end (VAL003
wrong results, VAL004 memory not returned, ...); a case that crashed, hung or raised gets the code of
that instead, so a segfault in the matmul case reads as VAL001 whatever the case was testing.
"""
from __future__ import annotations

from typing import Any, Iterable

from gpuvet.model import Evidence, Finding, Fix, Outcome, Severity

# code -> (kebab-case name of the problem, default severity, cause, one-line meaning)
VAL_CODES: dict[str, tuple[str, Severity, str, str]] = {
    "VAL001": ("case-crashed", Severity.CRITICAL, "other",
               "The case's process died (segfault, abort, bus error, GPU fault): a native crash in the framework, "
               "a math library or the driver."),
    "VAL002": ("case-hung", Severity.CRITICAL, "other",
               "The case produced no result within its time-out and was killed: a hang in a kernel, a collective or "
               "the driver."),
    "VAL003": ("wrong-result", Severity.ERROR, "other",
               "An operator's output differs from a float64 CPU reference by more than the tolerance of its dtype."),
    "VAL004": ("memory-not-returned", Severity.ERROR, "memory-allocator",
               "Allocated device memory did not return to where it started after tensors were freed."),
    "VAL005": ("case-error", Severity.ERROR, "other",
               "The case raised an exception the build should not raise for a supported operator and dtype."),
    "VAL006": ("device-unusable", Severity.CRITICAL, "device-access",
               "The framework does not import, sees no GPU, or cannot run a kernel on it."),
    "VAL007": ("unstable-configuration", Severity.ERROR, "other",
               "Some (batch size, dtype) cells of the stability matrix fail some of their repeated training steps."),
    "VAL008": ("training-step-misbehaves", Severity.ERROR, "other",
               "A stage of the training step breaks an expectation: hidden syncs, autocast dtypes, loss range, "
               "optimizer update."),
    "VAL010": ("performance-regression", Severity.WARNING, "prerelease-regression",
               "A timed case is slower (or a throughput lower) than the baseline by more than run-to-run noise."),
    "VAL011": ("below-expected-peak", Severity.WARNING, "other",
               "Measured matmul throughput or memory bandwidth is far below the GPU model's expected peak."),
    "VAL012": ("correctness-regression", Severity.ERROR, "prerelease-regression",
               "A case that passed in the baseline fails now: a correctness failure is always a regression."),
    "VAL013": ("collective-misconfigured", Severity.WARNING, "collective-comm",
               "The multi-process setup or the NCCL/RCCL environment makes collectives slow, fail or hang: P2P off, "
               "a transport disabled, a socket interface that does not exist, ranks sharing or not seeing GPUs."),
    "VAL014": ("collective-bandwidth-low", Severity.WARNING, "collective-comm",
               "A large collective's bus bandwidth (nccl-tests' busbw) is far below the bandwidth of the links "
               "between the GPUs."),
    "VAL020": ("operator-known-to-differ", Severity.INFO, "other",
               "The code uses an operator whose kernels are known to differ across framework versions and "
               "backends; `gpuvet validate --ops-from PATH` tests it here."),
    "VAL021": ("breaks-on-rocm", Severity.WARNING, "wrong-vendor-build",
               "The code calls something that is unsupported or means something else on a ROCm build."),
    "VAL022": ("setting-in-code", Severity.INFO, "other",
               "The code changes a framework setting (determinism, TF32, fusers) that alters numerics or speed."),
    "VAL023": ("environment-set-in-code", Severity.INFO, "other",
               "The code sets a runtime/library environment variable through os.environ, hidden from the job's "
               "configuration; it applies only if set before the library reads it."),
}

# How each problem is usually fixed (``gpuvet rule VALxxx`` prints these with the meaning above).
VAL_FIX = {
    "VAL001": "Re-run the one case (`gpuvet validate --case NAME`); a native crash that repeats points at the "
              "framework build, a math library or the driver: compare with `gpuvet validate --against good` and "
              "`gpuvet diff` to see which layer changed.",
    "VAL002": "Re-run with a longer --case-timeout to tell slow from hung; a collective that hangs: check "
              "NCCL/RCCL settings (`gpuvet check`), then run it under `gpuvet run --debug`.",
    "VAL003": "Pin the operator to another backend or dtype, report it upstream with the case's shapes, and "
              "roll back to the last good stack (`gpuvet rollback`) if it affects training.",
    "VAL004": "Look for a caching-allocator setting (PYTORCH_*_ALLOC_CONF) or a library that keeps buffers; "
              "compare the stored memory curves with the baseline's.",
    "VAL005": "Read the traceback in the evidence: an operator/dtype the build should support raising is a "
              "build problem; `gpuvet check` names mismatched layers.",
    "VAL006": "`gpuvet check --python PATH` names what disagrees (driver, runtime, build, device access).",
    "VAL007": "Use the cells that pass, or the previous stack, until the failing cells pass; the cell's first "
              "error is in the evidence.",
    "VAL008": "Read which stage broke its expectation; hidden syncs come from .item()/.cpu() in the data "
              "pipeline, wrong autocast dtypes from a changed autocast op list.",
    "VAL010": "Compare the two stacks (`gpuvet diff`); re-run both to confirm it is outside the noise.",
    "VAL011": "Check clocks and power (`nvidia-smi -q -d CLOCK,POWER`), other processes on the GPU, and the "
              "math library versions.",
    "VAL012": "A case that passed before fails now: roll back (`gpuvet rollback`) or pin the changed layer.",
    "VAL020": "Run `gpuvet validate --ops-from PATH` on each stack the code runs on.",
    "VAL021": "Guard the call for ROCm (torch.version.hip) or use the portable API named in the finding.",
    "VAL022": "Set it once, deliberately, and record it with the job's configuration.",
    "VAL023": "Set it in the job's environment instead, so `gpuvet check` and the logs show it.",
}


def rule_doc(code: str) -> dict[str, Any] | None:
    """The documentation of a VAL code, in the shape of a check's (for `gpuvet rule`)."""
    code = code.upper()
    if code not in VAL_CODES:
        return None
    name, sev, cause, meaning = VAL_CODES[code]
    where = "gpuvet scan PATH" if code >= "VAL020" else "gpuvet validate / gpuvet bench"
    sections = {"What it does": f"Reported by `{where}`. {meaning}",
                "Why is this bad?": meaning, "Example": f"`{where}`",
                "Fix": VAL_FIX.get(code, ""), "References": "bench/results/h200-validate/README.md"}
    return {"code": code, "name": name, "severity": sev.name.lower(), "tables": [], "cause": cause,
            "component": "framework", "summary": meaning, "sections": sections}


COMPONENT = "framework"
DEBUG_FIX = Fix("Re-run the single case with gpuvet validate --case NAME; for a native crash run it under "
                "`gpuvet run --debug -- python ...` to get synchronous launches and the vendor logs.")


def finding(code: str, outcome: Outcome, title: str, why: str = "", evidence: Iterable[Evidence] = (),
            fixes: Iterable[Fix] = (), severity: Severity | None = None, cause: str | None = None) -> Finding:
    name, sev, default_cause, meaning = VAL_CODES[code]
    return Finding(code=code, name=name, severity=severity or sev, outcome=outcome, title=title,
                   why=why or meaning, evidence=tuple(evidence), fixes=tuple(fixes),
                   cause=cause or default_cause, component=COMPONENT)


def _check_text(c: dict[str, Any]) -> str:
    where = " ".join(f"{k}={c[k]}" for k in ("dtype", "backend", "layout", "rank") if c.get(k) not in (None, ""))
    if c.get("tol") is not None:
        err = "non-finite" if c.get("err") is None or c.get("err") != c.get("err") else f"{c['err']:.3g}"
        core = f"relative error {err} > tolerance {c['tol']:g}"
        if c.get("detail"):
            core += f" ({c['detail']})"
    else:
        core = c.get("detail") or "failed"
    return f"{c['name']}{' [' + where + ']' if where else ''}: {core}"


def _log_evidence(res: dict[str, Any], lines: int = 12) -> list[Evidence]:
    log = (res.get("log") or "").strip().splitlines()
    interesting = [ln for ln in log if ln.strip() and "Failed to initialize NumPy" not in ln
                   and "_conversion_method_template" not in ln]
    return [Evidence(ln[:300], source="worker log") for ln in interesting[-lines:]]


def case_finding(res: dict[str, Any]) -> Finding:
    """The finding for one case result."""
    case, status, title = res["case"], res["status"], res.get("title") or res["case"]
    spec_code = res.get("code") or "VAL003"
    where = f"{case} ({title})"
    checks = res.get("checks") or []
    if status == "crashed":
        sig = res.get("signal")
        what = f"killed by {sig}" if sig else f"exit status {res.get('returncode')}"
        return finding("VAL001", Outcome.FAILED, f"{where}: the process died ({what})",
                       evidence=[Evidence(res.get("error", ""), source=case)] + _log_evidence(res), fixes=[DEBUG_FIX],
                       cause="hardware-fault" if sig == "SIGBUS" else None)
    if status == "timeout":
        return finding("VAL002", Outcome.FAILED, f"{where}: no result within the time-out; killed",
                       evidence=[Evidence(res.get("error", ""), source=case)] + _log_evidence(res), fixes=[DEBUG_FIX],
                       cause="collective-comm" if res.get("ranks") else None)
    if status in ("framework-error", "framework-timeout"):
        return finding("VAL006", Outcome.UNKNOWN, f"{where}: not run, the framework could not start",
                       evidence=[Evidence(res.get("error", ""), source=case)])
    if status == "error":
        ev = [Evidence(res.get("error", ""), source=case)]
        ev += [Evidence(ln, source="traceback") for ln in (res.get("trace") or "").strip().splitlines()[-6:]]
        return finding("VAL005", Outcome.FAILED, f"{where}: raised {res.get('error', '').split(':')[0]}",
                       evidence=ev, fixes=[DEBUG_FIX])
    if status == "unsupported":
        return finding(spec_code, Outcome.SKIPPED, f"{where}: not offered by this build ({res.get('error', '')})")
    failed = [c for c in checks if not c.get("ok")]
    ran = [c for c in checks if not c.get("skipped")]
    skipped = len(checks) - len(ran)
    if status == "failed" or failed:
        numeric = [c for c in failed if c.get("tol") is not None]
        code = spec_code
        if spec_code in ("VAL008", "VAL005") and numeric:
            code = "VAL003"
        ev = [Evidence(_check_text(c), source=case) for c in failed[:8]]
        if len(failed) > 8:
            ev.append(Evidence(f"... and {len(failed) - 8} more", source=case))
        return finding(code, Outcome.FAILED, f"{where}: {len(failed)} of {len(ran)} checks failed", evidence=ev)
    note = f", {skipped} not offered by this build" if skipped else ""
    metrics = res.get("metrics") or {}
    ev = [Evidence(n, source=case) for n in res.get("notes", [])[:3]]
    ev += [Evidence(f"{k}: {m['value']:.4g} {m.get('unit', '')}", source=case)
           for k, m in list(metrics.items())[:10] if isinstance(m.get("value"), (int, float))]
    if not ran and metrics:
        return finding(spec_code, Outcome.PASSED, f"{where}: {len(metrics)} measurements", evidence=ev)
    return finding(spec_code, Outcome.PASSED, f"{where}: {len(ran)} checks passed{note}", evidence=ev)


def framework_finding(error: dict[str, Any]) -> Finding:
    ev = [Evidence(error.get("error", ""), source="worker")]
    ev += [Evidence(ln[:300], source="worker log") for ln in (error.get("log") or "").strip().splitlines()[-10:]]
    return finding("VAL006", Outcome.FAILED, "the framework does not import or initialise in the examined interpreter",
                   evidence=ev, fixes=[Fix("Run `gpuvet check --python PATH` on that interpreter: it names the layer "
                                           "that disagrees without importing the framework.")])


def findings_for(results: list[dict[str, Any]], framework_error: dict[str, Any] | None = None) -> list[Finding]:
    out = [case_finding(r) for r in results]
    if framework_error:
        out.insert(0, framework_finding(framework_error))
    return out
