"""Fact rows and the declared fact tables.

A fact table is declared once (name, typed columns with one-line docs, where its rows come from) so
every probe, parser, check and renderer agrees on column names.  A row records where it came from.
A probe that fails yields a ``ProbeError`` for its tables instead of rows; checks that need such a
table report ``unknown``.
"""
from __future__ import annotations

from dataclasses import field
from typing import Any, Iterable, Iterator, Mapping

from .record import record


@record(frozen=True)
class Column:
    """One typed, documented column of a fact table."""

    name: str
    type: str
    doc: str


@record(frozen=True)
class TableSpec:
    """A declared fact table: its name, its documentation and its columns."""

    name: str
    doc: str
    columns: tuple[Column, ...]
    sources: str = ""
    key: tuple[str, ...] = ()  # identity columns (osquery's index columns): rows equal on them are "the same"


    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


def _t(name: str, doc: str, sources: str, *cols: tuple[str, str, str]) -> TableSpec:
    return TableSpec(name, doc, tuple(Column(*c) for c in cols), sources)


# ---------------------------------------------------------------------------------------------------
# The declared tables.  Every row also carries ``source`` (the command, file or pasted report it was
# read from); that column is implicit.
TABLES: dict[str, TableSpec] = {
    t.name: t
    for t in (
        _t("os_info", "The operating system and C library.", "/etc/os-release, uname, libc",
           ("name", "str", "distribution pretty name"),
           ("kernel", "str", "kernel release"),
           ("arch", "str", "machine architecture (x86_64, aarch64)"),
           ("glibc", "str", "glibc version, e.g. 2.36"),
           ("python", "str", "Python version of the interpreter examined")),
        _t("gpu_devices", "GPUs seen by the vendor tools or sysfs.",
           "nvidia-smi, NVML, rocminfo, amd-smi/rocm-smi, KFD topology in sysfs",
           ("vendor", "str", "amd | nvidia"),
           ("index", "int", "device index as the vendor tool numbers it"),
           ("name", "str", "marketing name as the tool prints it"),
           ("arch", "str", "GPU architecture target: gfx90a, sm_90"),
           ("compute_capability", "str", "NVIDIA compute capability, e.g. 9.0"),
           ("memory_mib", "int", "device memory in MiB"),
           ("pci_bus", "str", "PCI bus id")),
        _t("drivers", "Kernel and user-space drivers.",
           "/proc/driver/nvidia/version, NVML, nvidia-smi, /sys/module/amdgpu/version, rocminfo",
           ("vendor", "str", "amd | nvidia"),
           ("component", "str", "kernel-module | user-space"),
           ("version", "str", "driver version as printed (580.159.04, 6.7.0)"),
           ("cuda_version", "str", "NVIDIA: the highest CUDA version this driver supports, e.g. 13.0"),
           ("flavor", "str", "open | proprietary | dkms | inbox | dkms-package (amdgpu-dkms installed, not necessarily loaded) (where known)")),
        _t("runtimes", "User-space GPU runtimes (ROCm release, HIP runtime, CUDA runtime/toolkit).",
           "/opt/rocm*/.info/version, rocminfo, dpkg, libcudart, version.json, collect_env",
           ("vendor", "str", "amd | nvidia"),
           ("name", "str", "rocm | hip-runtime | hsa-runtime | cuda-runtime | cuda-toolkit"),
           ("version", "str", "version string"),
           ("path", "str", "where it was found"),
           ("origin", "str", "system | pip | conda | framework-bundled | pasted")),
        _t("compilers", "GPU compilers, their reported platforms, and the host compiler.", "hipcc, hipconfig, nvcc, gcc",
           ("name", "str", "hipcc | hipconfig | nvcc | gcc"),
           ("version", "str", "the compiler's own version (HIP version for hipcc/hipconfig)"),
           ("platform", "str", "amd | nvidia: the platform hipcc/hipconfig resolves to"),
           ("cuda_version", "str", "nvcc's CUDA release, or the nvcc hipcc wraps"),
           ("path", "str", "executable path")),
        _t("host_compilers", "The host C/C++ compilers the GPU stack will call, by who calls them.",
           "CC, CXX, NVCC_CCBIN, CUDAHOSTCXX, gcc/g++/clang on PATH; `--version` of each",
           ("name", "str", "gcc | clang | the file name when it does not run"),
           ("version", "str", "its version, '' when it does not run"),
           ("path", "str", "the executable (or what was asked for when it is missing)"),
           ("role", "str", "who calls it: 'CC (Triton; cpp_extension's nvcc -ccbin)', 'CXX (Inductor C++, cpp_extension)', 'nvcc host (NVCC_CCBIN)'"),
           ("requested", "str", "what was asked for: CC=/usr/bin/gcc-12, 'g++ on PATH (CXX unset)'"),
           ("runs", "bool", "False when it is missing or does not run"),
           ("error", "str", "why it does not run")),
        _t("libraries", "Math, DNN and collective libraries: version and which file is loaded.",
           "ELF resolution from the framework, ldconfig cache, pip nvidia-* wheels, /opt/rocm",
           ("name", "str", "cudnn | cublas | cublaslt | nccl | cudart | miopen | rocblas | hipblaslt | rccl | amdhip64"),
           ("version", "str", "version from the file name, metadata or header"),
           ("path", "str", "file path"),
           ("origin", "str", "system | pip | conda | framework-bundled | pasted"),
           ("selected", "bool", "True when this is the copy the framework will actually load"),
           ("requested_by", "str", "the library whose DT_NEEDED (or dlopen) asked for it"),
           ("family", "str", "the release it belongs to: cudnn for libcudnn and its sub-libraries, cublas for cuBLAS and cuBLASLt"),
           ("via", "str", "how the loader found it: preload | rpath | ld_library_path | runpath | ldconfig | default"),
           ("release", "str", "ROCm libraries: the ROCm release this copy belongs to (an /opt/rocm-X.Y.Z path, AMD's build number in the file name, or the HIP version of the framework that bundles it), '' when unknown")),
        _t("shared_libraries", "Dynamic-loader resolution of the framework's GPU libraries.",
           "ELF DT_NEEDED/RPATH/RUNPATH, LD_LIBRARY_PATH, ld.so.cache, default paths",
           ("soname", "str", "DT_NEEDED name, e.g. libcudnn.so.9"),
           ("path", "str", "the file the loader will pick, or empty when unresolved"),
           ("via", "str", "rpath | ld_library_path | runpath | ldconfig | default | unresolved"),
           ("requested_by", "str", "the ELF file that needs it"),
           ("others", "list", "other copies of the same soname on the search path (shadowed)"),
           ("how", "str", "needed (DT_NEEDED) | dlopen (opened at run time by requested_by) | preload (LD_PRELOAD, /etc/ld.so.preload)"),
           ("would_win", "list", "for each shadowed copy, the setting that would make the loader take it instead")),
        _t("framework_builds", "Installed framework builds, read without importing them.",
           "torch/version.py, dist-info METADATA/RECORD, ELF of the framework's libraries",
           ("name", "str", "torch | jax | jaxlib | tensorflow | ..."),
           ("version", "str", "full version, e.g. 2.11.0+cu130"),
           ("cuda", "str", "CUDA version it was built with, or empty"),
           ("hip", "str", "HIP version it was built with, or empty"),
           ("debug", "bool", "debug build"),
           ("git_version", "str", "git hash of the build"),
           ("channel", "str", "stable | nightly | prerelease | source"),
           ("targets", "list", "GPU targets it carries kernels for: sm_90, gfx90a, compute_90 (PTX)"),
           ("targets_source", "str", "where the target list was read (ELF fatbin, offload bundle, pasted)"),
           ("partial_targets", "list", "targets present in only a few kernels, as 'sm_90a:4' (arch:entries)"),
           ("variant", "str", "cuda | rocm | cpu | xpu"),
           ("path", "str", "install location"),
           ("cxx_standard", "str", "the C++ standard its C++ code paths compile with (torch: Inductor's -std=c++NN in _inductor/cpp_builder.py, else TorchConfig.cmake's CXX_STANDARD), e.g. '20'"),
           ("cxx_standard_source", "str", "the file and text it was read from")),
        _t("packages", "Python distributions (importlib.metadata).", "importlib.metadata, pip list/freeze",
           ("name", "str", "normalised distribution name"),
           ("version", "str", "version"),
           ("location", "str", "site directory"),
           ("requires", "list", "Requires-Dist entries (without extras markers)")),
        _t("env_vars", "Environment variables that steer the GPU stack (secrets redacted).", "environ",
           ("name", "str", "variable name"),
           ("value", "str", "value, with secrets redacted")),
        _t("device_nodes", "GPU device nodes and whether this user can open them.",
           "/dev/kfd, /dev/dri/renderD*, /dev/nvidia*",
           ("path", "str", "device node"),
           ("exists", "bool", "node exists"),
           ("readable", "bool", "this process may read it"),
           ("writable", "bool", "this process may write it"),
           ("group", "str", "owning group name"),
           ("mode", "str", "permission bits, e.g. 0660")),
        _t("user", "The user running the stack.", "os.getuid, groups",
           ("name", "str", "user name"),
           ("uid", "int", "uid"),
           ("groups", "list", "group names the process has")),
        _t("containers", "Container runtime detected.", "/.dockerenv, /run/.containerenv, cgroup, env",
           ("kind", "str", "docker | podman | singularity | apptainer | kubernetes | lxc | wsl"),
           ("detail", "str", "what proved it")),
        _t("extensions", "Compiled extensions the environment can import (ELF headers and symbol tables only).",
           "site-packages and PYTHONPATH .so files that link libtorch/libc10 or carry GPU code; torch_extensions JIT cache",
           ("path", "str", "the .so file"),
           ("name", "str", "module name (file name without the ABI tag)"),
           ("dist", "str", "the distribution that installed it (RECORD), or ''"),
           ("kind", "str", "site-packages | pythonpath | jit-cache"),
           ("links_torch", "list", "the libtorch/libc10 libraries among its DT_NEEDED"),
           ("gpu_code", "str", "cuda-fatbin | hip-offload-bundle | none"),
           ("targets", "list", "GPU targets its code objects carry (sm_80, compute_80, gfx90a)"),
           ("cuda_major", "str", "CUDA runtime major it links (libcudart.so.N), or ''"),
           ("hip_major", "str", "HIP runtime major it links (libamdhip64.so.N), or ''"),
           ("torch_symbols", "int", "undefined c10/at/torch/caffe2 symbols it needs (strong, not weak)"),
           ("missing_symbols", "list", "those the installed libtorch does not export (first few, mangled)"),
           ("missing_count", "int", "how many it needs that libtorch does not export (-1: not checked)"),
           ("torch_dir", "str", "the torch whose libraries were searched for its symbols")),
        _t("kernel_libraries", "Run-time kernel files the loaded ROCm math libraries read (rocBLAS/hipBLASLt Tensile libraries, MIOpen's kernel databases).",
           "the loaded librocblas/libhipblaslt/libMIOpen (loader model), ROCBLAS_TENSILE_LIBPATH, HIPBLASLT_TENSILE_LIBPATH, MIOPEN_SYSTEM_DB_PATH; one directory listing each",
           ("library", "str", "rocblas | hipblaslt | miopen"),
           ("library_path", "str", "the copy of the library the loader model says is loaded"),
           ("library_release", "list", "what that copy belongs to: 'rocm 6.2.1' (an /opt/rocm-X path, AMD's build number in the file name, the framework that bundles it), 'rocblas 4.4' (its own version)"),
           ("dir", "str", "the directory it reads its kernels from"),
           ("via", "str", "default | the override variable that set dir"),
           ("variable", "str", "the override variable of this library"),
           ("default_dir", "str", "when an override is set: the directory it would read without it"),
           ("exists", "bool", "dir exists"),
           ("files", "int", "names in dir (bounded)"),
           ("archs", "list", "gfx targets the file names in dir carry (TensileLibrary_lazy_gfx90a.dat, gfx942.kdb, a gfx subdirectory)"),
           ("generic", "list", "architecture-independent library files present (TensileLibrary.dat)"),
           ("dir_release", "list", "what dir belongs to, the same tags as library_release")),
        _t("kernel_caches", "Kernel databases and caches (MIOpen, CUDA JIT, Triton, torch inductor).",
           "MIOPEN_USER_DB_PATH, MIOPEN_CUSTOM_CACHE_DIR, ~/.config/miopen, ~/.cache/miopen, /opt/rocm/share/miopen/db; "
           "TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, TORCH_EXTENSIONS_DIR, VLLM_CACHE_ROOT and their defaults",
           ("name", "str", "miopen-system-db | miopen-user-db | miopen-cache | cuda-jit-cache | triton-cache | "
                           "inductor-cache | torch-extensions | vllm-cache"),
           ("path", "str", "directory"),
           ("exists", "bool", "exists"),
           ("writable", "bool", "writable by this user (or creatable)"),
           ("files", "int", "number of files in it (bounded count)"),
           ("owner_uid", "int", "uid owning the directory (None: it does not exist)"),
           ("mode", "str", "permission bits of the directory, octal"),
           ("fs_type", "str", "filesystem type of the mount holding it (/proc/self/mounts)"),
           ("sampled_all", "bool", "every entry was looked at (False: only the first bounded sample)"),
           ("foreign_entries", "int", "sampled entries owned by another user that this user cannot write"),
           ("foreign_sample", "list", "a few of them, with their owner"),
           ("stale_locks", "list", "torch_extensions build lock files older than 10 minutes"),
           ("other_builds", "list", "torch_extensions entries whose build.ninja compiles against another torch")),
    )
}

# Row identity per table: the columns that say which thing a row is about, so two reports' rows can be
# matched (a later diff / snapshot compares the other columns of rows with the same identity).  Empty:
# the table holds one row per machine.
KEYS: dict[str, tuple[str, ...]] = {
    "os_info": (),
    "gpu_devices": ("vendor", "index", "pci_bus"),
    "drivers": ("vendor", "component"),
    "runtimes": ("vendor", "name", "origin", "path"),
    "compilers": ("name", "path"),
    "host_compilers": ("role", "path"),
    "libraries": ("name", "path"),
    "shared_libraries": ("soname", "path"),
    "framework_builds": ("name", "path"),
    "packages": ("name", "location"),
    "env_vars": ("name",),
    "device_nodes": ("path",),
    "user": (),
    "containers": ("kind",),
    "extensions": ("path",),
    "kernel_caches": ("name", "path"),
    "kernel_libraries": ("library", "library_path"),
}
TABLES = {name: TableSpec(t.name, t.doc, t.columns, t.sources, KEYS.get(name, ())) for name, t in TABLES.items()}

# The command whose output supplies a table when the facts come from pasted text (what to paste
# next), and what a live run reads.  Shown once in the collapsed "could not check" line.
SUPPLIED_BY: dict[str, str] = {
    "os_info": "python -m torch.utils.collect_env",
    "gpu_devices": "nvidia-smi (NVIDIA) or rocminfo (AMD)",
    "drivers": "nvidia-smi (NVIDIA) or rocminfo (AMD)",
    "runtimes": "python -m torch.utils.collect_env",
    "compilers": "nvcc --version / hipcc --version",
    "libraries": "python -m torch.utils.collect_env",
    "shared_libraries": "gpuvet check on the machine",
    "framework_builds": "python -m torch.utils.collect_env",
    "packages": "pip list",
    "env_vars": "env",
    "device_nodes": "ls -l /dev/kfd /dev/dri /dev/nvidia*",
    "user": "id",
    "containers": "gpuvet check on the machine",
    "kernel_caches": "gpuvet check on the machine",
    "host_compilers": "gcc --version",
    "extensions": "gpuvet check on the machine",
    "kernel_libraries": "gpuvet check on the machine",
}
# The same, when the facts name one GPU vendor only: an AMD paste is not asked for nvidia-smi or nvcc.
SUPPLIED_BY_VENDOR: dict[tuple[str, str], str] = {
    ("gpu_devices", "amd"): "rocminfo",
    ("gpu_devices", "nvidia"): "nvidia-smi",
    ("drivers", "amd"): "dkms status",
    ("drivers", "nvidia"): "nvidia-smi",
    ("compilers", "amd"): "hipcc --version",
    ("compilers", "nvidia"): "nvcc --version",
    ("device_nodes", "amd"): "ls -l /dev/kfd /dev/dri",
    ("device_nodes", "nvidia"): "ls -l /dev/nvidia*",
}


@record(frozen=True)
class Row:
    """One fact row: the table it belongs to, its values, and where it was read."""

    table: str
    values: Mapping[str, Any]
    source: str

    def identity(self) -> tuple[Any, ...]:
        """(table, *key values): what thing this row is about (``TABLES[table].key``)."""
        spec = TABLES.get(self.table)
        return (self.table, *(self.values.get(k) for k in (spec.key if spec else ())))

    def get(self, key: str, default: Any = None) -> Any:
        v = self.values.get(key, default)
        return default if v is None else v

    def __getitem__(self, key: str) -> Any:
        return self.values.get(key)

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.values.items()}
        d["source"] = self.source
        return d


@record(frozen=True)
class ProbeError:
    """A probe that failed, timed out, or whose tool is missing; the tables it would have filled."""

    probe: str
    tables: tuple[str, ...]
    message: str
    kind: str = "error"  # error | timeout | missing

    def to_dict(self) -> dict[str, Any]:
        return {"probe": self.probe, "tables": list(self.tables), "message": self.message, "kind": self.kind}


MAX_VALUE = 4096  # characters of one parsed value (a version, a path, a name, an env value)


def row(table: str, source: str, **values: Any) -> Row:
    """Build a row, refusing columns the table does not declare (catches typos at test time)."""
    spec = TABLES.get(table)
    if spec is None:
        raise KeyError(f"unknown fact table {table!r}")
    unknown = set(values) - set(spec.column_names)
    if unknown:
        raise KeyError(f"table {table!r} has no column(s) {sorted(unknown)}")
    for k, v in values.items():  # a hostile or broken input cannot make one value megabytes long
        if isinstance(v, str) and len(v) > MAX_VALUE:
            values[k] = v[: MAX_VALUE - 1] + "…"
    return Row(table, dict(values), source[:MAX_VALUE] if isinstance(source, str) else source)


@record
class Facts:
    """All facts known about one machine or one pasted report.

    ``probed`` names the tables some probe attempted (successfully or not).  A table that nobody
    attempted is *not collected*; a table attempted with no rows is *empty*; one whose probe failed has
    errors.  Checks use :meth:`status` to tell these apart so "could not check" never looks healthy.
    """

    rows: list[Row] = field(default_factory=list)
    errors: list[ProbeError] = field(default_factory=list)
    probed: set[str] = field(default_factory=set)
    origin: str = "live"  # live | pasted | described

    def add(self, rows: Iterable[Row]) -> None:
        for r in rows:
            self.rows.append(r)
            self.probed.add(r.table)

    def mark(self, *tables: str) -> None:
        self.probed.update(tables)

    def fail(self, err: ProbeError) -> None:
        self.errors.append(err)
        self.probed.update(err.tables)

    def merge(self, other: "Facts") -> None:
        self.rows.extend(other.rows)
        self.errors.extend(other.errors)
        self.probed |= other.probed

    def table(self, name: str) -> list[Row]:
        return [r for r in self.rows if r.table == name]

    def where(self, table: str, /, **match: Any) -> list[Row]:
        return [r for r in self.table(table) if all(r.values.get(k) == v for k, v in match.items())]

    def first(self, table: str, /, **match: Any) -> Row | None:
        rows = self.where(table, **match)
        return rows[0] if rows else None

    def table_errors(self, name: str) -> list[ProbeError]:
        return [e for e in self.errors if name in e.tables]

    def status(self, name: str) -> str:
        """``ok`` (rows present), ``empty`` (probed, nothing there), ``error`` (probe failed, no rows),
        ``missing`` (nobody looked)."""
        if any(r.table == name for r in self.rows):
            return "ok"
        if self.table_errors(name):
            return "error"
        if name in self.probed:
            return "empty"
        return "missing"

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    @classmethod
    def from_dict(cls, tables: Mapping[str, Any], errors: Iterable[Mapping[str, Any]] = (),
                  origin: str = "live") -> "Facts":
        """Facts back from a report's ``facts`` and ``probe_errors`` (``gpuvet ... --format json``).
        Raises ValueError on anything that is not such a document."""
        if not isinstance(tables, Mapping):
            raise ValueError("facts must be a mapping of table name to rows")
        f = cls(origin=origin)
        for name, rows in tables.items():
            if name not in TABLES:
                continue  # a newer gpuvet's table: ignore, never guess
            if not isinstance(rows, list):
                raise ValueError(f"facts.{name} must be a list of rows")
            f.mark(name)
            cols = set(TABLES[name].column_names)
            for r in rows:
                if not isinstance(r, Mapping):
                    raise ValueError(f"facts.{name} holds a row that is not an object")
                f.rows.append(Row(name, {k: v for k, v in r.items() if k in cols}, str(r.get("source", ""))))
        for e in errors:
            if not isinstance(e, Mapping):
                raise ValueError("probe_errors must hold objects")
            f.fail(ProbeError(str(e.get("probe", "")), tuple(e.get("tables", ())), str(e.get("message", "")),
                              str(e.get("kind", "error"))))
        return f

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in TABLES:
            rows = self.table(name)
            if rows or name in self.probed:
                out[name] = [r.to_dict() for r in rows]
        return out
