#!/usr/bin/env python3
"""Speed and memory of `gpuvet diagnose` on a 1 GB training log, against `grep -E -f` with the same patterns.

Generates (once, cached in --dir) a realistic 1 GiB log: Python-logging lines with timestamps, tqdm progress
bars redrawn with carriage returns, `[rankN]:` prefixes, ANSI-coloured warnings, NCCL INFO chatter, a few
multi-kilobyte lines, and near the end a real failure (an NCCL error inside a traceback, then an OOM).
Then, in one run on this machine:

1. `LC_ALL=C grep -a -E -c -f PATTERNS LOG`, PATTERNS = every signature pattern gpuvet uses (written by this
   script from the knowledge base, the same file gpuvet's prefilter uses);
2. `gpuvet diagnose --format json LOG` (default mode: grep prefilter + Python normalisation and matching);
3. `gpuvet diagnose --no-grep` on a 64 MiB prefix (the pure-Python fallback), reported in s/GiB;
4. peak RSS of gpuvet on a 64 MiB prefix and on the 1 GiB file (flat memory = about equal).

Hostile shapes as well (``--extra``, on by default; ``--only-extra`` skips the 1 GiB part): a deep
traceback (200,000 frame lines, ~14 MB: every line looks like a traceback, the old per-line hint pass took
44 s), a log of 10 MB lines (no newline for 10 MB, five times, then the error), and a 4 MiB training log of real
captured lines (bench/training_log.py) as a file, on standard input redirected from the file and through a pipe,
each timed against grep with the same patterns; written to bench/results/diagnose_speed_extra.md (--extra-out).

Writes bench/results/diagnose_speed.md (machine: nproc, CPU model, Python, grep version).
usage: bench/diagnose_speed.py [--dir /tmp/gpuvet-bench] [--size-mib 1024] [--repeat 3] [--only-extra]
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def make_log(path: Path, size: int) -> None:
    rnd = random.Random(7)
    lines: list[str] = []
    for i in range(120_000):
        r = rnd.random()
        if r < 0.35:
            lines.append(f"2025-06-0{i % 9 + 1} 12:{i % 60:02d}:{(i * 7) % 60:02d},{i % 1000:03d} - INFO - trainer.py:{i % 900} - "
                         f"step {i} loss={rnd.random() * 3:.4f} lr={3e-4 * rnd.random():.3e} grad_norm={rnd.random() * 5:.3f} "
                         f"tokens/s={rnd.randint(9000, 15000)}\n")
        elif r < 0.55:
            done = i % 1000
            bar = "█" * (done // 40) + " " * (25 - done // 40)
            frames = "".join(f"\r{p:3d}%|{bar}| {done * 50 + p}/50000 [01:{p % 60:02d}<10:00, {rnd.random() * 30:.2f}it/s]"
                             for p in range(0, 100, 20))
            lines.append(frames + "\n")
        elif r < 0.75:
            lines.append(f"[rank{i % 8}]: epoch 3 iter {i}: train/loss {rnd.random() * 4:.3f} val/acc 0.{rnd.randint(0, 999):03d} "
                         f"mem {rnd.random() * 70:.1f}GiB samples/s {rnd.randint(100, 900)}\n")
        elif r < 0.85:
            lines.append(f"\x1b[33mWARNING\x1b[0m 06-0{i % 9 + 1} 12:00:{i % 60:02d} [scheduler.py:{i % 300}] "
                         f"batch {i} padded to {rnd.choice([512, 1024, 2048])} tokens\n")
        elif r < 0.97:
            lines.append(f"node{i % 4}:{1000 + i % 8}:{2000 + i % 8} [{i % 8}] NCCL INFO Channel {i % 32:02d}/0 : "
                         f"{i % 8}[{i % 8}] -> {(i + 1) % 8}[{(i + 1) % 8}] via P2P/IPC\n")
        else:
            lines.append("metrics " + ",".join(f"{k}={rnd.random():.5f}" for k in range(300)) + "\n")
    block = "".join(lines).encode()
    failure = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 812, in <module>\n'
        "    dist.barrier()\n"
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error "
        "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 3 has a total capacity of "
        "79.10 GiB of which 1.20 GiB is free.\n").encode()
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        n = 0
        while n + len(block) < size:
            fh.write(block)
            n += len(block)
        fh.write(block[: max(0, size - n - len(failure))])
        fh.write(b"\n" + failure)
    os.replace(tmp, path)


def make_deep_traceback(path: Path, frames: int = 100_000) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("Traceback (most recent call last):\n")
        for i in range(frames):
            fh.write(f'  File "/opt/venv/lib/python3.11/site-packages/mylib/recursive_module.py", line {i % 900 + 1}, '
                     f"in recurse_level_{i % 50}\n    return recurse(x - 1, depth={i})\n")
        fh.write("RuntimeError: CUDA error: an illegal memory access was encountered\n")


def make_one_line(path: Path) -> None:
    path.write_text("RuntimeError: CUDA error: out of memory\n", encoding="utf-8")


def compile_gpuvet(gpuvet: str) -> None:
    """Byte-compile the gpuvet that ``gpuvet`` runs, as an installed package is (pip compiles at install).  This VM
    exports PYTHONDONTWRITEBYTECODE=1: an editable checkout's sources were compiled in every timed process (~0.3 s
    of CPU of each `gpuvet diagnose` here, day 8's numbers included)."""
    code = "import compileall, os, gpuvet; compileall.compile_dir(os.path.dirname(gpuvet.__file__), quiet=1)"
    exe = Path(gpuvet)
    py = exe.with_name("python") if exe.with_name("python").exists() else Path(sys.executable)
    if exe.suffix == "" and exe.exists() and exe.read_bytes()[:2] == b"#!":
        first = exe.read_text(errors="replace").splitlines()[0][2:].strip().split()
        if first and Path(first[0]).exists() and "python" in Path(first[0]).name:
            py = Path(first[0])
    subprocess.run([str(py), "-c", code], check=False, env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_long_lines(path: Path, count: int = 5, size: int = 10 << 20) -> None:
    rnd = random.Random(11)
    with open(path, "wb") as fh:
        for i in range(count):
            chunk = ("".join(f"{rnd.random():.6f}," for _ in range(1000))).encode()
            n = size // len(chunk)
            fh.write(b"metrics=" + chunk * n + b"\n")
        fh.write(b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n")


def make_training_log(path: Path, size: int = 4 << 20) -> None:
    """A training log of real captured lines (bench/training_log.py), varied numbers, a CUDA OOM at the end."""
    sys.path.insert(0, str(HERE))
    import training_log

    training_log.make(path, size)


def extra_cases(args, pats: Path, grep: str, cenv: dict) -> str:
    import json
    import shlex

    rows = []
    greps: dict[Path, tuple[float, float]] = {}
    load0 = os.getloadavg()[0]
    for name, maker, how in (("a one-line log (start-up, KB load, checks)", make_one_line, "file"),
                             ("deep traceback (200,000 frame lines)", make_deep_traceback, "file"),
                             ("five 10 MB lines, then the error", make_long_lines, "file"),
                             ("training log of real captured lines", make_training_log, "file"),
                             ("same, `--no-grep` (Python alone)", make_training_log, "file-nogrep"),
                             ("same, standard input redirected (`- < log`)", make_training_log, "stdin"),
                             ("same, a pipe (`cat log | gpuvet diagnose -`)", make_training_log, "pipe"),
                             ("same, a pipe, `--no-grep` (Python alone)", make_training_log, "pipe-nogrep"),
                             ("deep traceback, a pipe", make_deep_traceback, "pipe")):
        path = args.dir / ("deep-traceback.log" if "deep" in name else "one-line.log" if "one-line" in name else
                           "long-lines.log" if "10 MB" in name else "training-real-4MiB.log")
        if not path.exists():
            maker(path)
        if path not in greps:  # once per file (grep -E -f on the real lines is slow: its DFA blows up)
            gs = [timed([grep, "-a", "-E", "-c", "-f", str(pats), str(path)], cenv)[0]
                  for _ in range(1 if "training" in path.name else args.repeat)]
            greps[path] = (min(gs), timed.last_cpu)  # type: ignore[attr-defined]
        g, gcpu = greps[path]
        runs, cpus = [], []
        for _ in range(args.repeat):
            nogrep = ["--no-grep"] if how.endswith("-nogrep") else []
            if how.startswith("file"):
                argv = [args.gpuvet, "diagnose", *nogrep, "--format", "json", str(path)]
            else:
                cmd = f"{shlex.quote(args.gpuvet)} diagnose {' '.join(nogrep)} --format json -"
                cmd = f"{cmd} < {shlex.quote(str(path))}" if how == "stdin" else f"cat {shlex.quote(str(path))} | {cmd}"
                argv = ["sh", "-c", cmd]
            runs.append(timed(argv))
            cpus.append(timed.last_cpu)  # type: ignore[attr-defined]
        d = min(r[0] for r in runs)
        rss = max(r[2] for r in runs)
        doc = json.loads(timed.last_out)  # type: ignore[attr-defined]
        top = [x["cause"] for x in doc["diagnoses"][:2]]
        rows.append(f"| {name}, {path.stat().st_size / 2**20:.1f} MiB | {g:.2f} | {gcpu:.2f} | {d:.2f} | {min(cpus):.2f} | "
                    f"{rss / 1024:.0f} MiB | {doc['scan']['mode']}, {doc['scan']['candidate_lines']} candidates | {top} |")
    py = [timed([sys.executable, "-c", "pass"]) and timed.last_cpu for _ in range(args.repeat)]  # type: ignore[attr-defined]
    pys = [timed([sys.executable, "-c", "pass"])[0] for _ in range(args.repeat)]
    return "\n".join([
        "# `gpuvet diagnose` on hostile log shapes vs `grep -E -f` (same patterns)", "",
        f"Start-up reference: `python -c pass` (this interpreter) {min(pys):.3f} s wall, {min(py):.3f} s CPU.", "",
        f"Machine: nproc {os.cpu_count()}, CPU `{cpu_model()}`, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}, load average {load0:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end. gpuvet: `{args.gpuvet}`. "
        f"Best of {args.repeat}; gpuvet times include start-up and the KB load; CPU is user + sys of the process and "
        f"its waited children (its grep; for stdin rows the shell and `cat` too) "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).", "",
        "| log | grep s | grep CPU s | gpuvet s | gpuvet CPU s | gpuvet peak RSS | scan | top causes |",
        "|---|---|---|---|---|---|---|---|", *rows, ""])


def timed(argv: list[str], env: dict | None = None) -> tuple[float, int, int]:
    """(seconds, exit status, peak RSS in KiB) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = proc.stdout.read()  # type: ignore[union-attr]
    _, status, ru = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    timed.last_out = out  # type: ignore[attr-defined]
    timed.last_cpu = ru.ru_utime + ru.ru_stime  # type: ignore[attr-defined]  # CPU s (with waited children: grep)
    return dt, proc.returncode, ru.ru_maxrss


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, default=Path("/tmp/gpuvet-bench"))
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gpuvet", default=str(Path(sys.executable).with_name("gpuvet")))
    ap.add_argument("--out", type=Path, default=HERE / "results" / "diagnose_speed.md")
    ap.add_argument("--no-extra", dest="extra", action="store_false", help="skip the deep-traceback and 10 MB-line cases")
    ap.add_argument("--only-extra", action="store_true", help="only the deep-traceback and 10 MB-line cases")
    ap.add_argument("--extra-out", type=Path, default=HERE / "results" / "diagnose_speed_extra.md")
    args = ap.parse_args()
    compile_gpuvet(args.gpuvet)
    from gpuvet.logs.extract import PREFILTER_PATTERNS
    from gpuvet.logs.signatures import load_catalog

    args.dir.mkdir(parents=True, exist_ok=True)
    if args.extra or args.only_extra:
        pats0 = args.dir / "patterns.txt"
        cat0 = load_catalog()
        pats0.write_text("\n".join(cat0.patterns() + list(PREFILTER_PATTERNS)) + "\n", encoding="utf-8")
        extra = extra_cases(args, pats0, shutil.which("grep") or "grep", dict(os.environ, LC_ALL="C"))
        args.extra_out.write_text(extra, encoding="utf-8")
        print(extra)
        if args.only_extra:
            return 0
    size = args.size_mib << 20
    log = args.dir / f"train-{args.size_mib}MiB.log"
    if not log.exists() or log.stat().st_size < size:  # make_log writes a little more than size
        print(f"generating {log} ...", flush=True)
        make_log(log, size)
    small = args.dir / "train-64MiB.log"
    if not small.exists():
        with open(log, "rb") as src, open(small, "wb") as dst:
            dst.write(src.read(64 << 20))
            dst.write(b"\nRuntimeError: CUDA error: out of memory\n")
    pats = args.dir / "patterns.txt"
    cat = load_catalog()
    pats.write_text("\n".join(cat.patterns() + list(PREFILTER_PATTERNS)) + "\n", encoding="utf-8")
    grep = shutil.which("grep") or "grep"
    cenv = dict(os.environ, LC_ALL="C")
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=False)  # warm the page cache

    g_times, d_times, d_rss, g_cpu, d_cpu = [], [], [], [], []
    for _ in range(args.repeat):
        dt, rc, _ = timed([grep, "-a", "-E", "-c", "-f", str(pats), str(log)], cenv)
        g_times.append(dt)
        g_cpu.append(timed.last_cpu)  # type: ignore[attr-defined]
        grep_count = timed.last_out.decode().strip()  # type: ignore[attr-defined]
        dt, rc, rss = timed([args.gpuvet, "diagnose", "--format", "json", str(log)])
        d_times.append(dt)
        d_cpu.append(timed.last_cpu)  # type: ignore[attr-defined]
        d_rss.append(rss)
        import json

        doc = json.loads(timed.last_out)  # type: ignore[attr-defined]
    top = [d["cause"] for d in doc["diagnoses"][:3]]
    _, _, rss_small = timed([args.gpuvet, "diagnose", "--format", "json", str(small)])
    py_dt, _, py_rss = timed([args.gpuvet, "diagnose", "--no-grep", "--format", "json", str(small)])
    g, d = min(g_times), min(d_times)
    grep_ver = subprocess.run([grep, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    ratio = d / g
    lines = [
        "# `gpuvet diagnose` speed on a 1 GiB log vs `grep -E -f` (same patterns)",
        "",
        f"Machine: nproc {os.cpu_count()}, CPU `{cpu_model()}`, Python {platform.python_version()}, {grep_ver}, "
        f"{platform.system()} {platform.release()}. Command: `python3 bench/diagnose_speed.py` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).",
        "",
        f"Log: {size / 2**30:.2f} GiB synthetic training log ({log.name}); {len(cat.patterns()) + len(PREFILTER_PATTERNS)} "
        f"patterns ({len(cat.signatures)} signatures + fact patterns). Best of {args.repeat} runs, page cache warm.",
        "",
        "| run | seconds | CPU seconds (user + sys, best) | peak RSS |",
        "|---|---|---|---|",
        f"| `LC_ALL=C grep -a -E -c -f patterns` ({grep_count} matching lines) | {g:.2f} | {min(g_cpu):.2f} | - |",
        f"| `gpuvet diagnose --format json` (grep prefilter) | {d:.2f} | {min(d_cpu):.2f} | {max(d_rss) / 1024:.0f} MiB |",
        f"| same, 64 MiB prefix | - | - | {rss_small / 1024:.0f} MiB |",
        f"| `gpuvet diagnose --no-grep` (pure Python), 64 MiB prefix | {py_dt:.2f} ({py_dt * 16:.1f} s/GiB) | - | {py_rss / 1024:.0f} MiB |",
        "",
        f"**Ratio gpuvet / grep: {ratio:.2f}** (requirement: at most 2.0; by CPU time {min(d_cpu) / min(g_cpu):.2f}, "
        f"gpuvet's including its grep child; load average {os.getloadavg()[0]:.1f} at the end). Memory: {rss_small / 1024:.0f} MiB at 64 MiB "
        f"vs {max(d_rss) / 1024:.0f} MiB at 1 GiB (flat: lines are streamed, only matches are kept).",
        "",
        f"Top diagnoses found: {top}. All gpuvet times include interpreter start-up, the knowledge base load and "
        "the checks. grep times: " + ", ".join(f"{x:.2f}" for x in g_times) + "; gpuvet: " + ", ".join(f"{x:.2f}" for x in d_times),
    ]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0 if ratio <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
