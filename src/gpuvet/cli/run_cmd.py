"""`gpuvet run [--timeout S] [--debug] [--bundle DIR] -- CMD ...`: run a command under gpuvet.

The child's standard output and standard error pass through unchanged, as they come.  When the child fails
(non-zero exit, killed by a signal, or still running after --timeout) gpuvet diagnoses the output it saw,
prints the diagnosis on standard error, and writes a crash bundle directory:

    output.log       the child's output (both streams, in arrival order, line by line)
    command.json     argv, exit status / signal / timeout, duration, the GPU-related environment variables
    facts.json       facts found in the output and, where readable, this machine's live facts
    diagnosis.json   the ranked diagnoses (the same document as `gpuvet diagnose --format json`)
    gpu-state.txt    nvidia-smi / rocm-smi / amd-smi output where those tools exist
    backtrace.txt    for a hung child: native backtrace via rocgdb / cuda-gdb / gdb (and py-spy) when installed
    debug-output.log with --debug: the output of the re-run with the vendors' synchronous/logging switches

Exit status: the child's own exit status; 128+N when the child was killed by signal N; 124 when gpuvet
stopped it after --timeout (as timeout(1) does); 2 for a usage error; 127 when the command cannot be started.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import click

from .common import env_of
from .env import GpuvetError

EPILOG = ("Exit status: the child's exit status; 128+N if it was killed by signal N; 124 if stopped after "
          "--timeout; 127 if it could not be started; 2 usage error.")

# --debug: synchronous launches and verbose logging, per the vendors' debugging guides
# (HIP: https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/debugging.html ;
#  CUDA: https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables ;
#  NCCL: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html).
DEBUG_ENV = {
    "AMD_SERIALIZE_KERNEL": "3",  # serialize kernel launches before and after: errors surface at the real call
    "AMD_SERIALIZE_COPY": "3",
    "AMD_LOG_LEVEL": "3",  # 3 = info: API calls that fail and why, without level 4's per-call flood
    "HIP_LAUNCH_BLOCKING": "1",
    "CUDA_LAUNCH_BLOCKING": "1",
    "TORCH_SHOW_CPP_STACKTRACES": "1",
    "TORCH_CPP_LOG_LEVEL": "INFO",
    "NCCL_DEBUG": "INFO",
    "RCCL_DEBUG": "INFO",
    "TORCH_DISTRIBUTED_DEBUG": "DETAIL",
    "PYTHONFAULTHANDLER": "1",
    "MIOPEN_ENABLE_LOGGING": "1",
    "MIOPEN_LOG_LEVEL": "4",
}
ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
            "LD_LIBRARY_PATH", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
            "NCCL_DEBUG", "CUDA_HOME", "ROCM_PATH", "TRITON_CACHE_DIR", "MIOPEN_USER_DB_PATH")


@dataclass
class Outcome:
    argv: list[str]
    returncode: int | None = None
    signal: int | None = None
    timed_out: bool = False
    started_error: str | None = None
    seconds: float = 0.0
    backtrace: str = ""
    scanner: Any = None
    head: bytearray = field(default_factory=bytearray)
    log_path: str = ""

    @property
    def failed(self) -> bool:
        return self.timed_out or self.started_error is not None or (self.returncode or 0) != 0

    @property
    def exit_status(self) -> int:
        if self.started_error is not None:
            return 127
        if self.timed_out:
            return 124
        if self.signal:
            return 128 + self.signal
        return int(self.returncode or 0)

    def describe(self) -> str:
        if self.started_error:
            return f"could not start: {self.started_error}"
        if self.timed_out:
            return f"still running after the timeout ({self.seconds:.1f}s): stopped"
        if self.signal:
            try:
                name = signal.Signals(self.signal).name
            except ValueError:
                name = str(self.signal)
            return f"killed by signal {name}"
        return f"exited with status {self.returncode}"


def _writer(stream):
    buf = getattr(stream, "buffer", None)
    lock = threading.Lock()

    def write(data: bytes) -> None:
        with lock:
            try:
                if buf is not None:
                    buf.write(data)
                    buf.flush()
                else:
                    stream.write(data.decode("utf-8", "replace"))
                    stream.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass

    return write


def run_child(argv: Sequence[str], env_vars: dict[str, str], out_write, err_write, log_path: str,
              timeout: float | None, on_hang=None) -> Outcome:
    from gpuvet.app.diagnose import HEAD_BYTES
    from gpuvet.logs.match import Scanner
    from gpuvet.logs.signatures import load_catalog

    oc = Outcome(list(argv), log_path=log_path)
    sc = Scanner(load_catalog())
    oc.scanner = sc
    lock = threading.Lock()
    counter = [0]
    log = open(log_path, "wb")
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env_vars, start_new_session=True)
    except OSError as exc:
        log.close()
        oc.started_error = exc.strerror or str(exc)
        return oc

    def pump(fd: int, write) -> None:
        pending = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            write(chunk)  # pass through unchanged, as it comes
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if len(pending) > 1 << 20:  # a huge line without newline: keep its tail
                pending = pending[-(1 << 16):]
            if lines:
                with lock:
                    for ln in lines:
                        counter[0] += 1
                        log.write(ln + b"\n")
                        if len(oc.head) < HEAD_BYTES:
                            oc.head += ln + b"\n"
                        sc.feed(counter[0], ln)
        if pending:
            with lock:
                counter[0] += 1
                log.write(pending + b"\n")
                sc.feed(counter[0], pending)

    threads = [threading.Thread(target=pump, args=(proc.stdout.fileno(), out_write), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr.fileno(), err_write), daemon=True)]
    for t in threads:
        t.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        oc.timed_out = True
        if on_hang is not None:
            try:
                oc.backtrace = on_hang(proc.pid)
            except Exception as exc:  # a debugger problem must not hide the diagnosis
                oc.backtrace = f"backtrace failed: {exc}"
        _stop(proc)
    except KeyboardInterrupt:  # the child runs in its own session: pass the interrupt on, then stop it
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=10)
        except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
            _stop(proc)
        raise
    for t in threads:
        t.join(5)
    oc.seconds = time.monotonic() - t0
    rc = proc.returncode
    if rc is not None and rc < 0:
        oc.signal = -rc
    oc.returncode = rc
    with lock:
        log.close()
    return oc


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def native_backtrace(system, pid: int) -> str:
    """Backtrace of a hung process: rocgdb / cuda-gdb / gdb when installed, plus py-spy for Python."""
    parts: list[str] = []
    for dbg in ("rocgdb", "cuda-gdb", "gdb"):
        if system.which(dbg):
            res = system.run([dbg, "-p", str(pid), "-batch", "-nx", "-ex", "set pagination off",
                              "-ex", "thread apply all bt"], timeout=60)
            parts.append(f"$ {dbg} -p {pid} -batch -ex 'thread apply all bt'\n{res.output or res.describe()}")
            break
    else:
        parts.append("no debugger (rocgdb, cuda-gdb, gdb) installed: no native backtrace")
    if system.which("py-spy"):
        res = system.run(["py-spy", "dump", "--pid", str(pid)], timeout=30)
        parts.append(f"$ py-spy dump --pid {pid}\n{res.output or res.describe()}")
    return "\n\n".join(parts) + "\n"


def gpu_state(system) -> str:
    parts = []
    for argv in (["nvidia-smi"], ["nvidia-smi", "-q"], ["rocm-smi"], ["amd-smi", "metric"]):
        if system.which(argv[0]):
            res = system.run(argv, timeout=15)
            parts.append(f"$ {' '.join(argv)}\n{res.output or res.describe()}")
    return "\n\n".join(parts) + "\n" if parts else "no GPU state tool (nvidia-smi, rocm-smi, amd-smi) found\n"


@click.command(name="run", epilog=EPILOG, context_settings={"ignore_unknown_options": True,
                                                            "allow_interspersed_args": False})
@click.option("--timeout", type=float, default=None, metavar="SECONDS",
              help="Treat the command as hung after this many seconds: take a backtrace, stop it, diagnose.")
@click.option("--debug", is_flag=True,
              help="On failure, re-run once with AMD_SERIALIZE_KERNEL=3, AMD_LOG_LEVEL=3, CUDA_LAUNCH_BLOCKING=1, "
                   "TORCH_SHOW_CPP_STACKTRACES=1, NCCL_DEBUG=INFO, ... so the error points at the real call.")
@click.option("--bundle", "bundle", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Crash bundle directory (default: ./gpuvet-crash-YYYYmmdd-HHMMSS).")
@click.option("--here/--no-here", default=True, show_default=True,
              help="Add this machine's live facts to the diagnosis of a failure.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED, required=True, metavar="-- CMD [ARGS]...")
@click.pass_context
def run_(ctx: click.Context, timeout, debug, bundle, here, command) -> int:
    """Run CMD under gpuvet; its output passes through unchanged.  If it fails (non-zero exit, signal, or hang
    past --timeout) gpuvet diagnoses the output, prints the diagnosis on standard error and writes a crash bundle."""
    env = env_of(ctx)
    argv = list(command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise click.UsageError("give the command to run after --")
    system = env.system()
    out_w, err_w = _writer(env.stdout), _writer(env.stderr)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    bdir = bundle or os.path.join(env.cwd, f"gpuvet-crash-{stamp}")
    tmp_log = os.path.join(env.cwd if os.access(env.cwd, os.W_OK) else "/tmp", f".gpuvet-run-{os.getpid()}.log")
    child_env = dict(env.environ)
    oc = run_child(argv, child_env, out_w, err_w, tmp_log, timeout, lambda pid: native_backtrace(system, pid))
    if oc.started_error is not None:
        _rm(tmp_log)
        env.stderr.write(f"gpuvet: cannot run {argv[0]}: {oc.started_error}\n")
        return 127
    if not oc.failed:
        _rm(tmp_log)
        return oc.exit_status
    try:
        os.makedirs(bdir, exist_ok=True)
    except OSError as exc:
        _rm(tmp_log)
        raise GpuvetError(f"cannot create crash bundle {bdir}: {exc.strerror}") from None
    os.replace(tmp_log, os.path.join(bdir, "output.log"))
    debug_oc = None
    if debug:
        env.stderr.write(f"gpuvet: {oc.describe()}; re-running with debug switches: "
                         f"{' '.join(f'{k}={v}' for k, v in DEBUG_ENV.items())}\n")
        denv = dict(child_env, **DEBUG_ENV)
        debug_oc = run_child(argv, denv, out_w, err_w, os.path.join(bdir, "debug-output.log"), timeout,
                             lambda pid: native_backtrace(system, pid))
    _write_bundle(bdir, oc, debug_oc, env, system, here)
    return oc.exit_status


def _rm(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _write_bundle(bdir: str, oc: Outcome, debug_oc: Outcome | None, env, system, here: bool) -> None:
    from gpuvet.app import diagnose as diagnosis
    from gpuvet.render import render
    from gpuvet.render.json import report_dict

    live = None
    if here:
        try:
            from gpuvet.probes.base import run_probes
            from gpuvet.probes.registry import all_probes

            live = run_probes(system, all_probes())
        except Exception:
            live = None
    use = oc
    if debug_oc is not None and debug_oc.scanner is not None and debug_oc.scanner.result.matches:
        use = debug_oc  # the synchronous re-run points at the real call
    bt_text = use.backtrace or (oc.backtrace if use is not oc else "")
    first_bt_line = None
    if bt_text:  # a hung child: what its threads were waiting in is evidence too (NCCL, device sync, ...)
        first_bt_line = use.scanner.result.lines + 1
        for i, line in enumerate(bt_text.splitlines()):
            use.scanner.feed(first_bt_line + i, "backtrace: " + line)
    scan = use.scanner.result
    facts = diagnosis.facts_from_text(use.head.decode("utf-8", "replace"), "output.log", scan, live)
    findings = diagnosis.findings_for(facts, live is not None)
    report = diagnosis.build_report(scan, facts, findings, os.path.join(bdir, "output.log"), None,
                                    "run" if use is oc else "run --debug")
    report.extra["run"] = {"argv": oc.argv, "result": oc.describe(), "exit_status": oc.exit_status,
                           "seconds": round(oc.seconds, 3), "bundle": bdir,
                           "backtrace_from_line": first_bt_line}
    doc = report_dict(report)

    def dump(name: str, text: str) -> None:
        with open(os.path.join(bdir, name), "w", encoding="utf-8") as fh:
            fh.write(text)

    dump("diagnosis.json", json.dumps(doc, indent=2, default=str) + "\n")
    dump("facts.json", json.dumps({"facts": facts.to_dict(), "probe_errors": [e.to_dict() for e in facts.errors]},
                                  indent=2, default=str) + "\n")
    cmd = {"argv": oc.argv, "result": oc.describe(), "returncode": oc.returncode, "signal": oc.signal,
           "timed_out": oc.timed_out, "exit_status": oc.exit_status, "seconds": round(oc.seconds, 3),
           "environment": {k: env.environ[k] for k in ENV_KEYS if k in env.environ}}
    if debug_oc is not None:
        cmd["debug_rerun"] = {"result": debug_oc.describe(), "exit_status": debug_oc.exit_status,
                              "environment": DEBUG_ENV}
    dump("command.json", json.dumps(cmd, indent=2) + "\n")
    dump("gpu-state.txt", gpu_state(system))
    bt = oc.backtrace or (debug_oc.backtrace if debug_oc else "")
    if bt:
        dump("backtrace.txt", bt)
    if not report.extra.get("diagnoses") and not report.extra.get("user_code_signals"):
        # a plain failure: nothing in the output points anywhere; one line, not the whole stack
        env.stderr.write(f"\ngpuvet: the command {oc.describe()}; nothing in its output points at the GPU stack. "
                         f"Crash bundle: {bdir} (gpuvet diagnose {os.path.join(bdir, 'output.log')} --here "
                         f"for the stack)\n")
        return
    report.extra["hide_stack"] = True  # the diagnosis and its evidence; the stack is in the bundle
    text = render(report, "terminal", color=False, width=env.width)
    env.stderr.write(f"\ngpuvet: the command {oc.describe()}. Crash bundle: {bdir}\n{text}")
