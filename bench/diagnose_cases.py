#!/usr/bin/env python3
"""Every answer and the per-case time of `gpuvet diagnose --format json` on the tuning incidents.

Two uses (issue 9's speed work must change no answer and bring a case under 0.3 s through the CLI):

* **Answers** (default: in-process, one ``gpuvet.cli.main.main`` call per case, ~10 ms each): every case's
  posted text (env then log, as ``../shared/benchmarks/score_incidents.py`` writes it) is written to the same
  file name, diagnosed, and its whole JSON report kept minus what varies between runs (times, the start time).
  ``--out A.json`` saves them (~5 MB), ``--rankings A.json`` a compact reference (exit status, ranking and the
  SHA-256 of each whole report); ``--compare REF.json`` (either kind) exits 1 and lists every case whose report
  differs.
* **Time through the CLI** (``--cli``): one fresh ``python -m gpuvet diagnose --format json FILE`` process per
  case, as score_incidents.py runs it; wall and CPU time per case, median / p90 / max, the machine and its load
  average before and after.  ``--src DIR`` (repeatable) runs that tree's code (``PYTHONPATH=DIR``); with two,
  each case runs under both, alternating, so both see the same load (before/after in one run).  Bytecode is
  compiled first (this VM exports PYTHONDONTWRITEBYTECODE: an edited module would be compiled in every
  process).  The reports are kept (and compared) the same way, so a fresh process is checked as well;
  ``--every N`` takes every N-th case (the whole set through the CLI costs ~1000 processes).

The cases are the TUNING_DIRS of tools/train_fallback.py; bench/incidents-new9/frozen (HELD_OUT) is refused.

    /tmp/before/bench/diagnose_cases.py --out /tmp/before.json DIRS...  # the other tree's own copy, same DIRS
    .venv/bin/python bench/diagnose_cases.py --compare /tmp/before.json DIRS...
    .venv/bin/python bench/diagnose_cases.py --cli --every 4 --src /tmp/before/src --src src --md OUT.md
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tools"))

import incident_cv as cv  # noqa: E402
import train_fallback as tf  # noqa: E402

VARYING = {("meta", "elapsed_s"), ("header", "started_at"), ("header", "duration_s")}


def compact(entry: dict) -> dict:
    """A report as the committed reference keeps it: exit status, the ranking (cause, component, confidence,
    signatures), and the SHA-256 of the whole report (so equality is still checked on everything)."""
    if "sha256" in entry:
        return entry
    doc = entry["report"]
    ranking = [[d.get("cause"), d.get("component"), d.get("confidence"), d.get("signatures")]
               for d in doc.get("diagnoses", [])] if isinstance(doc.get("diagnoses"), list) else None
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()
    return {"exit": entry["exit"], "ranking": ranking, "sha256": digest}


def stable(doc: dict) -> dict:
    """The report without what differs between two runs of the same input (times)."""
    out = {}
    for k, v in doc.items():
        if isinstance(v, dict):
            v = {kk: vv for kk, vv in v.items() if (k, kk) not in VARYING}
        out[k] = v
    return out


def differences(a, b, path: str = "") -> list[str]:
    """The JSON paths where two reports differ."""
    if type(a) is not type(b):
        return [path or "/"]
    if isinstance(a, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path} (length {len(a)} -> {len(b)})"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [path]


def machine() -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu, "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}"}


def run_in_process(path: str) -> tuple[int, str]:
    from gpuvet.app.env import Environment
    from gpuvet.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdin=io.StringIO(""), stdout=out, stderr=err)
    rc = main(["diagnose", "--format", "json", path], env)
    return rc, out.getvalue()


def run_cli(cmd: list[str], path: str, src: str | None) -> tuple[int, str, float, float]:
    """exit status, stdout, wall seconds, CPU seconds (user + system) of the child"""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd + [path], capture_output=True, text=True, timeout=60, env=env)
    dt = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc.returncode, proc.stdout, dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def stats(times: list[float], cpu: list[float]) -> dict:
    ts, cs = sorted(times), sorted(cpu)
    return {"cases": len(ts), "median_s": statistics.median(ts), "p90_s": ts[int(0.9 * (len(ts) - 1))],
            "max_s": ts[-1], "mean_s": statistics.fmean(ts), "over_0.3s": sum(t > 0.3 for t in ts),
            "cpu_median_s": statistics.median(cs), "cpu_p90_s": cs[int(0.9 * (len(cs) - 1))]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--cli", action="store_true", help="one fresh process per case, timed")
    ap.add_argument("--cmd", default=f"{sys.executable} -m gpuvet diagnose --format json")
    ap.add_argument("--src", action="append", default=[], help="PYTHONPATH of the code to time (repeatable)")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--out", help="write the reports (JSON; of the last --src)")
    ap.add_argument("--rankings", help="write the compact reference (exit, ranking, SHA-256 of each report)")
    ap.add_argument("--compare", help="a file written by --out or --rankings: list every case whose report differs")
    ap.add_argument("--md", help="write the timing summary (Markdown; with --cli)")
    ap.add_argument("--label", default="")
    args = ap.parse_args(argv)
    dirs = args.dirs or [str(ROOT / d) for d in tf.TUNING_DIRS if (ROOT / d).is_dir()]
    cases = cv.load_cases(dirs)[:: max(1, args.every)]
    if args.src and not args.cli:  # incident_cv / train_fallback put this tree's src first on sys.path
        ap.error("--src needs --cli: in-process runs this tree's code (run the other tree's own copy of this "
                 "script, with the same case directories, for its reference)")
    srcs: list[str | None] = [str(Path(s).resolve()) for s in args.src] or [None]
    if args.cli:
        for src in srcs:  # compiled once, as an installed package is
            subprocess.run([sys.executable, "-m", "compileall", "-q", src or str(ROOT / "src")], check=False,
                           stdout=subprocess.DEVNULL)
    reports: dict[str | None, dict[str, dict]] = {src: {} for src in srcs}
    times: dict[str | None, list[float]] = {src: [] for src in srcs}
    cpu: dict[str | None, list[float]] = {src: [] for src in srcs}
    load0 = os.getloadavg()
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpuvet-cases-") as tmp:
        path = os.path.join(tmp, "case.txt")  # one name: the report names its input
        for n, case in enumerate(cases):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(cv.posted_text(case))
            key = f"{cv._set_name(case['_file'])}/{Path(case['_file']).name}"
            order = srcs if n % 2 == 0 else srcs[::-1]  # alternate who goes first
            for src in order:
                if args.cli:
                    rc, text, dt, c = run_cli(args.cmd.split(), path, src)
                    times[src].append(dt)
                    cpu[src].append(c)
                else:
                    rc, text = run_in_process(path)
                try:
                    doc = stable(json.loads(text.replace(path, "CASE")))  # the temporary directory's name varies
                except ValueError:
                    doc = {"unparsable": text[-500:]}
                reports[src][key] = {"exit": rc, "report": doc}
    wall = time.perf_counter() - t_all
    load1 = os.getloadavg()
    print(f"{len(cases)} cases in {wall:.1f} s (load {load0[0]:.2f} -> {load1[0]:.2f})")
    summary: dict = {}
    if args.cli:
        summary = {"load_before": load0, "load_after": load1, "machine": machine(), "cmd": args.cmd,
                   "every": args.every, "label": args.label, "runs": {}}
        for src in srcs:
            st = stats(times[src], cpu[src])
            summary["runs"][src or "installed"] = st
            print(f"{src or 'installed'}: median {st['median_s']:.3f} s  p90 {st['p90_s']:.3f} s  max {st['max_s']:.3f} s  "
                  f"over 0.3 s: {st['over_0.3s']}/{st['cases']}; CPU median {st['cpu_median_s']:.3f} s  p90 {st['cpu_p90_s']:.3f} s")
    last = reports[srcs[-1]]
    rc = 0
    if len(srcs) > 1:
        diff = [k for k in last if reports[srcs[0]][k] != last[k]]
        print(f"{len(diff)} of {len(last)} reports differ between {srcs[0]} and {srcs[-1]}")
        for k in diff:
            print(f"DIFFERS {k}")
        rc = 1 if diff else 0
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "reports": last}, indent=0, sort_keys=True) + "\n")
    if args.rankings:
        rows = [f"{json.dumps(k)}: {json.dumps(compact(v), sort_keys=True)}" for k, v in sorted(last.items())]
        Path(args.rankings).write_text(  # one case a line
            f'{{"label": {json.dumps(args.label)}, "summary": {json.dumps(summary, sort_keys=True)}, "reports": {{\n'
            + ",\n".join(rows) + "\n}}\n")
    if args.compare:
        ref = json.loads(Path(args.compare).read_text())["reports"]
        common = sorted(set(ref) & set(last))
        if any("sha256" in v for v in ref.values()):  # a compact reference: compare the compact forms
            last = {k: compact(v) for k, v in last.items()}
        diff = [k for k in common if ref[k] != last[k]]
        missing = sorted(set(ref) - set(last)) if args.every == 1 else []
        for k in diff:
            a, b = ref[k], last[k]
            if "sha256" in a:
                print(f"DIFFERS {k}: exit {a['exit']} -> {b['exit']}; ranking {a['ranking']} -> {b['ranking']}")
                continue
            ca = [d.get("cause") for d in a["report"].get("diagnoses", [])]
            cb = [d.get("cause") for d in b["report"].get("diagnoses", [])]
            print(f"DIFFERS {k}: exit {a['exit']} -> {b['exit']}; causes {ca} -> {cb}; at {', '.join(differences(a, b)[:6])}")
        print(f"compared {len(common)} cases with {args.compare}: {len(diff)} differ, "
              f"{len(missing)} missing, {len(set(last) - set(ref))} new")
        rc = 1 if diff or missing else rc
    if args.md and summary:
        m = summary["machine"]
        lines = [f"# `gpuvet diagnose --format json` per case through the CLI{(' (' + args.label + ')') if args.label else ''}",
                 "", f"bench/diagnose_cases.py --cli --every {args.every}: {len(cases)} tuning cases, one fresh process each "
                 f"(`{args.cmd} FILE`){', each tree in turn, alternating' if len(srcs) > 1 else ''}.", "",
                 f"Machine: {m['nproc']} CPUs, {m['cpu']}, Python {m['python']}, {m['system']}; "
                 f"load average {load0[0]:.2f} before, {load1[0]:.2f} after.", "",
                 "| code | wall median | wall p90 | wall max | over 0.3 s | CPU median | CPU p90 |",
                 "|---|---:|---:|---:|---:|---:|---:|"]
        for name, st in summary["runs"].items():
            lines.append(f"| {name} | {st['median_s']:.3f} s | {st['p90_s']:.3f} s | {st['max_s']:.3f} s | "
                         f"{st['over_0.3s']}/{st['cases']} | {st['cpu_median_s']:.3f} s | {st['cpu_p90_s']:.3f} s |")
        Path(args.md).write_text("\n".join(lines) + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
