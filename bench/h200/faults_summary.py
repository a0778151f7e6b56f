#!/usr/bin/env python3
"""One screen from bench/h200/faults.sh's outputs: per scenario, `gpuvet check`'s score, exit status
and failed findings (code, severity, cause/component, first fix), and `gpuvet run`'s top diagnosis.

usage: python3 bench/h200/faults_summary.py DIR   (DIR = $OUT/faults)"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ORDER = ["healthy", "preload", "ldpath", "cc", "archlist", "archlist-only", "sm80ext"]


def rcs(d: Path) -> dict[str, str]:
    out = {}
    for line in (d / "rc.txt").read_text().splitlines() if (d / "rc.txt").exists() else []:
        if " rc=" in line:
            k, v = line.rsplit(" rc=", 1)
            out[k] = v
    return out


def fix_of(f: dict) -> str:
    fx = (f.get("fixes") or [{}])[0]
    return (fx.get("command") or fx.get("text") or "")[:150]


def main(argv: list[str]) -> int:
    d = Path(argv[1] if len(argv) > 1 else ".")
    rc = rcs(d)
    for name in ORDER + sorted(p.name for p in d.iterdir() if p.is_dir() and p.name not in ORDER + ["progs"]):
        sd = d / name
        if not sd.is_dir():
            continue
        print(f"== {name}")
        try:
            doc = json.loads((sd / "check.json").read_text())
        except (OSError, ValueError) as exc:
            print(f"  check: no JSON ({exc}); stderr: {(sd / 'check.err').read_text()[-300:] if (sd / 'check.err').exists() else ''}")
            doc = None
        if doc:
            print(f"  check: score {doc.get('score')} exit {rc.get(name + ' check', '?')}")
            for f in doc.get("findings", []):
                if f.get("outcome") == "failed":
                    print(f"    {f['code']} [{f['severity']}] {f.get('cause')}/{f.get('component')}: {f['title'][:230]}")
                    print(f"      fix: {fix_of(f)}")
            unknown = [f["code"] for f in doc.get("findings", []) if f.get("outcome") == "unknown"]
            if unknown:
                print(f"    unknown: {', '.join(unknown)}")
        diag = sd / "bundle" / "diagnosis.json"
        if (sd / "run.txt").exists():
            print(f"  run: exit {rc.get(name + ' run', '?')}")
            if diag.exists():
                dd = json.loads(diag.read_text())
                for i, x in enumerate((dd.get("diagnoses") or [])[:2]):
                    print(f"    #{i + 1} {x['cause']}/{x['component']} {x['confidence']:.2f} checks={x.get('checks')} "
                          f"signatures={x.get('signatures')}")
                    print(f"       {x['title'][:200]}")
                    print(f"       fix: {(x.get('fix') or '')[:200]}")
                if not dd.get("diagnoses"):
                    print("    no diagnosis")
            else:
                tail = (sd / "run.txt").read_text().strip().splitlines()[-3:]
                print("    (no bundle) " + " | ".join(tail)[:300])
            out = sd / "bundle" / "output.log"
            if out.exists():
                err = [ln for ln in out.read_text(errors="replace").splitlines() if "Error" in ln or "error" in ln]
                if err:
                    print(f"    program's error: {err[-1][:220]}")
    for extra in ("rc.txt", "check_speed.txt"):
        p = d / extra
        if p.exists():
            print(f"== {extra}\n" + p.read_text()[-1500:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
