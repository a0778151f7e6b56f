"""Probes: the NVIDIA stack (kernel module, user-space driver and its CUDA, GPUs, nvcc, toolkit).

Pure parsers (also used for pasted text):

* :func:`parse_proc_version` - ``/proc/driver/nvidia/version`` -> ``drivers`` (kernel-module)
* :func:`parse_nvidia_smi` - ``nvidia-smi``, ``nvidia-smi -q`` or ``nvidia-smi --query-gpu=... --format=csv``
  -> ``drivers`` (user-space) + ``gpu_devices``; :func:`nvidia_smi_error` names a failure message
* :func:`parse_nvcc` - ``nvcc --version`` -> ``compilers``
* :func:`parse_cuda_version_json` - the toolkit's ``version.json`` / old ``version.txt`` -> ``runtimes``

Live probes read files first (procfs, sysfs, version.json) and run each command with a short
time-out.  The user-space driver is read through NVML (nvidia-ml-py) when this is the real machine
and an NVIDIA kernel module is there; otherwise, or when NVML fails, through ``nvidia-smi``.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any

from gpuvet.model import Row, row

from .base import Probe, ProbeFailed
from .system import System
from ..model.lazyre import lazy

CMD_TIMEOUT = 2.5
PROC_VERSION = "/proc/driver/nvidia/version"
SYS_MODULE_VERSION = "/sys/module/nvidia/version"
NVIDIACTL = "/dev/nvidiactl"
QUERY_FIELDS = ("index", "name", "compute_cap", "memory.total", "pci.bus_id", "driver_version")
QUERY_ARGV = ("nvidia-smi", f"--query-gpu={','.join(QUERY_FIELDS)}", "--format=csv,noheader")

# ---------------------------------------------------------------------------------------------------
# pure parsers

_NVRM = lazy(r"NVRM version:[ \t]*(?P<desc>\S[^\n]*?Kernel Module(?:[ \t]+for[ \t]+\S+)?)[ \t]+(?P<ver>\d+\.\d+(?:\.\d+)*)")


def parse_proc_version(text: str, source: str) -> list[Row]:
    """``/proc/driver/nvidia/version`` -> one ``drivers`` row for the loaded kernel module.

    ``NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...`` gives
    version 580.159.04, flavor ``open``; ``NVIDIA UNIX x86_64 Kernel Module  535.129.03 ...`` gives
    flavor ``proprietary``.  Text without an NVRM line gives no rows.
    """
    m = _NVRM.search(text or "")
    if not m:
        return []
    flavor = "open" if "open kernel module" in m.group("desc").lower() else "proprietary"
    return [row("drivers", source, vendor="nvidia", component="kernel-module", version=m.group("ver"),
                flavor=flavor)]


_SMI_ERRORS = (
    re.compile(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver[^\n]*"),
    re.compile(r"Failed to initialize NVML:[^\n]*(?:\n\s*NVML library version:[^\n]*)?"),
    re.compile(r"Unable to determine the device handle for GPU[^\n]*"),
    re.compile(r"^No devices were found[^\n]*", re.M),
    re.compile(r"^[^\n]*nvidia-smi: (?:command )?not found[^\n]*", re.M),
    re.compile(r"^[^\n]*GPU is lost[^\n]*", re.M),
)
_SMI_NEEDLES = ("NVIDIA-SMI has failed", "Failed to initialize NVML:", "Unable to determine the device handle",
                "No devices were found", "nvidia-smi: ", "GPU is lost")


def nvidia_smi_error(text: str) -> str | None:
    """The failure message nvidia-smi printed instead of its report, or None.

    Recognises the driver not answering, NVML failing to initialise (including "Driver/library
    version mismatch", with the ``NVML library version`` line when present), no devices, a lost GPU,
    and the shell's "command not found".
    """
    if not text:
        return None
    for pat, needle in zip(_SMI_ERRORS, _SMI_NEEDLES):
        if needle not in text:  # a literal every match holds: a large log without it costs no regex search
            continue
        m = pat.search(text)
        if m:
            return " ".join(m.group(0).split())
    return None


_TABLE_DRIVER = re.compile(r"Driver Version:\s*(\S+)")
_TABLE_CUDA = re.compile(r"CUDA Version:\s*(\d+\.\d+)")
_TABLE_GPU = lazy(
    r"^\|\s+(?P<idx>\d+)\s+(?P<name>.+?)\s+(?:On|Off|N/A|WDDM|TCC|MCDM)\s+\|\s+"
    r"(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s"
)
_TABLE_MEM = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")
_Q_KV = lazy(r"^(?P<indent>[ \t]*)(?P<key>[^:\s](?:[^:\n]*[^:\s])?)[ \t]+:[ \t]*(?P<val>.*)$")  # linear
_Q_GPU = lazy(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_BUS = lazy(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]$")
_CC = re.compile(r"^\d+\.\d+$")
_VER = re.compile(r"^\d+\.\d+(?:\.\d+)*$")


def _arch(cc: str | None) -> str | None:
    if cc and _CC.match(cc):
        major, minor = cc.split(".")
        return f"sm_{major}{minor}"
    return None


def _gpu(source: str, index: int, name: str, memory_mib: int | None = None, pci_bus: str | None = None,
         cc: str | None = None) -> Row:
    vals: dict[str, Any] = {"vendor": "nvidia", "index": index, "name": name}
    if memory_mib is not None:
        vals["memory_mib"] = memory_mib
    if pci_bus:
        vals["pci_bus"] = pci_bus
    if cc and _CC.match(cc):
        vals["compute_capability"] = cc
        vals["arch"] = _arch(cc)
    return row("gpu_devices", source, **vals)


def _user_driver(source: str, version: str | None, cuda: str | None) -> list[Row]:
    if not version or not _VER.match(version):
        return []
    vals: dict[str, Any] = {"vendor": "nvidia", "component": "user-space", "version": version}
    if cuda and _CC.match(cuda):
        vals["cuda_version"] = cuda
    return [row("drivers", source, **vals)]


def _parse_smi_table(text: str, source: str) -> list[Row]:
    drv = _TABLE_DRIVER.search(text)
    cuda = _TABLE_CUDA.search(text)
    out = _user_driver(source, drv.group(1) if drv else None, cuda.group(1) if cuda else None)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _TABLE_GPU.match(line.strip())
        if not m:
            continue
        mem = None
        for nxt in lines[i + 1:i + 3]:
            mm = _TABLE_MEM.search(nxt)
            if mm:
                mem = int(mm.group(2))
                break
        out.append(_gpu(source, int(m.group("idx")), m.group("name").strip(), mem, m.group("bus")))
    return out


def _parse_smi_q(text: str, source: str) -> list[Row]:
    driver = cuda = None
    gpus: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    section: str | None = None
    for line in text.splitlines():
        g = _Q_GPU.match(line.strip())
        if g and not line.startswith(" "):
            cur = {"pci_bus": g.group(1)}
            gpus.append(cur)
            section = None
            continue
        m = _Q_KV.match(line)
        if m:
            key, val = m.group("key").strip(), m.group("val").strip()
            if cur is None:
                if key == "Driver Version":
                    driver = val
                elif key == "CUDA Version":
                    cuda = val
                continue
            if key == "Product Name":
                cur["name"] = val
            elif key == "Total" and section == "FB Memory Usage":
                mm = re.match(r"(\d+)\s*MiB", val)
                if mm:
                    cur["memory_mib"] = int(mm.group(1))
            elif key == "Bus Id":
                cur["pci_bus"] = val
            elif key in ("Compute Capability", "CUDA Compute Capability"):
                cur["cc"] = val
        elif cur is not None and line.strip() and ":" not in line:
            section = line.strip()
    out = _user_driver(source, driver, cuda)
    for idx, gpu in enumerate(gpus):
        if gpu.get("name"):
            out.append(_gpu(source, idx, gpu["name"], gpu.get("memory_mib"), gpu.get("pci_bus"), gpu.get("cc")))
    return out


def _mib(val: str) -> int | None:
    m = re.match(r"\s*(\d+)\s*(MiB)?\s*$", val)
    return int(m.group(1)) if m else None


def _parse_smi_csv(text: str, source: str) -> list[Row]:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    fields: tuple[str, ...] = QUERY_FIELDS
    out: list[Row] = []
    driver = None
    for ln in lines:
        cells = [c.strip() for c in ln.split(",")]
        low = [c.lower() for c in cells]
        if "name" in low and ("index" in low or "pci.bus_id" in low or "driver_version" in low):
            fields = tuple(re.sub(r"\s*\[.*\]$", "", c) for c in low)  # header: "memory.total [MiB]"
            continue
        if len(cells) != len(fields):
            continue
        rec = dict(zip(fields, cells))
        try:
            idx = int(rec.get("index", len(out)))
        except ValueError:
            continue
        bus = rec.get("pci.bus_id")
        if bus and not _BUS.match(bus):
            continue
        name = rec.get("name")
        if not name:
            continue
        driver = driver or rec.get("driver_version")
        mem = _mib(rec["memory.total"]) if rec.get("memory.total") else None
        out.append(_gpu(source, idx, name, mem, bus, rec.get("compute_cap")))
    if not out:
        return []
    return _user_driver(source, driver, None) + out


def parse_nvidia_smi(text: str, source: str) -> list[Row]:
    """nvidia-smi output (plain table, ``-q``, or ``--query-gpu ... --format=csv[,noheader]``) ->
    a user-space ``drivers`` row (version, cuda_version) and ``gpu_devices`` rows.

    Output that is only a failure message (see :func:`nvidia_smi_error`) gives no rows.  Headerless
    CSV is read in the column order of :data:`QUERY_FIELDS` (what the live probe asks for).
    """
    if not text or not text.strip():
        return []
    if "NVSMI LOG" in text or re.search(r"^Driver Version[ \t]+:", text, re.M):
        rows = _parse_smi_q(text, source)
    elif _TABLE_DRIVER.search(text) or _TABLE_GPU.search(text):
        rows = _parse_smi_table(text, source)
    else:
        rows = _parse_smi_csv(text, source)
    return rows


_NVCC = lazy(r"Cuda compilation tools, release (?P<rel>\d+\.\d+), V(?P<ver>\d+\.\d+(?:\.\d+)*)")


def parse_nvcc(text: str, source: str, path: str = "") -> list[Row]:
    """``nvcc --version`` -> one ``compilers`` row: name nvcc, version (13.0.88), cuda_version (13.0)."""
    m = _NVCC.search(text or "")
    if not m:
        return []
    vals: dict[str, Any] = {"name": "nvcc", "version": m.group("ver"), "cuda_version": m.group("rel"),
                            "platform": "nvidia"}
    if path:
        vals["path"] = path
    return [row("compilers", source, **vals)]


_VERSION_TXT = re.compile(r"CUDA Version\s+(\d+\.\d+(?:\.\d+)*)")


def parse_cuda_version_json(text: str, source: str, path: str) -> list[Row]:
    """The toolkit's ``version.json`` (``{"cuda": {"version": "12.4.1"}, ...}``) or an old toolkit's
    ``version.txt`` (``CUDA Version 11.8.89``) -> one ``runtimes`` row (name cuda-toolkit)."""
    version = None
    stripped = (text or "").strip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(stripped)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            cuda = doc.get("cuda")
            if isinstance(cuda, dict) and isinstance(cuda.get("version"), str):
                version = cuda["version"]
    else:
        m = _VERSION_TXT.search(stripped)
        if m:
            version = m.group(1)
    if not version or not _VER.match(version):
        return []
    return [row("runtimes", source, vendor="nvidia", name="cuda-toolkit", version=version, path=path,
                origin="system")]


_CUDART_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+CUDART_VERSION[ \t]+(\d+)[ \t\r]*$", re.M)


def parse_cudart_header(text: str, source: str, path: str) -> list[Row]:
    """The toolkit's ``include/cuda_runtime_api.h`` (``#define CUDART_VERSION 13000``) -> one
    ``runtimes`` row (name cuda-toolkit, version 13.0).  For toolkits without version.json (CUDA 13
    installs from packages or pip wheels ship none)."""
    m = _CUDART_DEFINE.search(text or "")
    if not m:
        return []
    n = int(m.group(1))
    return [row("runtimes", source, vendor="nvidia", name="cuda-toolkit", version=f"{n // 1000}.{(n % 1000) // 10}",
                path=path, origin="system")]


# ---------------------------------------------------------------------------------------------------
# NVML (System.nvml asks it; this turns the answer into rows)

def nvml_rows(info: dict[str, Any], source: str = "NVML") -> list[Row]:
    """Turn :meth:`System.nvml`'s answer into ``drivers`` and ``gpu_devices`` rows (pure)."""
    cuda_int = info.get("cuda")
    cuda = None
    if isinstance(cuda_int, int) and cuda_int > 0:
        cuda = f"{cuda_int // 1000}.{(cuda_int % 1000) // 10}"
    out = _user_driver(source, info.get("driver"), cuda)
    for dev in info.get("devices", []):
        cc = dev.get("cc")
        cc_s = f"{cc[0]}.{cc[1]}" if isinstance(cc, (tuple, list)) and len(cc) == 2 else None
        mem = dev.get("memory_bytes")
        bus = dev.get("pci_bus")
        out.append(_gpu(source, int(dev.get("index", 0)), str(dev.get("name", "")),
                        int(mem) // (1024 * 1024) if isinstance(mem, int) else None,
                        str(bus).strip() if bus else None, cc_s))
    return out


# ---------------------------------------------------------------------------------------------------
# live probes

def _nvidia_module_present(system: System) -> bool:
    return system.exists(PROC_VERSION) or system.exists(NVIDIACTL) or system.exists(SYS_MODULE_VERSION)


def _nvidia_pci_gpus(system: System) -> list[str]:
    """PCI addresses of NVIDIA display/3D controllers (vendor 0x10de, class 0x03xxxx) from sysfs."""
    out = []
    for dev in system.glob("/sys/bus/pci/devices/*"):
        vendor = (system.read_text(dev + "/vendor", 64) or "").strip().lower()
        if vendor != "0x10de":
            continue
        cls = (system.read_text(dev + "/class", 64) or "").strip().lower()
        if cls.startswith("0x03"):
            out.append(os.path.basename(dev))
    return out


def probe_kernel_module(system: System) -> list[Row]:
    """The loaded NVIDIA kernel module: /proc/driver/nvidia/version, else /sys/module/nvidia/version.

    No module and no NVIDIA GPU on the PCI bus: no rows (there is no NVIDIA stack).  An NVIDIA GPU on
    the PCI bus with no module loaded is a failure the checks must see.
    """
    text = system.read_text(PROC_VERSION)
    if text:
        rows = parse_proc_version(text, PROC_VERSION)
        if rows:
            return rows
    ver = (system.read_text(SYS_MODULE_VERSION, 256) or "").strip()
    if ver and _VER.match(ver):
        return [row("drivers", SYS_MODULE_VERSION, vendor="nvidia", component="kernel-module", version=ver)]
    gpus = _nvidia_pci_gpus(system)
    if gpus:
        raise ProbeFailed(f"NVIDIA GPU on the PCI bus ({', '.join(gpus[:4])}) but no NVIDIA kernel module is loaded")
    return []


def probe_driver(system: System) -> list[Row]:
    """User-space driver, its highest CUDA, and the GPUs: NVML first, nvidia-smi otherwise.

    NVML (``system.nvml()``) is asked only when an NVIDIA kernel module is there; a System that is not
    the machine itself answers None and is read through nvidia-smi alone.  No NVIDIA driver at all (no
    kernel module, no nvidia-smi, no NVML library): no rows, so the tables read *empty*.  nvidia-smi
    present but failing, or a kernel module with neither NVML nor nvidia-smi answering: ``ProbeFailed``
    with the tool's own message (e.g. "Failed to initialize NVML: Driver/library version mismatch").
    """
    problems: list[str] = []
    nvml_absent = True  # NVML unusable because it is not there (no library / no binding)
    if _nvidia_module_present(system):
        try:
            info = system.nvml()
            rows = nvml_rows(info) if info is not None else []
            if rows:
                return rows
            if info is not None:
                problems.append("NVML returned no driver version")
                nvml_absent = False
        except ImportError:
            problems.append("NVML: nvidia-ml-py is not installed")
        except Exception as exc:  # pynvml.NVMLError and friends
            msg = str(exc) or type(exc).__name__
            problems.append(f"NVML: {msg}")
            nvml_absent = "not found" in msg.lower()
    module = _nvidia_module_present(system)
    if system.which("nvidia-smi") is None:
        if not module and nvml_absent:
            return []
        problems.append("nvidia-smi: not installed")
        raise ProbeFailed("; ".join(problems))
    res = system.run(QUERY_ARGV, timeout=CMD_TIMEOUT)
    if res.error == "timeout":  # a hung nvidia-smi would hang again: do not spend a second time-out
        raise ProbeFailed("; ".join(problems + [res.describe()]), "timeout")
    err = nvidia_smi_error(res.output)
    rows = parse_nvidia_smi(res.stdout, " ".join(QUERY_ARGV)) if res.ok and not err else []
    if err:
        problems.append(err)
    elif not res.ok:
        problems.append(res.describe())
    # the plain report carries the CUDA version (and is the fallback for an nvidia-smi that does not
    # know the compute_cap field)
    plain = system.run(("nvidia-smi",), timeout=CMD_TIMEOUT)
    plain_err = nvidia_smi_error(plain.output)
    plain_ok = plain.error is None and not plain_err
    if not rows:
        if plain_ok:
            rows = parse_nvidia_smi(plain.stdout, "nvidia-smi")
        if not rows and res.error == "missing" and plain.error == "missing" and not module and nvml_absent:
            return []  # which() saw an nvidia-smi that is not there to run
        if not rows:
            if plain_err:
                problems.append(plain_err)
            elif plain.error:
                problems.append(plain.describe())
            raise ProbeFailed("; ".join(dict.fromkeys(problems)) or "nvidia-smi printed no driver version",
                              "timeout" if res.error == "timeout" else "error")
        return rows
    cuda = _TABLE_CUDA.search(plain.stdout) if plain_ok else None
    if cuda:
        rows = [row("drivers", r.source + " + nvidia-smi", **{**r.values, "cuda_version": cuda.group(1)})
                if r.table == "drivers" else r for r in rows]
    return rows


def _find_nvcc(system: System) -> str | None:
    """The nvcc that builds extensions, found as torch.utils.cpp_extension finds CUDA_HOME:
    CUDA_HOME / CUDA_PATH first, then nvcc on PATH, then /usr/local/cuda."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = system.environ.get(var)
        if home and system.exists(home.rstrip("/") + "/bin/nvcc"):
            return home.rstrip("/") + "/bin/nvcc"
    found = system.which("nvcc")
    if found:
        return found
    if system.exists("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda/bin/nvcc"
    return None


def _cuda_homes(system: System) -> list[str]:
    homes = [system.environ.get("CUDA_HOME"), system.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    return list(dict.fromkeys(h for h in homes if h))


def probe_nvcc(system: System) -> list[Row]:
    """``nvcc --version`` of the nvcc extension builds use (see :func:`_find_nvcc`)."""
    path = _find_nvcc(system)
    if not path:
        return []
    res = system.run((path, "--version"), timeout=CMD_TIMEOUT)
    if not res.ok:
        raise ProbeFailed(res.describe(), "timeout" if res.error == "timeout" else "error")
    rows = parse_nvcc(res.stdout, f"{path} --version", path)
    if not rows:
        raise ProbeFailed(f"{path} --version printed no CUDA release")
    return rows


def probe_toolkit(system: System) -> list[Row]:
    """The CUDA toolkit under CUDA_HOME, CUDA_PATH and /usr/local/cuda: its version.json (or an old
    toolkit's version.txt), else the CUDART_VERSION its cuda_runtime_api.h defines."""
    out: list[Row] = []
    seen: set[str] = set()
    for home in _cuda_homes(system):
        real = system.realpath(home)
        if real in seen:
            continue
        base = home.rstrip("/") + "/"
        for name, parse, limit in (("version.json", parse_cuda_version_json, 1 << 20),
                                   ("version.txt", parse_cuda_version_json, 1 << 16),
                                   ("include/cuda_runtime_api.h", parse_cudart_header, 1 << 16)):
            text = system.read_text(base + name, limit)
            rows = parse(text, base + name, base + name) if text else []
            if rows:
                seen.add(real)
                out.extend(rows)
                break
    return out


PROBES: list[Probe] = [
    Probe("nvidia-kernel-module", ("drivers",), probe_kernel_module,
          "NVIDIA kernel module version and flavor (/proc/driver/nvidia/version)"),
    Probe("nvidia-driver", ("drivers", "gpu_devices"), probe_driver,
          "NVIDIA user-space driver, its CUDA version and GPUs (NVML, else nvidia-smi)"),
    Probe("nvidia-nvcc", ("compilers",), probe_nvcc, "nvcc --version"),
    Probe("nvidia-cuda-toolkit", ("runtimes",), probe_toolkit, "CUDA toolkit version.json"),
]
