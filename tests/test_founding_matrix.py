"""The founding incident in forms tests/fixtures/founding does not hold, generated: every way a report states the
system's ROCm (prose, issue-form fields, AMD's installer, /opt/rocm links and alternatives, ROCM_PATH, `which hipcc`,
`ldconfig -p`, Dockerfiles and compose files) crossed with every way it states the framework's build (PyTorch's ROCm
index in a pip command, a requirements file, a uv or poetry index; pip's, uv's and poetry's transcripts; a wheel
download; the version in a sentence; `torch.__config__.show()`), with the generic hipBLAS / workspace / MIOpen
messages in varied order, and five version pairs (a newer system among them), pasted plain, with CRLF, with ANSI
colours and in Markdown fences.

Each skew must make `diagnose` rank runtime-mismatch (RTM021) first with both versions and the line each was read
from, and `check --from` fail RTM021.  Each has a consistent twin (the same text, the system's release matching the
wheel's) that must not be called a skew, and look-alikes (prose naming several releases, changes, wishes, docs URLs,
suggestions) must give no fact at all.

The shapes are written from how they appear in public threads: the issue form's "### ROCm Version" field (ROCm/ROCm,
ROCm/TheRock issue templates, e.g. github.com/ROCm/TheRock/issues/3065); "I have the rocm 6.0 ubuntu 22.04 packages
installed" (pytorch/pytorch#118457); AMD's installer `amdgpu-install_6.0.60000-1_all.deb` and
`repo.radeon.com/amdgpu-install/7.1/...` (ROCm/legacy-rocm-build#1800, #5615); pip's nightly wheel URL with `%2B`
(pytorch/pytorch#103973, #118457); `torch.__config__.show()`'s "  - HIP Runtime X" line (aten CUDAHooks::showConfig,
pytorch/pytorch#171081); HIP versions 5.7.31921, 6.0.32830, 6.2.41133, 7.0.51831 as collect_env prints them
(pytorch/pytorch#44106 shape; ROCm/pytorch#1402; pytorch/vision#8695).
"""
from __future__ import annotations

import json

import pytest

from conftest import run_cli
from gpuvet.probes.pasted import parse_report
from gpuvet.probes.prose import parse_prose

# (torch version, wheel tag, the HIP it was built with, system ROCm of the skew, system ROCm of the consistent twin)
PAIRS = [
    ("2.3.0.dev20240215+rocm5.7", "5.7", "5.7.31921", "5.6.1", "5.7.1"),  # the founding incident
    ("2.5.1+rocm6.2", "6.2", "6.2.41133", "6.1.3", "6.2.4"),
    ("2.3.1+rocm6.0", "6.0", "6.0.32830", "5.7.1", "6.0.2"),
    ("2.10.0+rocm7.0", "7.0", "7.0.51831", "6.4.3", "7.0.2"),
    ("2.3.0+rocm5.7", "5.7", "5.7.31921", "6.0.2", "5.7.1"),  # the system newer than the build
]


def _mm(v: str) -> str:
    return ".".join(v.split(".")[:2])


def _build_no(v: str) -> str:
    """AMD's 5-digit release field: 5.6.1 -> 50601."""
    a, b, c = (v.split(".") + ["0"])[:3]
    return f"{int(a)}{int(b):02d}{int(c):02d}"


# ---- the system's ROCm, as users state it (each: release -> lines)
SYSTEM = {
    "prose-installed": lambda s: [f"ROCm {s} installed on the host, fine-tuning Stable Diffusion."],
    "prose-running": lambda s: [f"I'm running ROCm {s} on Ubuntu 22.04 with an MI210."],
    "field": lambda s: ["Environment:", f"ROCm version: {s}", "GPU: MI210"],
    "have-major-minor": lambda s: [f"I have rocm {_mm(s)}"],
    "our-install": lambda s: [f"Our ROCm install is {s} (amdgpu-install {s})"],
    "env-list": lambda s: [f"Ubuntu 22.04, ROCm {s}, MI210"],
    "bullets": lambda s: ["**System**", "- OS: Ubuntu 22.04", f"- **ROCm**: {s}", "- GPU: Instinct MI210"],
    "issue-form": lambda s: ["### ROCm Version", "", f"ROCm {s}", "", "### Operating System", "", "Ubuntu 22.04",
                             "", "### GPU", "", "MI210"],
    "amdgpu-install-deb": lambda s: [
        f"$ wget https://repo.radeon.com/amdgpu-install/{s}/ubuntu/jammy/amdgpu-install_{_mm(s)}.{_build_no(s)}-1_all.deb",
        f"$ sudo apt install ./amdgpu-install_{_mm(s)}.{_build_no(s)}-1_all.deb",
        "$ sudo amdgpu-install --usecase=rocm"],
    "dpkg-amdgpu-install": lambda s: [
        "$ dpkg -l | grep amdgpu-install",
        f"ii  amdgpu-install    {_mm(s)}.{_build_no(s)}-1    all    AMDGPU driver repository and installer"],
    "ls-l-symlink": lambda s: ["$ ls -l /opt/rocm", f"lrwxrwxrwx 1 root root 15 Feb 20 10:01 /opt/rocm -> /opt/rocm-{s}"],
    "update-alternatives": lambda s: [
        "$ update-alternatives --display rocm", "rocm - auto mode", f"  link best version is /opt/rocm-{s}",
        f"  link currently points to /opt/rocm-{s}", "  link rocm is /opt/rocm",
        f"/opt/rocm-{s} - priority {_build_no(s)}"],
    "rocm-path": lambda s: ["$ echo $ROCM_PATH", f"/opt/rocm-{s}"],
    "which-hipcc": lambda s: ["$ which hipcc", f"/opt/rocm-{s}/bin/hipcc"],
    "ldconfig": lambda s: ["$ ldconfig -p | grep amdhip64",
                           f"\tlibamdhip64.so.{s.split('.')[0]} (libc6,x86-64) => /opt/rocm-{s}/lib/libamdhip64.so.{s.split('.')[0]}"],
    "compose": lambda s: ["services:", "  train:", f"    image: rocm/dev-ubuntu-22.04:{s}",
                          "    devices: [/dev/kfd, /dev/dri]"],
    "docker-images": lambda s: ["$ docker images", "REPOSITORY          TAG       IMAGE ID       CREATED       SIZE",
                                f"rocm/dev-ubuntu-22.04   {s}   0c8a5d3f0e2b   2 weeks ago   4.1GB"],
    "dockerfile-arg": lambda s: [f"ARG ROCM_VERSION={s}", "FROM ubuntu:22.04",
                                 "RUN apt-get update && apt-get install -y wget"],
    "apt-list-multi-version": lambda s: ["$ apt list --installed 2>/dev/null | grep rocm-core",
                                         f"rocm-core{s}/jammy,now {s}.{_build_no(s)}-93~22.04 amd64 [installed,automatic]"],
    "apt-install-multi-version": lambda s: [f"$ sudo apt install rocm-hip-sdk{s}"],
    "markdown-table": lambda s: ["| Component | Version |", "|---|---|", f"| **ROCm** | `{s}` |", "| GPU | MI210 |"],
    "trademark-parenthetical": lambda s: [f"AMD ROCm™ {s} (from /opt/rocm/.info/version) on the training node."],
}


def _nightly(tv: str) -> bool:
    return ".dev" in tv


def _index(tv: str, tag: str) -> str:
    return f"https://download.pytorch.org/whl/{'nightly/' if _nightly(tv) else ''}rocm{tag}"


# ---- the framework's build (each: torch version, wheel tag, HIP -> lines)
FRAMEWORK = {
    "pip-index": lambda tv, tag, hip: [
        f"pip3 install {'--pre ' if _nightly(tv) else ''}torch torchvision --index-url {_index(tv, tag)}"],
    "requirements-extra-index": lambda tv, tag, hip: [
        "$ cat requirements.txt", f"--extra-index-url {_index(tv, tag)}", "torch", "torchvision", "diffusers"],
    "uv-index": lambda tv, tag, hip: [
        "[[tool.uv.index]]", 'name = "pytorch-rocm"', f'url = "{_index(tv, tag)}"', "explicit = true"],
    "poetry-source": lambda tv, tag, hip: [
        "[[tool.poetry.source]]", 'name = "torch-rocm"', f'url = "{_index(tv, tag)}"', 'priority = "explicit"'],
    "pip-looking-in": lambda tv, tag, hip: [f"Looking in indexes: {_index(tv, tag)}", "Collecting torch"],
    "pip-success": lambda tv, tag, hip: [f"Successfully installed filelock-3.13.1 torch-{tv} triton-2.2.0"],
    "pip-satisfied": lambda tv, tag, hip: [
        f"Requirement already satisfied: torch in ./venv/lib/python3.10/site-packages ({tv})"],
    "uv-plus": lambda tv, tag, hip: ["Resolved 24 packages in 2.13s", "Installed 2 packages in 1.30s",
                                      f" + torch=={tv}", " + diffusers==0.26.3"],
    "poetry-installing": lambda tv, tag, hip: ["Package operations: 1 install, 0 updates, 0 removals", "",
                                               f"  - Installing torch ({tv})"],
    "wheel-download": lambda tv, tag, hip: [
        f"Downloading {_index(tv, tag)}/torch-{tv.replace('+', '%2B')}-cp310-cp310-linux_x86_64.whl (1873.2 MB)"],
    "prose-version": lambda tv, tag, hip: [f"torch version {tv}, training with diffusers."],
    "repl": lambda tv, tag, hip: [">>> import torch", ">>> torch.__version__", f"'{tv}'"],
    "comfyui-log": lambda tv, tag, hip: [
        "Total VRAM 65520 MB, total RAM 257588 MB", "AMD arch: gfx90a",
        f"ROCm version: ({tag.split('.')[0]}, {tag.split('.')[1]})", "Set vram state to: NORMAL_VRAM"],
    "uv-lock": lambda tv, tag, hip: [
        "[[package]]", 'name = "torch"', f'version = "{tv}"', f'source = {{ registry = "{_index(tv, tag)}" }}'],
    "prose-build": lambda tv, tag, hip: [
        f"Installed the PyTorch {'nightly' if _nightly(tv) else 'build'} for ROCm {tag} in a venv."],
    "version-hip-inline": lambda tv, tag, hip: [f"torch.version.hip: {hip}-d1770ee1b", "torch.cuda.is_available(): True"],
    "markdown-table-torch": lambda tv, tag, hip: ["| package | version |", "|---|---|", f"| PyTorch | {tv} |",
                                                   "| diffusers | 0.26.3 |"],
    "config-show": lambda tv, tag, hip: [
        '$ python -c "import torch; print(torch.__config__.show())"', "PyTorch built with:", "  - GCC 9.3",
        "  - C++ Version: 201703", "  - OpenMP 201511 (a.k.a. OpenMP 4.5)", f"  - HIP Runtime {hip}",
        "  - MIOpen 2.20.0", "  - Magma 2.7.2",
        "  - Build settings: BUILD_TYPE=Release, CXX_COMPILER=/opt/rh/devtoolset-9/root/usr/bin/c++, USE_ROCM=ON, "],
}

ERRORS = [
    ["RuntimeError: HIP error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `hipblasGemmStridedBatchedEx( handle, opa, "
     "opb, m, n, k, (void*)&falpha, a, HIPBLAS_R_16B, lda, stridea, b, HIPBLAS_R_16B, ldb, strideb, (void*)&fbeta, c, "
     "HIPBLAS_R_16B, ldc, stridec, num_batches, HIPBLAS_R_32F, HIPBLAS_GEMM_DEFAULT)`"],
    ["Traceback (most recent call last):", '  File "/home/sd/train_sd.py", line 211, in <module>',
     "    noise_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample",
     "RuntimeError: HIP error: HIP_ERROR_NoDeviceMemory: failed to allocate workspace"],
    ["MIOpen(HIP): Warning [SQLiteBase] SQLite database not found:/opt/rocm/share/miopen/db/gfx90a68.kdb",
     "hipBLAS error: HIPBLAS_STATUS_NOT_SUPPORTED (batch size 256, fp16)"],
]


def _wrap(blocks: list[list[str]], how: str) -> str:
    if how == "markdown":
        text = "\n\n".join("```\n" + "\n".join(b) + "\n```" for b in blocks) + "\n"
    else:
        text = "\n\n".join("\n".join(b) for b in blocks) + "\n"
    if how == "crlf":
        text = text.replace("\n", "\r\n")
    if how == "ansi":
        text = "\n".join(f"\x1b[31m{ln}\x1b[0m" if "Error" in ln or "error" in ln else ln
                         for ln in text.split("\n"))
    return text


WRAPS = ["plain", "crlf", "ansi", "markdown"]


def case(s_name: str, f_name: str, k: int, consistent: bool = False) -> tuple[str, tuple]:
    tv, tag, hip, sys_skew, sys_ok = PAIRS[k % len(PAIRS)]
    system = sys_ok if consistent else sys_skew
    err = ERRORS[k % len(ERRORS)]
    parts = [SYSTEM[s_name](system), FRAMEWORK[f_name](tv, tag, hip)]
    order = k % 3  # the generic messages first, last, or between
    blocks = [err, *parts] if order == 0 else ([*parts, err] if order == 1 else [parts[0], err, parts[1]])
    return _wrap(blocks, WRAPS[k % len(WRAPS)]), PAIRS[k % len(PAIRS)]


# every system shape with every framework shape: the pair, the order and the wrapping rotate
GRID = [(s, f, i * len(FRAMEWORK) + j + i) for i, s in enumerate(SYSTEM) for j, f in enumerate(FRAMEWORK)]
# through the whole command line: each shape of either side at least twice, every pair and wrapping
CLI = [g for n, g in enumerate(GRID) if n % 7 == 0 or g[0] in ("our-install", "env-list") and g[1] in (
    "pip-index", "prose-version")]


def _facts(text: str):
    facts = parse_report(text, "t")
    rocm = {r.get("version") for r in facts.table("runtimes") if r.get("name") == "rocm"}
    hips = {r.get("hip") for r in facts.table("framework_builds") if r.get("hip")}
    return rocm, hips, facts


@pytest.mark.parametrize("s_name,f_name,k", GRID, ids=[f"{s}+{f}" for s, f, _ in GRID])
def test_every_shape_pair_gives_both_versions(s_name, f_name, k):
    text, (tv, tag, hip, sys_skew, sys_ok) = case(s_name, f_name, k)
    rocm, hips, facts = _facts(text)
    assert {_mm(v) for v in rocm} == {_mm(sys_skew)}, (rocm, facts.rows)
    assert {_mm(h) for h in hips} == {tag}, hips
    twin, _ = case(s_name, f_name, k, consistent=True)
    rocm2, hips2, _ = _facts(twin)
    assert {_mm(v) for v in rocm2} == {_mm(sys_ok)} and {_mm(h) for h in hips2} == {tag}


@pytest.mark.parametrize("s_name,f_name,k", CLI, ids=[f"{s}+{f}" for s, f, _ in CLI])
def test_diagnose_ranks_the_skew_first_and_check_fails_rtm021(s_name, f_name, k):
    text, (tv, tag, hip, sys_skew, sys_ok) = case(s_name, f_name, k)
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    assert r.code == 1, r.err
    diags = r.json()["diagnoses"]
    top = diags[0]
    assert top["cause"] == "runtime-mismatch" and "RTM021" in top["checks"], [(d["cause"], d["checks"]) for d in diags]
    facts = [f for f in top["facts"] if f.get("check") == "RTM021"]
    said = " ".join(f["text"] + " " + f.get("source", "") for f in facts)
    assert f"HIP {tag}" in said and f"rocm {_mm(sys_skew)}" in said, said  # both versions ...
    assert all("line " in f.get("source", "") for f in facts), facts  # ... and the line each was read from
    fixes = " ".join(x.get("text", "") if isinstance(x, dict) else str(x) for x in top.get("fixes", [])) + str(top["fix"])
    assert f"rocm{_mm(sys_skew)}" in fixes or f"ROCm {_mm(sys_skew)}" in fixes, fixes  # the build for the installed ROCm
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert "RTM021" in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}


@pytest.mark.parametrize("s_name,f_name,k", CLI, ids=[f"{s}+{f}" for s, f, _ in CLI])
def test_the_consistent_twin_is_no_skew(s_name, f_name, k):
    text, _ = case(s_name, f_name, k, consistent=True)
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
    assert all("RTM021" not in d["checks"] for d in diags), [(d["cause"], d["checks"]) for d in diags]
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    codes = {f["code"]: f["outcome"] for f in doc["findings"] if f["code"] == "RTM021"}
    assert codes == {"RTM021": "passed"}, codes  # compared, and found to agree


def test_a_newer_system_is_named_so_and_not_told_to_upgrade():
    text, _ = case("prose-installed", "pip-index", 4)  # torch 2.3.0+rocm5.7 on ROCm 6.0.2
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    f = next(f for f in doc["findings"] if f["code"] == "RTM021")
    assert f["outcome"] == "failed" and "the system is newer than the build" in f["title"], f["title"]
    fixes = json.dumps(f.get("fixes"))
    assert "rocm6.0" in fixes and "upgrade ROCm" not in fixes and "downgrade" in fixes, fixes


# ---- look-alikes: prose that names releases in another role gives no fact
@pytest.mark.parametrize("text", [
    "tried ROCm 5.7 and 6.0, same error\n",
    "Upgrade to ROCm 6.1 fixed it for me.\n",
    "It works on ROCm 5.7 but not here.\n",
    "See https://rocm.docs.amd.com/en/docs-5.6.1/ for the install steps.\n",
    "I installed PyTorch for ROCm 5.7.\n",
    "Does ROCm 6.0 support the MI210?\n",
    "ROCm 6.2 was released last week.\n",
    "The nightly for ROCm 5.7 is out.\n",
    "We moved from ROCm 5.6 to ROCm 6.0 last month.\n",
    "ROCm 5.7 and ROCm 6.0 both fail.\n",
    "PyTorch 2.4 with ROCm 6.1 fails to install\n",
    "the ROCm 6.0 wheels are bundled with their own runtime\n",
    "Is there a ROCm 5.7 build of torch?\n",
    "I have ROCm 6.0.2 installed.\nROCm version: 5.7.1\n",  # two releases stated: neither is the system's
    "PyTorch built with:\n  - GCC 9.3\n  - ROCm 6.2.0\n",  # the build's own list
    "If you have ROCm 6.0 installed, use the rocm6.0 index.\n",
    "ROCm version: (6, 2)\n",  # ComfyUI's print of torch.version.hip: the build's
    "# ARG ROCM_VERSION=6.0\n",
    "Try this:\nsudo apt install rocm-hip-sdk6.0.2\n",
    "ROCm 6.2 (released today) brings MI300 support\n",
    "| Component | node A | node B |\n|---|---|---|\n| ROCm | 7.0.3 | 7.2.1 |\n",  # which column is this machine?
    "| torch | ROCm | result |\n|---|---|---|\n| 2.3.0+rocm5.7 | 5.6.1 | crash |\n| 2.1.2+rocm5.6 | 5.6.1 | ok |\n",
])
def test_prose_in_another_role_is_no_system_fact(text):
    rows = parse_prose(text, "t")
    assert not [r for r in rows if r.table == "runtimes"], rows


@pytest.mark.parametrize("text", [
    "Try this instead:\npip install torch --index-url https://download.pytorch.org/whl/rocm6.0\n",
    "# pip install torch --index-url https://download.pytorch.org/whl/rocm6.0\n",
    "You should install it with:\n```\npip install torch --index-url https://download.pytorch.org/whl/rocm6.0\n```\n",
    "pip install torch==2.3.0+rocm5.7 --index-url https://download.pytorch.org/whl/rocm5.7\n"
    "ERROR: Could not find a version that satisfies the requirement torch==2.3.0+rocm5.7 (from versions: none)\n"
    "ERROR: No matching distribution found for torch==2.3.0+rocm5.7\n",
    "see https://download.pytorch.org/whl/rocm6.0 for the list of wheels\n",  # a URL, not an install
    "pip install torch --index-url https://download.pytorch.org/whl/rocm5.7\n"
    "pip install torch --index-url https://download.pytorch.org/whl/rocm6.0\n",  # two indexes: which one stayed?
    "Found existing installation: torch 2.1.2+rocm5.6\nUninstalling torch-2.1.2+rocm5.6:\n"
    "  Successfully uninstalled torch-2.1.2+rocm5.6\n",
    " - torch==2.1.2+rocm5.6\n",  # uv's removed package
    "torch 2.1.2+rocm5.6 works, 2.3.0+rocm5.7 crashes\n",
    "upgrading torch 2.1.2+rocm5.6 to 2.3.0+rocm5.7 fixed it\n",
    "Is there a PyTorch build for ROCm 6.1?\n",
    "PyTorch 2.4 with ROCm 6.1 fails to install\n",
    "tensorflow-rocm built for ROCm 5.7 is installed\n",
    "I run ROCm 6.0.2 and want the PyTorch nightly for ROCm 6.1.\n",
    "ROCm version: (6, -1)\n",  # ComfyUI could not read torch.version.hip
])
def test_commands_and_prose_in_another_role_are_no_build_fact(text):
    rows = parse_prose(text, "t")
    assert not [r for r in rows if r.table == "framework_builds"], rows


def test_uv_and_poetry_transcripts_read_the_version_installed():
    rows = parse_prose(" - torch==2.1.2+rocm5.6\n + torch==2.3.0+rocm5.7\n", "t")
    assert [r.get("version") for r in rows if r.table == "framework_builds"] == ["2.3.0+rocm5.7"]
    rows = parse_prose("  - Updating torch (2.1.2+rocm5.6 -> 2.3.0+rocm5.7)\n", "t")
    assert [r.get("version") for r in rows if r.table == "framework_builds"] == ["2.3.0+rocm5.7"]


def test_a_tool_outranks_a_statement_and_any_version_outranks_an_index():
    # the user says 6.0 but the MIOpen path shows the tree in use: the tool's release is the fact
    text = ("I have ROCm 6.0.2 installed\n"
            "MIOpen(HIP): Warning [SQLiteBase] SQLite database not found:/opt/rocm-5.6.1/share/miopen/db/gfx90a68.kdb\n"
            "pip install torch --index-url https://download.pytorch.org/whl/rocm6.0\n"
            "$ python -c 'import torch; print(torch.__version__)'\n2.1.2+rocm5.6\n")
    facts = parse_report(text, "t")
    assert {r.get("version") for r in facts.table("runtimes") if r.get("name") == "rocm"} == {"5.6.1"}
    builds = facts.table("framework_builds")
    assert [(b.get("version"), b.get("hip")) for b in builds] == [("2.1.2+rocm5.6", "5.6")], builds
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert {f["code"]: f["outcome"] for f in doc["findings"] if f["code"] == "RTM021"} == {"RTM021": "passed"}


def test_issue_form_field_and_installer_name_the_release():
    rows = parse_prose("### ROCm Version\n\nROCm 6.0.0\n\n### ROCm Component\n\n_No response_\n", "t")
    assert [(r.get("version"), "line 3" in r.source) for r in rows] == [("6.0.0", True)]
    rows = parse_prose("### ROCm Version\n\nnightly\n", "t")
    assert rows == []
    rows = parse_prose("amdgpu-install-6.4.60402-2187269.el8.noarch.rpm\n", "t")
    assert [r.get("version") for r in rows] == ["6.4.2"]
    # the installer's field must agree with its own name: 5.6.60101 is no release
    assert parse_prose("amdgpu-install_5.6.60101-1_all.deb\n", "t") == []


def test_prose_facts_reach_diagnose_with_the_lead_forms():
    """The three forms the lead tried (issue 9, f13's brief): each ranks RTM021 first now."""
    forms = [
        "Installed the nightly: pip3 install --pre torch torchvision --index-url "
        "https://download.pytorch.org/whl/nightly/rocm5.7\nOur ROCm install is 5.6.1 (amdgpu-install 5.6.1)\n"
        "hipBLAS error: HIPBLAS_STATUS_NOT_SUPPORTED\n",
        "torch version 2.3.0.dev20240215+rocm5.7, ROCm 5.6.1 on Ubuntu 22.04, MI210\n"
        "MIOpen(HIP): Warning [SQLiteBase] SQLite database not found: /opt/rocm/share/miopen/db/gfx90a6e.kdb\n"
        "rocblas_status_not_supported / hipBLAS_STATUS_NOT_SUPPORTED when batch size 256 in fp16\n",
    ]
    for text in forms:
        diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
        assert diags[0]["cause"] == "runtime-mismatch" and "RTM021" in diags[0]["checks"], diags[0]
        doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
        assert "RTM021" in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}


# ---- the team's CI gate (issue 9): rocminfo's "Runtime Version 1.1" is the HSA API version, not the ROCm release.
# New shapes: the same commands in a CI runner's log, every line stamped (GitHub Actions' "2024-02-20T10:01:02.1234567Z ",
# Jenkins' timestamper "[2024-02-20T10:01:02.123Z] "), and the gate told beside prose versions.
CI_GATE = [
    '$ python -c "import torch; print(torch.__version__, torch.version.hip)"',
    "{torch} {hip}",
    "$ hipcc --version",
    "HIP version: 5.6.31062",
    "AMD clang version 16.0.0 (https://github.com/RadeonOpenCompute/llvm-project roc-5.6.1 23332 "
    "4f9bb99d78a4d8d9770be38b91ebd004ea4d2a3a)",
    "InstalledDir: /opt/rocm-5.6.1/llvm/bin",
    '$ rocminfo | grep "Runtime Version"',
    "Runtime Version:         1.1",
    "ERROR: HIP version check failed: runtime 1.1 != hipcc 5.6",
    "Error: Process completed with exit code 1.",
]
SKEW = ("2.3.0.dev20240215+rocm5.7", "5.7.31921-d1770ee1b")
AGREE = ("2.1.2+rocm5.6", "5.6.31061-8c743ae5d")


def _ci_log(torch_hip: tuple[str, str], stamp: str) -> str:
    lines = [ln.format(torch=torch_hip[0], hip=torch_hip[1]) for ln in CI_GATE]
    if stamp == "github":
        lines = [f"2024-02-20T10:01:{i:02d}.{1234567 + i}Z {ln}" for i, ln in enumerate(lines)]
    elif stamp == "jenkins":
        lines = [f"[2024-02-20T10:01:{i:02d}.{123 + i}Z] {ln}" for i, ln in enumerate(lines)]
    return "\n".join(lines) + "\n"


def _rtm(text: str) -> dict:
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    return {f["code"]: f["outcome"] for f in doc["findings"] if f["code"] in ("RTM021", "RTM028")}


@pytest.mark.parametrize("stamp", ["github", "jenkins"])
def test_ci_gate_in_a_runner_log_explains_itself_and_the_real_skew_comes_first(stamp):
    text = _ci_log(SKEW, stamp)
    assert _rtm(text) == {"RTM021": "failed", "RTM028": "failed"}
    doc = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()
    top = doc["diagnoses"][0]
    assert top["cause"] == "runtime-mismatch" and "RTM021" in top["checks"], doc["diagnoses"]
    assert any(n["code"] == "RTM028" for n in doc["notes"]), doc["notes"]  # the gate compares unlike numbers


@pytest.mark.parametrize("stamp", ["github", "jenkins", "none"])
def test_ci_gate_on_a_consistent_stack_blames_the_gate_not_the_stack(stamp):
    text = _ci_log(AGREE, stamp)
    assert _rtm(text) == {"RTM021": "passed", "RTM028": "failed"}
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    doc = r.json()
    assert r.code == 0 and doc["diagnoses"] == [], doc["diagnoses"]
    assert [s["signature"] for s in doc["user_code_signals"]] == ["LOG380"]
    assert any(n["code"] == "RTM028" for n in doc["notes"])


@pytest.mark.parametrize("torch_line,skew", [("torch 2.3.0.dev20240215+rocm5.7", True), ("torch 2.1.2+rocm5.6", False)])
def test_ci_gate_told_in_prose(torch_line, skew):
    text = (f"Our CI gate fails on every run. ROCm 5.6.1 installed, {torch_line}.\n"
            '$ rocminfo | grep "Runtime Version"\nRuntime Version:         1.1\n'
            "ERROR: ROCm version check failed: rocminfo Runtime Version 1.1 vs ROCm 5.6.1\n")
    assert _rtm(text) == {"RTM021": "failed" if skew else "passed", "RTM028": "failed"}
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
    if skew:
        assert diags[0]["cause"] == "runtime-mismatch", diags
    else:
        assert not diags, diags


def test_a_stamped_line_in_prose_is_not_a_runner_log():
    from gpuvet.probes.pasted import clean

    text = "2024-02-20T10:01:02Z the job failed\nRuntime Version:         1.1\nmore words\nand more\n"
    assert clean(text) == text
    gh = "2024-02-20T10:01:02.1234567Z HIP version: 5.6.31062\n2024-02-20T10:01:03.1234567Z done\n"
    assert clean(gh) == "HIP version: 5.6.31062\ndone\n"


def test_a_pasted_gpu_and_release_without_the_driver_is_not_a_missing_driver():
    """Absent is not "not loaded" (issue 9): a ComfyUI log and a stated release name the GPU and ROCm on a machine whose
    driver the text never shows; DRV026 says it cannot tell. rocminfo's own "ROCk module is NOT loaded" still fails it."""
    text = "ROCm 5.6.1 installed on the host.\nDevice: cuda:0 AMD Instinct MI210 : native\n"
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert {f["code"]: f["outcome"] for f in doc["findings"] if f["code"] == "DRV026"} == {"DRV026": "unknown"}


@pytest.mark.parametrize("runtime,loads_other", [("5.6.31062", True), ("5.7.31921", False)])
def test_config_show_names_the_runtime_torch_runs_on(runtime, loads_other):
    """torch.__config__.show()'s "HIP Runtime" is the runtime torch loaded (aten asks hipRuntimeGetVersion): beside
    torch.version.hip it is the loaded-vs-built comparison (BLD046), not a second build."""
    text = ('$ python -c "import torch; print(torch.__version__, torch.version.hip); print(torch.__config__.show())"\n'
            "2.3.0.dev20240215+rocm5.7 5.7.31921-d1770ee1b\nPyTorch built with:\n  - GCC 9.3\n"
            f"  - HIP Runtime {runtime}\n  - MIOpen 2.20.0\n$ cat /opt/rocm/.info/version\n5.6.1-93\n")
    facts = parse_report(text, "t")
    assert [b.get("hip") for b in facts.table("framework_builds")] == ["5.7.31921-d1770ee1b"]
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    got = {f["code"]: f for f in doc["findings"] if f["code"] in ("RTM021", "BLD046")}
    assert got["RTM021"]["outcome"] == "failed" and f"runs on HIP runtime {runtime}" in got["RTM021"]["title"]
    assert got["BLD046"]["outcome"] == ("failed" if loads_other else "passed"), got["BLD046"]["title"]


@pytest.mark.parametrize("text,system,build", [
    ("rocm is 5.6.1, torch is the 2.3 nightly for rocm 5.7. any idea?\n", "5.6.1", "5.7"),
    ("Running SD fine-tuning on an MI210 (ROCm 5.6.1). Grabbed the torch nightly (rocm5.7 wheel) last week.\n",
     "5.6.1", "5.7"),
    ("I have ROCm 6.0.2 and ROCm 5.7.1 on this box, torch is the nightly for ROCm 6.1\n", None, "6.1"),
])
def test_one_sentence_may_state_the_system_and_the_build(text, system, build):
    """Two releases in one sentence in different roles are both read; two in one role are neither."""
    rows = parse_prose(text, "t")
    assert [r.get("version") for r in rows if r.table == "runtimes"] == ([system] if system else [])
    assert [r.get("hip") for r in rows if r.table == "framework_builds"] == [build]
