"""``rollback``: a plan back to an earlier snapshot (pure, ``history.rollback``), and ``--into DIR``:
build that stack in a new, isolated virtual environment (uv when it is installed, pip otherwise),
never touching the running one, then verify it (pip check, ``gpuvet check`` on it, a matmul and a
conv2d in the framework on the GPU when there is one, the CPU otherwise; ``gpuvet validate`` when
asked and available).  A failure half-way stops there and leaves the half-built environment marked
(``DIR/.gpuvet-rollback.json`` says ``"state": "failed"`` and which step; ``DIR/ROLLBACK-FAILED.txt``)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from gpuvet.model import Evidence, Finding, Outcome, Report, Severity
from gpuvet.model.errors import InputError, UsageError
from gpuvet.model.redact import redact_text

from .env import Environment

MARKER = ".gpuvet-rollback.json"
FAILED_NOTE = "ROLLBACK-FAILED.txt"

# The post-rollback smoke test, run by the new environment's interpreter (never in gpuvet's process).
SMOKE = r"""
import json, sys, time
t0 = time.time()
out = {}
try:
    import torch
except Exception as exc:
    print(json.dumps({"ok": False, "stage": "import", "error": f"{type(exc).__name__}: {exc}"})); sys.exit(1)
out["torch"] = torch.__version__
dev = "cuda" if torch.cuda.is_available() else "cpu"
out["device"] = dev if dev == "cpu" else torch.cuda.get_device_name(0)
try:
    g = torch.Generator().manual_seed(0)
    a = torch.randn(256, 256, generator=g, dtype=torch.float64); b = torch.randn(256, 256, generator=g, dtype=torch.float64)
    ref = a @ b
    got = (a.float().to(dev) @ b.float().to(dev)).double().cpu()
    out["matmul_max_rel_err"] = float(((got - ref).abs().max() / ref.abs().max()).item())
    x = torch.randn(2, 3, 32, 32, generator=g, dtype=torch.float64); w = torch.randn(8, 3, 3, 3, generator=g, dtype=torch.float64)
    ref = torch.nn.functional.conv2d(x, w, padding=1)
    got = torch.nn.functional.conv2d(x.float().to(dev), w.float().to(dev), padding=1).double().cpu()
    out["conv2d_max_rel_err"] = float(((got - ref).abs().max() / ref.abs().max()).item())
    if dev == "cuda":
        torch.cuda.synchronize()
    tol = 5e-2 if dev != "cpu" else 1e-4  # TF32 / fp32 on a GPU; fp32 on the CPU
    out["ok"] = out["matmul_max_rel_err"] < tol and out["conv2d_max_rel_err"] < tol
except Exception as exc:
    out.update(ok=False, stage="compute", error=f"{type(exc).__name__}: {exc}")
out["seconds"] = round(time.time() - t0, 3)
print(json.dumps(out)); sys.exit(0 if out.get("ok") else 1)
"""


@dataclass
class RollbackOptions:
    to: str = "good"
    current: str = "now"
    into: str | None = None
    db: str | None = None
    python: str | None = None
    index_map: dict[str, str] = field(default_factory=dict)
    find_links: tuple[str, ...] = ()
    sizes: bool = False  # ask remote indexes (PEP 691 JSON) for the download sizes
    validate: bool = False
    deadline: float = 3.0
    step_timeout: float = 1800.0
    installer: str | None = None  # uv | pip (default: uv when on PATH)


def make_plan(opts: RollbackOptions, env: Environment):
    from gpuvet import kb as kbmod
    from gpuvet.history.rollback import plan

    from .snapshot import resolve

    target = resolve(opts.to, env, opts.db, opts.python, opts.deadline)
    current = resolve(opts.current, env, opts.db, opts.python, opts.deadline) if not opts.into else \
        {"distributions": [], "facts": target.get("facts"), "gpu_trees": target.get("gpu_trees"),
         "os_packages": target.get("os_packages")}  # a new environment starts empty; the system stays as it is
    python = os.path.join(opts.into, "bin", "python") if opts.into else \
        (opts.python or target.get("python", {}).get("executable") or "python")
    p = plan(current, target, kbmod.load(), opts.index_map, python=python, find_links=opts.find_links)
    _download_sizes(p, opts, target)
    if opts.into:
        # OS, driver and tree steps do not apply to a new virtual environment: compare them with the machine
        now = resolve(opts.current, env, opts.db, opts.python, opts.deadline)
        sys_plan = plan(now, target, kbmod.load(), opts.index_map, python=python, find_links=opts.find_links)
        p.steps = [s for s in sys_plan.steps if s.kind in ("driver", "tree", "os-packages")] + \
                  [s for s in p.steps if s.kind not in ("driver", "tree", "os-packages", "python-remove")]
        p.cost.update({k: sys_plan.cost[k] for k in ("needs_root", "needs_reboot", "os_packages")})
    return p, target


def _wheel_matches(fname: str, name: str, version: str, py_tag: str) -> bool:
    import re

    stem = re.sub(r"[-_.]+", "_", name).lower()
    if not fname.lower().startswith(f"{stem}-{version.lower()}-".replace("+", "+")) or not fname.endswith(".whl"):
        return False
    return py_tag in fname or "-py3-" in fname or "-py2.py3-" in fname or "abi3" in fname


def _download_sizes(p: Any, opts: RollbackOptions, target: dict[str, Any]) -> None:
    """Download sizes where an index or a wheel directory says: local ``--find-links`` directories and
    ``file://`` indexes always, remote indexes (PEP 691 JSON, the ``size`` of PEP 700) with ``--sizes``."""
    import re
    import urllib.parse

    pyv = (target.get("python") or {}).get("version", "") or "%d.%d" % sys.version_info[:2]
    py_tag = "cp" + "".join(pyv.split(".")[:2])
    total, known, unknown = 0, [], []
    for s in p.steps:
        if s.kind != "python" or not s.argv:
            continue
        for pin in s.packages:
            if "==" not in pin:
                unknown.append(pin)
                continue
            name, version = pin.split("==", 1)
            size = None
            for d in opts.find_links:
                d = d[7:] if d.startswith("file://") else d
                if os.path.isdir(d):
                    for f in os.listdir(d):
                        if _wheel_matches(f, name, version, py_tag):
                            size = os.path.getsize(os.path.join(d, f))
                            break
                if size is not None:
                    break
            idx = s.index_url or "https://pypi.org/simple"  # no --index-url: pip's default index
            if size is None and idx.startswith("file://"):
                page = os.path.join(urllib.parse.unquote(idx[7:]), re.sub(r"[-_.]+", "-", name).lower(), "index.html")
                try:
                    with open(page, encoding="utf-8", errors="replace") as fh:
                        for href in re.findall(r'href="([^"#]+)', fh.read()):
                            if _wheel_matches(os.path.basename(href), name, version, py_tag):
                                f = os.path.normpath(os.path.join(os.path.dirname(page), urllib.parse.unquote(href)))
                                size = os.path.getsize(f) if os.path.exists(f) else None
                                break
                except OSError:
                    pass
            if size is None and opts.sizes and idx.startswith("https://"):
                size = _remote_size(idx, name, version, py_tag)
            if size is None:
                unknown.append(pin)
            else:
                total += size
                known.append(pin)
    if known:
        p.cost["download_bytes_known"] = total
        p.cost["download_mb_known"] = round(total / 2**20, 1)
        p.cost["download_size_source"] = (f"the index or wheel directory for {len(known)} of {len(known) + len(unknown)} "
                                          "package(s); a rough estimate for the rest")
    if unknown:
        p.cost["download_size_unknown"] = unknown[:50]


def _remote_size(index: str, name: str, version: str, py_tag: str) -> int | None:
    import re
    import urllib.request

    url = index.rstrip("/") + "/" + re.sub(r"[-_.]+", "-", name).lower() + "/"
    req = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310 - an https index URL
            doc = json.loads(resp.read(8 * 2**20))
    except Exception:  # noqa: BLE001 - offline, HTML-only index, anything: size unknown
        return None
    for f in doc.get("files", []) if isinstance(doc, dict) else []:
        if isinstance(f, dict) and _wheel_matches(str(f.get("filename", "")), name, version, py_tag) \
                and isinstance(f.get("size"), int):
            return f["size"]
    return None


def _python_for(target: dict[str, Any]) -> str:
    exe = target.get("python", {}).get("executable") or ""
    want = target.get("python", {}).get("version", "")
    if exe and os.access(exe, os.X_OK):
        try:
            got = subprocess.run([exe, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                                 capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            got = ""
        if got and (not want or got == want):
            return exe
    return sys.executable


class _Build:
    def __init__(self, into: str, plan_dict: dict[str, Any], env: Environment):
        self.into, self.env = into, env
        self.state: dict[str, Any] = {"state": "building", "started_at": _now(), "target": plan_dict["target"],
                                      "steps": [], "running_environment_touched": False}
        self.findings: list[Finding] = []

    def save(self) -> None:
        tmp = os.path.join(self.into, MARKER + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(redact_text(json.dumps(self.state, indent=1)) + "\n")
        os.replace(tmp, os.path.join(self.into, MARKER))

    def step(self, code: str, name: str, title: str, argv: list[str], timeout: float, env: dict[str, str] | None = None) -> bool:
        t0 = time.monotonic()
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                                 stdin=subprocess.DEVNULL)
            rc, out = res.returncode, (res.stdout + "\n" + res.stderr).strip()
        except subprocess.TimeoutExpired as exc:
            rc, out = 124, f"timed out after {timeout:.0f} s: {(exc.stderr or b'')[-500:]!r}"
        except OSError as exc:
            rc, out = 127, f"cannot run {argv[0]}: {exc.strerror}"
        secs = round(time.monotonic() - t0, 2)
        tail = redact_text("\n".join(out.splitlines()[-15:]))
        entry = {"title": title, "command": redact_text(" ".join(argv)), "returncode": rc, "seconds": secs,
                 "output_tail": tail}
        self.state["steps"].append(entry)
        self.save()
        ok = rc == 0
        ev = [Evidence(redact_text(" ".join(argv))[:500], "command")]
        if not ok:
            ev += [Evidence(line, "output") for line in tail.splitlines()[-6:]]
        self.findings.append(Finding(code=code, name=name, severity=Severity.ERROR,
                                     outcome=Outcome.PASSED if ok else Outcome.FAILED,
                                     title=f"{title}: {'done' if ok else f'failed (exit {rc})'} in {secs} s",
                                     evidence=tuple(ev), cause="other", component="rollback"))
        return ok

    def fail(self, title: str) -> None:
        self.state.update(state="failed", failed_step=title, finished_at=_now())
        self.save()
        with open(os.path.join(self.into, FAILED_NOTE), "w", encoding="utf-8") as fh:
            fh.write(f"This environment was built by `gpuvet rollback --into` and is INCOMPLETE.\n"
                     f"It failed at: {title}\nDetails: {MARKER}. Do not use it; delete this directory and retry.\n"
                     f"The environment gpuvet was rolling back from was not touched.\n")


def _own_pip_can_target() -> bool:
    """Can gpuvet's own interpreter's pip install into another interpreter (pip >= 22.3, --python)?"""
    try:
        from importlib.metadata import version

        from packaging.version import Version

        return Version(version("pip")) >= Version("22.3")
    except Exception:  # noqa: BLE001 - no pip here (pipx, zipapp): the venv gets its own
        return False


def _pip(installer: str, py: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--python", py] if installer == "pip --python" else [py, "-m", "pip"]


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run(opts: RollbackOptions, env: Environment) -> Report:
    from gpuvet import __version__

    started = env.clock()
    p, target = make_plan(opts, env)
    report = Report(command="rollback", findings=[], facts=None, score=None,
                    meta={"gpuvet_version": __version__, "elapsed_s": 0.0},
                    extra={"plan": p.to_dict()})
    if not opts.into:
        report.meta["elapsed_s"] = round(env.clock() - started, 3)
        return report
    into = os.path.abspath(opts.into)
    if os.path.exists(into) and (not os.path.isdir(into) or os.listdir(into)):
        raise UsageError(f"--into {opts.into}: exists and is not empty (give a new directory)")
    try:
        os.makedirs(into, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--into {opts.into}: cannot create it: {exc.strerror}") from None
    b = _Build(into, p.to_dict(), env)
    b.state["plan"] = p.to_dict()
    b.save()
    installer = opts.installer or ("uv" if shutil.which("uv", path=env.environ.get("PATH")) else "pip")
    b.state["installer"] = installer
    base_py = _python_for(target)
    child_env = {k: v for k, v in env.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    child_env.setdefault("PATH", os.defpath)
    py = os.path.join(into, "bin", "python")
    if installer == "uv":
        ok = b.step("RBK001", "rollback-environment-created", "create the virtual environment (uv)",
                    ["uv", "venv", "--allow-existing", "--python", base_py, into], 300, child_env)  # DIR already holds the marker
    elif _own_pip_can_target():
        # a venv without a pip of its own (seconds instead of ensurepip's tens of seconds); gpuvet's pip
        # installs into it with --python
        ok = b.step("RBK001", "rollback-environment-created", "create the virtual environment",
                    [base_py, "-m", "venv", "--without-pip", into], 300, child_env)
        installer = "pip --python"
    else:
        ok = b.step("RBK001", "rollback-environment-created", "create the virtual environment",
                    [base_py, "-m", "venv", into], 300, child_env)
    steps = [s for s in p.steps if s.kind == "python" and s.argv]
    skipped_display = [s for s in p.steps if s.applicability == "display-only"]
    for s in steps if ok else []:
        argv = (["uv", "pip", "install", "--python", py, *s.argv] if installer == "uv"
                else [*_pip(installer, py), "install", "--disable-pip-version-check", "--no-input", "--no-compile",
                      *s.argv])  # no byte-compiling, as uv: Python compiles what it imports, the install is 2x faster
        if not b.step("RBK002", "rollback-step-installed", s.title, argv, opts.step_timeout, child_env):
            ok = False
            break
    if ok:
        argv = ["uv", "pip", "check", "--python", py] if installer == "uv" else [*_pip(installer, py), "check"]
        ok = b.step("RBK003", "rollback-requirements-consistent", "pip check", argv, 300, child_env)
    if not ok:
        failed = b.state["steps"][-1]["title"]
        b.fail(failed)
        report.findings = b.findings
        report.extra["into"] = {"path": into, "state": "failed", "failed_step": failed, "marker": os.path.join(into, MARKER)}
        report.meta["elapsed_s"] = round(env.clock() - started, 3)
        return report
    b.state["state"] = "built"
    b.save()
    verify = _verify(py, target, env, child_env, opts, b)
    b.state.update(state="verified" if verify else "verify-failed", finished_at=_now())
    b.save()
    if not verify:
        with open(os.path.join(into, FAILED_NOTE), "w", encoding="utf-8") as fh:
            fh.write("This environment was built by `gpuvet rollback --into` but FAILED its verification; "
                     f"see {MARKER}.\n")
    for s in skipped_display:
        b.findings.append(Finding(code="RBK009", name="rollback-system-step-left-to-you", severity=Severity.WARNING,
                                  outcome=Outcome.FAILED, title=f"not done (display-only, needs root"
                                  f"{' and a reboot' if s.needs_reboot else ''}): {s.title}",
                                  evidence=(Evidence(s.command, "plan"),), cause="other", component="rollback"))
    report.findings = b.findings
    report.extra["into"] = {"path": into, "state": b.state["state"], "python": py, "installer": installer,
                            "marker": os.path.join(into, MARKER)}
    report.meta["elapsed_s"] = round(env.clock() - started, 3)
    return report


def _verify(py: str, target: dict[str, Any], env: Environment, child_env: dict[str, str], opts: RollbackOptions,
            b: _Build) -> bool:
    from gpuvet.history.diff import compare

    from .check import CheckOptions
    from .check import run as run_check
    from .snapshot import SnapshotOptions, take

    ok = True
    # 1. gpuvet check on it, and what differs from the target snapshot (Python distributions)
    t = take(SnapshotOptions(python=py, deadline=opts.deadline, store=False), env)
    failed = [f for f in t.report.failed()]
    changes, _, _ = compare(target, t.doc)
    by_hand = {n for s in b.state.get("plan", {}).get("steps", []) if s.get("applicability") == "display-only"
               and s.get("kind") == "python" for n in s.get("packages", [])}
    dist_changes = [c for c in changes if c.source == "distributions" and c.subject not in by_hand
                    and c.subject not in ("pip", "setuptools", "wheel")]
    if by_hand:
        b.state["left_to_you"] = sorted(by_hand)
    b.state["check"] = {"score": t.report.score, "failed": [f.code for f in failed],
                        "differences_from_target": [c.text() for c in dist_changes]}
    b.findings.append(Finding(code="RBK004", name="rollback-environment-checked", severity=Severity.ERROR,
                              outcome=Outcome.FAILED if failed else Outcome.PASSED,
                              title=(f"gpuvet check on the new environment: score {t.report.score}"
                                     + (f", failing {', '.join(f.code for f in failed)}" if failed else "")),
                              evidence=tuple(Evidence(f"{f.code}: {f.title}", "gpuvet check") for f in failed[:8]),
                              cause="other", component="rollback"))
    ok &= not failed
    b.findings.append(Finding(code="RBK005", name="rollback-matches-snapshot", severity=Severity.ERROR,
                              outcome=Outcome.FAILED if dist_changes else Outcome.PASSED,
                              title=("the new environment's distributions match the snapshot" if not dist_changes else
                                     f"{len(dist_changes)} distribution(s) differ from the snapshot"),
                              evidence=tuple(Evidence(c.text(), "diff") for c in dist_changes[:10]),
                              cause="other", component="rollback"))
    ok &= not dist_changes
    # 2. the framework smoke test in the new environment (child process)
    has_torch = any(d["name"] == "torch" for d in t.doc.get("distributions", []))
    if has_torch:
        t0 = time.monotonic()
        try:
            res = subprocess.run([py, "-c", SMOKE], capture_output=True, text=True, timeout=600, env=child_env,
                                 stdin=subprocess.DEVNULL)
            line = (res.stdout.strip().splitlines() or ["{}"])[-1]
            try:
                result = json.loads(line)
            except ValueError:
                result = {"ok": False, "error": redact_text(res.stderr.strip()[-500:])}
            rc = res.returncode
        except subprocess.TimeoutExpired:
            result, rc = {"ok": False, "error": "timed out after 600 s"}, 124
        result["seconds_total"] = round(time.monotonic() - t0, 2)
        b.state["smoke"] = result
        passed = bool(result.get("ok")) and rc == 0
        ok &= passed
        ev = [Evidence(f"{k}: {v}", "smoke test") for k, v in result.items() if k != "ok"]
        b.findings.append(Finding(code="RBK006", name="rollback-framework-smoke-test", severity=Severity.ERROR,
                                  outcome=Outcome.PASSED if passed else Outcome.FAILED,
                                  title=f"torch {result.get('torch', '?')}: matmul and conv2d on {result.get('device', '?')} "
                                        f"{'agree with a float64 reference' if passed else 'FAILED'}",
                                  evidence=tuple(ev), cause="other", component="rollback"))
    else:
        b.findings.append(Finding(code="RBK006", name="rollback-framework-smoke-test", severity=Severity.ERROR,
                                  outcome=Outcome.SKIPPED, title="no torch in the snapshot: no framework smoke test",
                                  cause="other", component="rollback"))
    # 3. gpuvet validate --level quick in the new environment, when asked and this gpuvet has it
    if opts.validate:
        try:
            from .validate import ValidateOptions, run_validate
        except ImportError:
            run_validate = None  # type: ignore[assignment]
        if run_validate is None:
            b.findings.append(Finding(code="RBK007", name="rollback-validated", severity=Severity.WARNING,
                                      outcome=Outcome.UNKNOWN, title="gpuvet validate is not available in this gpuvet",
                                      cause="other", component="rollback"))
        else:
            try:
                vrep = run_validate(ValidateOptions(level="quick", python=py, save=False, db=opts.db), env)
                vfailed = [f for f in vrep.failed()]
                err = ""
            except Exception as exc:  # noqa: BLE001 - a validation bug must not hide the rollback's result
                vfailed, err = [], f"{type(exc).__name__}: {exc}"
            passed = not vfailed and not err
            ok &= passed
            b.state["validate"] = {"failed": [f.code for f in vfailed], "error": err}
            b.findings.append(Finding(code="RBK007", name="rollback-validated", severity=Severity.ERROR,
                                      outcome=Outcome.PASSED if passed else Outcome.FAILED,
                                      title="gpuvet validate --level quick on the new environment: " +
                                            ("passed" if passed else err or f"{len(vfailed)} case(s) failed"),
                                      evidence=tuple(Evidence(f"{f.code}: {f.title}", "validate") for f in vfailed[:8]),
                                      cause="other", component="rollback"))
    _ = CheckOptions, run_check
    return bool(ok)
