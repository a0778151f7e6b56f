"""``report``: a version report of this stack (its findings and the changes since the good snapshot)
as Markdown and HTML, and ``--bundle``: a redacted archive for a bug report with the raw output of
every probe, the snapshot, the findings and ready-to-paste text for the PyTorch and ROCm issue
templates (the fields of https://github.com/pytorch/pytorch/blob/main/.github/ISSUE_TEMPLATE/bug-report.yml
and of ROCm's "Issue Report" form, https://github.com/ROCm/ROCm/issues/new/choose)."""
from __future__ import annotations

import io
import json
import os
import tarfile
import time
from dataclasses import dataclass, replace
from typing import Any

from gpuvet.model import Report
from gpuvet.model.errors import InputError
from gpuvet.model.redact import redact_text

from .env import Environment

RECORD_FILES = ("/proc/", "/sys/", "/etc/os-release", "/etc/lsb-release", "/opt/rocm", "/usr/local/cuda",
                "/etc/alternatives/", "/.dockerenv", "/run/.containerenv")
MAX_RECORDED = 256 * 1024


@dataclass
class ReportOptions:
    since: str = "good"
    db: str | None = None
    python: str | None = None
    deadline: float = 3.0
    record: bool = False  # keep the raw outputs of every probe (for --bundle)


def _recording_system(env: Environment, python: str | None, raw: dict[str, Any]):
    from gpuvet.probes.system import System

    class Recording(System):
        """The real System, keeping what each probe read: command outputs and the system files."""

        def run(self, argv, timeout=3.0):  # type: ignore[override]
            res = super().run(argv, timeout)
            raw.setdefault("commands", {})[" ".join(argv)] = res
            return res

        def read_text(self, path, limit=4 * 1024 * 1024):  # type: ignore[override]
            text = super().read_text(path, limit)
            if text is not None and path.startswith(RECORD_FILES) and "dist-info" not in path:
                raw.setdefault("files", {})[path] = text[:MAX_RECORDED]
            return text

    return Recording(env.environ, python=python or env.environ.get("GPUVET_PYTHON") or None)


def run(opts: ReportOptions, env: Environment) -> tuple[Report, dict[str, Any], dict[str, Any]]:
    """(the version report, the snapshot document of now, the raw probe outputs when recorded)."""
    from gpuvet.history.diff import compare

    from .snapshot import SnapshotOptions, resolve, take

    raw: dict[str, Any] = {}
    if opts.record:
        raw["cpu"] = _cpu(env.system())  # for the bundle's issue text; not a recorded probe output
        rec = _recording_system(env, opts.python, raw)
        env = replace(env, system_factory=lambda: rec)
    started = time.monotonic()
    t = take(SnapshotOptions(python=opts.python, deadline=opts.deadline, store=False), env)
    now = t.doc
    since, changes = None, []
    try:
        base = resolve(opts.since, env, opts.db, opts.python, opts.deadline)
    except InputError as exc:
        if opts.since != "good" or "marked good" not in str(exc):
            raise
        base = None
    if base is not None:
        ch, _, _ = compare(base, now)
        changes = [c.to_dict() for c in ch]
        since = {"ref": base.get("_source"), "id": base.get("id"), "created_at": base.get("created_at"),
                 "label": base.get("label")}
    from gpuvet.history.diff import COMPANION, FRAMEWORKS

    dists = [d for d in now["distributions"] if not d.get("shadowed")
             and (d["name"] in FRAMEWORKS or COMPANION.match(d["name"]))]
    r = t.report
    report = Report(command="report", findings=r.findings, facts=r.facts, score=r.score, deductions=r.deductions,
                    meta=dict(r.meta, elapsed_s=round(time.monotonic() - started, 3)),
                    extra={"host": now["host"].get("hostname", ""), "taken_at": now["created_at"][:19].replace("T", " ") + " UTC",
                           "since": since, "changes": changes, "distributions": dists})
    return report, now, raw


# -- the bundle --------------------------------------------------------------------------------------
def issue_texts(report: Report, now: dict[str, Any]) -> dict[str, str]:
    """Ready-to-paste text for the PyTorch bug-report form (🐛 Describe the bug / Versions) and the
    ROCm Issue Report form (Problem Description, Operating System, CPU, GPU, ROCm Version, ROCm
    Component, Steps to Reproduce, rocminfo --support output, Additional Information)."""
    facts = now.get("facts") or {}
    osr = (facts.get("os_info") or [{}])[0]
    gpus = ", ".join(sorted({f"{g.get('name', '')} ({g.get('arch', '')})".strip() for g in facts.get("gpu_devices", [])})) \
        or "(no GPU seen)"
    rocm = next((r.get("version") for r in facts.get("runtimes", []) if r.get("name") == "rocm"), "")
    fw = "; ".join(f"{r.get('name')} {r.get('version')}" + (f" (HIP {r['hip']})" if r.get("hip") else "")
                   + (f" (CUDA {r['cuda']})" if r.get("cuda") else "") for r in facts.get("framework_builds", [])) or "(none)"
    failed = [f for f in report.findings if f.failed]
    problems = "\n".join(f"- {f.code} {f.name}: {f.title}" for f in failed) or "- gpuvet found no stack problem"
    versions = ["gpuvet version report (gpuvet check; the raw probe outputs are in the attached bundle)", ""]
    versions += [f"{a}: {b} {c}".rstrip() for a, b, c, _ in _stack(report)]
    versions += ["", "Framework packages:"] + [f"  {d['name']}=={d['version']} ({d.get('origin')})"
                                               for d in report.extra.get("distributions", [])]
    changes = report.extra.get("changes") or []
    chg = "\n".join(f"- {c['subject']}: {c['before'] or '(absent)'} -> {c['after'] or '(absent)'}" for c in changes[:30]) \
        or "- none recorded"
    rocminfo = next((v.stdout for k, v in (report.extra.get("_raw_commands") or {}).items() if k.endswith("rocminfo")), "")
    pytorch = ("### 🐛 Describe the bug\n\n<describe what fails, with a minimal script and the full traceback>\n\n"
               "gpuvet's findings on this machine:\n" + problems + "\n\nChanges since the last good snapshot:\n" + chg +
               "\n\n### Versions\n\n```\n" + "\n".join(versions) + "\n```\n")
    rocm_text = (f"### Problem Description\n\n<describe what fails>\n\ngpuvet's findings:\n{problems}\n\n"
                 f"### Operating System\n\n{osr.get('name', '')} (kernel {osr.get('kernel', '')})\n\n"
                 f"### CPU\n\n{now.get('_cpu', '') or '(see the bundle: /proc/cpuinfo)'}\n\n"
                 f"### GPU\n\n{gpus}\n\n### ROCm Version\n\n{('ROCm ' + rocm) if rocm else '(no ROCm release found)'}\n\n"
                 f"### ROCm Component\n\n<e.g. HIP, MIOpen, rocBLAS>\n\n### Steps to Reproduce\n\n<commands>\n\n"
                 f"Framework: {fw}\n\n### (Optional for Linux users) Output of /opt/rocm/bin/rocminfo --support\n\n"
                 f"```\n{rocminfo.strip()[:20000] or '(rocminfo was not run or not found)'}\n```\n\n"
                 f"### Additional Information\n\nChanges since the last good snapshot:\n{chg}\n")
    return {"issue-pytorch.md": redact_text(pytorch), "issue-rocm.md": redact_text(rocm_text)}


def _stack(report: Report):
    from gpuvet.render.stack import stack_lines

    return stack_lines(report.facts) if report.facts is not None else []


def _cpu(system: Any) -> str:
    for line in (system.read_text("/proc/cpuinfo", limit=64 * 1024) or "").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return ""


def write_bundle(path: str, report: Report, now: dict[str, Any], raw: dict[str, Any]) -> list[str]:
    """Write the archive (tar.gz, atomically, mode 0600); every member goes through the redactor.
    Returns the member names."""
    from gpuvet.history.snapshot import dumps
    from gpuvet.render import render
    from gpuvet.render.version_report import render_report_html, render_report_markdown

    report.extra["_raw_commands"] = raw.get("commands", {})
    now = dict(now, _cpu=raw.get("cpu", ""))
    members: dict[str, str] = {
        "README.txt": ("gpuvet bug-report bundle. Every file was passed through gpuvet's redactor (tokens, passwords,\n"
                       "keys, credentials in URLs and secret-named variables are masked as ***).\n\n"
                       "issue-pytorch.md, issue-rocm.md  ready-to-paste text for the PyTorch and ROCm issue forms\n"
                       "report.md, report.html          the version report\nsnapshot.json                   the snapshot\n"
                       "findings.json                   gpuvet check's report (JSON)\n"
                       "probes/commands/*.txt           each command a probe ran: argv, exit status, stdout, stderr\n"
                       "probes/files/*                  each system file a probe read\n"),
        "snapshot.json": dumps({k: v for k, v in now.items() if not k.startswith("_")}),
        "findings.json": render(report_for_json(report), "json"),
        "report.md": render_report_markdown(report),
        "report.html": render_report_html(report),
    }
    members.update(issue_texts(report, now))
    for i, (cmd, res) in enumerate(sorted(raw.get("commands", {}).items())):
        name = _safe(cmd.split()[0].rsplit("/", 1)[-1]) + f"-{i:02d}.txt"
        members[f"probes/commands/{name}"] = (f"$ {cmd}\nexit: {res.returncode}  error: {res.error or ''}\n\n--- stdout\n"
                                              f"{res.stdout}\n--- stderr\n{res.stderr}\n")
    for fpath, text in sorted(raw.get("files", {}).items()):
        members["probes/files/" + _safe(fpath.strip("/").replace("/", "__"))] = text
    report.extra.pop("_raw_commands", None)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh, tarfile.open(fileobj=fh, mode="w:gz") as tar:
            for name, text in members.items():
                data = redact_text(text).encode("utf-8", "replace")
                info = tarfile.TarInfo(f"gpuvet-bundle/{name}")
                info.size, info.mtime, info.mode = len(data), int(time.time()), 0o600
                tar.addfile(info, io.BytesIO(data))
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    return sorted(members)


def report_for_json(report: Report) -> Report:
    extra = report.extra.copy()
    extra.pop("_raw_commands", None)  # the one private key (ReportExtra): never rendered
    return replace(report, command="check", extra=extra)


def _safe(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._+-]", "_", name)[:120] or "x"


_ = json
