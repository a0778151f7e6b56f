"""The engine: facts + checks + KB + user policy -> Report (with the health score).

User policy (select / ignore, severity overrides, acknowledged findings, --fail-on) is applied here,
never inside a rule.
"""
from __future__ import annotations

import re

import time
from dataclasses import field
from typing import Any, Iterable, Sequence

from gpuvet import __version__
from gpuvet.checks.base import Check, Context, Fail, Pass, Skip, Unknown
from gpuvet.model import Deduction, ExitCode, Facts, Finding, Outcome, Report, Severity
from gpuvet.model.record import record

REPORT_SCHEMA = "https://gpuvet.dev/schema/report/1"
REPORT_SCHEMA_VERSION = 1

# Points a failed finding costs, by severity.  The score is of what was checked: a check that could
# not run costs nothing (a pasted nvidia-smi scores what it shows, like the machine it came from);
# how much could not be checked is reported beside the score ("checked"/"unchecked"), never hidden.
POINTS = {Severity.CRITICAL: 40, Severity.ERROR: 20, Severity.WARNING: 8, Severity.INFO: 0}


@record
class Policy:
    """The user's policy: select/ignore, severity overrides, acknowledged findings, --fail-on."""

    select: tuple[str, ...] = ()  # code prefixes to run (empty: all)
    ignore: tuple[str, ...] = ()  # code prefixes to drop
    severity: dict[str, Severity] = field(default_factory=dict)  # code -> severity override
    acknowledged: dict[str, str] = field(default_factory=dict)  # code -> reason
    fail_on: Severity = Severity.ERROR

    def wants(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)


def run_checks(facts: Facts, checks: Sequence[Check], kb: Any, policy: Policy | None = None,
               options: dict[str, Any] | None = None) -> list[Finding]:
    policy = policy or Policy()
    ctx = Context(facts, kb, dict(options or {}))
    ruled_out = vendors_ruled_out(facts)
    findings: list[Finding] = []
    for chk in checks:
        if not policy.wants(chk.code):
            continue
        vendor = check_vendor(chk)
        for f in _run_one(chk, ctx):
            if vendor in ruled_out and f.outcome is Outcome.UNKNOWN:
                # what could not be checked about a vendor the GPUs rule out does not apply here; a
                # real failure (hipcc set up for AMD on an NVIDIA machine) is still reported
                f = _finding(chk, Outcome.SKIPPED, ruled_out[vendor])
            findings.append(_apply_policy(f, policy))
    return findings


def check_vendor(chk: Check) -> str:
    """'amd' | 'nvidia' for a rule about one vendor's stack, '' for one about any."""
    return getattr(chk, "vendor", "") or ""


def vendors_ruled_out(facts: Facts) -> dict[str, str]:
    """Vendors whose checks do not apply, with the reason: the GPUs were read and all are of the other
    vendor (an NVIDIA-only machine needs no ROCm checks, and the reverse).  Nothing is ruled out when
    no GPU was seen or the GPU probe failed: "no GPU found" cannot be told from "could not look"."""
    gpus = facts.table("gpu_devices")
    vendors = {str(g.get("vendor") or "") for g in gpus}
    if not gpus or "" in vendors:
        return {}
    out: dict[str, str] = {}
    names = {"amd": "AMD", "nvidia": "NVIDIA"}
    for vendor, other in (("amd", "nvidia"), ("nvidia", "amd")):
        if vendors == {other}:
            n = len(gpus)
            out[vendor] = f"not applicable: the {n} GPU{'s' if n > 1 else ''} here {'are' if n > 1 else 'is'} " \
                          f"{names[other]}, no {names[vendor]} GPU"
    return out


# Skip reasons that rest on facts the text does show (a CPU-only build, a mismatch another rule reports);
# every other skip of pasted facts is an absence the text cannot vouch for.
_DECIDED_BY_FACTS = re.compile(r"CPU-only build|\(DRV[0-9]{3}\)|target list was read|only pasted text"
                               r"|no rocminfo Runtime Version|^not applicable")


# What a skip reason says is absent -> the fact table whose output would show it.
_REASON_TABLES = (
    (re.compile(r"libamdhip64|HIP runtime|ROCm (release|user space|tree)|ROCm is not|CUDA toolkit", re.I), "runtimes"),
    (re.compile(r"nvcc|hipcc|hipconfig|host compiler", re.I), "compilers"),
    (re.compile(r"driver", re.I), "drivers"),
    (re.compile(r"\bGPU\b(?! framework)(?! torch)", re.I), "gpu_devices"),
    (re.compile(r"torchvision|torchaudio|triton|numpy|extension", re.I), "packages"),
    (re.compile(r"torch|framework", re.I), "framework_builds"),
    (re.compile(r"_VISIBLE_DEVICES|variable", re.I), "env_vars"),
    (re.compile(r"device nodes", re.I), "device_nodes"),
    (re.compile(r"glibc|Python", re.I), "os_info"),
    (re.compile(r"MIOpen|library|libraries", re.I), "libraries"),
    (re.compile(r"loader", re.I), "shared_libraries"),
    (re.compile(r"container", re.I), "containers"),
)


def _absent_tables(chk: Check, facts: Facts, reason: str) -> tuple[str, ...]:
    """The tables a pasted text would have to show for this check to run: those of the check with no row,
    else the ones its skip reason names."""
    absent = [t for t in chk.tables if facts.status(t) != "ok"]
    if not absent:
        absent = [t for rx, t in _REASON_TABLES if rx.search(reason)][:2]
    return tuple(dict.fromkeys(absent or chk.tables))


def _run_one(chk: Check, ctx: Context) -> Iterable[Finding]:
    missing = [t for t in chk.tables if ctx.facts.status(t) in ("error", "missing")]
    if missing:
        errs = [e for t in missing for e in ctx.facts.table_errors(t)]
        absent = "not in the pasted text" if ctx.facts.origin == "pasted" else "not collected"
        why = "; ".join(dict.fromkeys(e.message for e in errs)) or f"{absent}: {', '.join(missing)}"
        yield _finding(chk, Outcome.UNKNOWN, f"could not check: {why}", missing=tuple(missing))
        return
    try:
        results = list(chk.func(ctx))
    except Exception as exc:  # a bug in one rule must not sink the report
        yield _finding(chk, Outcome.UNKNOWN, f"could not check: internal error {type(exc).__name__}: {exc}")
        return
    fails = [r for r in results if isinstance(r, Fail)]
    if fails:
        for r in fails:
            yield _finding(chk, Outcome.FAILED, r.title, r.why, r.evidence, r.fixes, r.severity)
        return
    unknowns = [r for r in results if isinstance(r, Unknown)]
    if unknowns:
        u = unknowns[0]
        yield _finding(chk, Outcome.UNKNOWN, f"could not check: {u.reason}", evidence=u.evidence,
                       missing=tuple(getattr(u, "missing", ()) or ()))
        return
    skips = [r for r in results if isinstance(r, Skip)]
    if skips and not any(isinstance(r, Pass) for r in results):
        # "not here" cannot be told from "could not look" when a probe of a needed table failed:
        # nvcc hanging is not "no nvcc"
        errs = [e for t in chk.tables for e in ctx.facts.table_errors(t)]
        if errs:
            why = "; ".join(dict.fromkeys(e.message for e in errs))
            yield _finding(chk, Outcome.UNKNOWN, f"could not check: {why} ({skips[0].reason})",
                           missing=tuple(t for t in chk.tables if ctx.facts.table_errors(t)))
            return
        if ctx.facts.origin == "pasted" and not _DECIDED_BY_FACTS.search(skips[0].reason):
            # pasted text is partial: "no hipcc" there means the text does not show one, never "not
            # installed", and is not a pass either; the renderer says what to paste (Finding.missing)
            not_shown = _absent_tables(chk, ctx.facts, skips[0].reason)
            yield _finding(chk, Outcome.UNKNOWN, f"could not check: not in the pasted text ({skips[0].reason})",
                           missing=not_shown)
            return
        yield _finding(chk, Outcome.SKIPPED, skips[0].reason)
        return
    passes = [r for r in results if isinstance(r, Pass)]
    title = passes[0].title if passes and passes[0].title else "no problem found"
    yield _finding(chk, Outcome.PASSED, title, evidence=passes[0].evidence if passes else ())


_PIP = __import__("re").compile(r"(?<![\w/.-])(?:python3?\s+-m\s+pip|pip3?)(?=\s+(?:install|uninstall)\b)")


def retarget_fixes(findings: Sequence[Finding], python: str) -> list[Finding]:
    """Every pip step of every fix runs with the examined interpreter (``/venv/bin/python -m pip ...``),
    never a bare ``pip`` that would change gpuvet's own environment."""
    import shlex
    from dataclasses import replace

    py = shlex.quote(python) if python != "python" else "python"
    out: list[Finding] = []
    for f in findings:
        if any(x.command and _PIP.search(x.command) for x in f.fixes):
            f = replace(f, fixes=tuple(replace(x, command=_PIP.sub(f"{py} -m pip", x.command))
                                       if x.command else x for x in f.fixes))
        out.append(f)
    return out


def _finding(chk: Check, outcome: Outcome, title: str, why: str = "", evidence=(), fixes=(),
             severity: Severity | None = None, missing: tuple[str, ...] = ()) -> Finding:
    return Finding(code=chk.code, name=chk.name, severity=severity or chk.severity, outcome=outcome,
                   title=title, why=why, evidence=tuple(evidence), fixes=tuple(fixes), cause=chk.cause,
                   component=chk.component, missing=missing)


def _apply_policy(f: Finding, policy: Policy) -> Finding:
    from dataclasses import replace

    if f.code in policy.severity:
        f = replace(f, severity=policy.severity[f.code])
    if f.code in policy.acknowledged and f.failed:
        f = replace(f, acknowledged=policy.acknowledged[f.code])
    return f


def score(findings: Sequence[Finding]) -> tuple[int, list[Deduction]]:
    """100 minus the points of every failed, unacknowledged finding (POINTS by severity).

    One rule failing many times is one kind of problem (nine packages installed twice, a dozen
    unreadable caches): its first finding costs the full points, each further one half of the one
    before (8, 4, 2, 1, 0 ...), so a rule never costs more than twice its points, and repeats cannot
    sink a machine's score below one with a single critical fault.  Findings count most severe first."""
    deductions: list[Deduction] = []
    seen: dict[str, int] = {}
    for f in sorted(findings, key=lambda f: -POINTS[f.severity]):
        if f.failed and not f.acknowledged and POINTS[f.severity]:
            n = seen.get(f.code, 0)
            seen[f.code] = n + 1
            pts = POINTS[f.severity] >> n
            if pts:
                deductions.append(Deduction(f.code, pts, f.title))
    return max(0, 100 - sum(d.points for d in deductions)), deductions


def coverage(findings: Sequence[Finding]) -> dict[str, int]:
    """How much the score rests on: checks that ran to an answer vs. those that could not run."""
    checked = sum(1 for f in findings if f.outcome in (Outcome.PASSED, Outcome.FAILED))
    unchecked = sum(1 for f in findings if f.outcome is Outcome.UNKNOWN)
    return {"checked": checked, "unchecked": unchecked,
            "not_applicable": sum(1 for f in findings if f.outcome is Outcome.SKIPPED)}


def build_report(command: str, facts: Facts, findings: list[Finding], kb: Any,
                 started: float | None = None, **meta: Any) -> Report:
    order = {Outcome.FAILED: 0, Outcome.UNKNOWN: 1, Outcome.PASSED: 2, Outcome.SKIPPED: 3}
    findings = sorted(findings, key=lambda f: (order[f.outcome], -int(f.severity), f.code))
    sc, deductions = score(findings)
    m: dict[str, Any] = {"gpuvet_version": __version__, "kb": kb.stamp() if kb is not None else None,
                         "facts_origin": facts.origin, "coverage": coverage(findings)}
    if started is not None:
        m["elapsed_s"] = round(time.monotonic() - started, 3)
    m.update(meta)
    rep = Report(command=command, findings=findings, facts=facts, score=sc, deductions=deductions, meta=m)
    if command == "check" and facts is not None:
        rep.extra["usable"] = gpu_usable(facts, findings)
    return rep


def _short_gpu(name: str) -> str:
    import re

    return re.sub(r"^(NVIDIA|AMD)\s+|\b(GeForce|Instinct)\s+", "", str(name or "GPU")).strip() or "GPU"


def gpu_usable(facts: Facts, findings: Sequence[Finding]) -> dict[str, str]:
    """The answer to collect_env's "Is CUDA available", and more: can the framework use a GPU here?

    ``state``: ``yes`` | ``no`` | ``unknown`` | ``no-framework``; ``framework``: the one judged;
    ``text``: the verdict line the terminal leads with."""
    builds = facts.table("framework_builds")
    fw = next((b for b in builds if b.get("name") == "torch"), None) or \
        next((b for b in builds if b.get("cuda") or b.get("hip")), None) or (builds[0] if builds else None)
    pasted = facts.origin == "pasted"
    if fw is None:
        errs = [e.message for e in facts.table_errors("framework_builds")]
        if errs:
            return {"state": "unknown", "framework": "",
                    "text": f"GPU usable: not known: the framework build could not be read ({errs[0]})"}
        # a GPU no framework can use (its kernel driver is not loaded) is known without the framework
        dead = [f for f in findings if f.failed and not f.acknowledged and f.severity >= Severity.ERROR
                and (f.component == "driver" or f.cause == "device-access")]
        if dead:
            return {"state": "no", "framework": "", "text": f"GPU usable: no: {dead[0].title}"}
        if pasted:
            return {"state": "unknown", "framework": "",
                    "text": "GPU usable: not known: the text shows no framework build "
                            "(paste the output of python -m torch.utils.collect_env)"}
        return {"state": "no-framework", "framework": "",
                "text": "no framework in this environment: check the one your job uses with --python"}
    name, version = str(fw.get("name") or "framework"), str(fw.get("version") or "")
    head = f"GPU usable by {name}: "
    kind = "cuda" if fw.get("cuda") else "rocm" if fw.get("hip") else str(fw.get("variant") or "cpu")
    gpus = facts.table("gpu_devices")
    vendors = {str(g.get("vendor") or "") for g in gpus}
    vendor_name = {"nvidia": "an NVIDIA GPU", "amd": "an AMD GPU"}

    def res(state: str, text: str) -> dict[str, str]:
        return {"state": state, "framework": name, "text": head + text}

    if kind not in ("cuda", "rocm"):
        where = " and ".join(vendor_name[v] for v in sorted(vendors) if v in vendor_name)
        if where:
            return res("no", f"no: CPU-only build ({version}) on a machine with {where}")
        return res("no", f"no: CPU-only build ({version})" +
                   ("" if pasted or facts.status("gpu_devices") == "error" else ", and no GPU was found"))
    # what stops the GPU first: the worst finding, and among equals a stack layer the GPU runs on before a
    # build-time one (a missing host compiler only stops builds and JIT, not the GPU)
    build_time = ("toolchain", "extension-abi")
    blockers = sorted((f for f in findings if f.failed and not f.acknowledged and f.severity >= Severity.ERROR),
                      key=lambda f: (-int(f.severity), f.cause in build_time))
    if blockers:
        more = f" (and {len(blockers) - 1} more)" if len(blockers) > 1 else ""
        return res("no", f"no: {blockers[0].title}{more}")
    want = "nvidia" if kind == "cuda" else "amd"
    mine = [g for g in gpus if g.get("vendor") == want]
    runtime = f"CUDA {fw.get('cuda')}" if kind == "cuda" else f"HIP {fw.get('hip')}"
    if not mine:
        st = facts.status("gpu_devices")
        if st == "error":
            msg = facts.table_errors("gpu_devices")[0].message
            return res("unknown", f"not known: the GPUs could not be read ({msg})")
        if st == "missing" or pasted:
            tool = "nvidia-smi" if want == "nvidia" else "rocminfo"
            return res("unknown", f"not known: the text shows no GPU (paste the output of {tool})")
        return res("no", f"no: {version} is a {runtime} build, but no {'NVIDIA' if want == 'nvidia' else 'AMD'} "
                         "GPU was found")
    groups: dict[tuple[str, str], int] = {}
    for g in mine:
        key = (_short_gpu(str(g.get("name") or "")), str(g.get("arch") or ""))
        groups[key] = groups.get(key, 0) + 1
    gdesc = ", ".join(f"{n}x {gname}{' ' + arch if arch else ''}" for (gname, arch), n in groups.items())
    return res("yes", f"yes ({version}, {runtime}, {gdesc})")


def exit_code(report: Report, fail_on: Severity) -> ExitCode:
    return ExitCode.FINDINGS if any(f.severity >= fail_on for f in report.failed()) else ExitCode.OK


def stamp(report: Report, env: Any, started_wall: float, started: float, live: bool = True) -> Report:
    """Fill the typed report header: tool and KB version, host (live facts only), start time, duration."""
    import time

    from gpuvet.model import ReportHeader

    kb = report.meta.get("kb") or {}
    host = ""
    if live:
        try:
            host = env.system().hostname()
        except Exception:  # a fake System without a hostname: the header just leaves it out
            host = ""
    report.header = ReportHeader(
        tool_version=__version__, kb_version=kb.get("version") if isinstance(kb, dict) else None,
        kb_date=kb.get("date") if isinstance(kb, dict) else None, host=host,
        started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started_wall)),  # no datetime import
        duration_s=round(env.clock() - started, 3))
    return report
