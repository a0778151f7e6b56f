"""Environment blocks (probes/envblock.py): the labelled version lists of bug reports become the same fact rows a
tool would give, so RTM021 / DRV001 / BLD041 judge a pasted list as they judge a machine.

The shapes are those of public issue templates as the project's tuning incidents show them (the search tools were
out of budget the day this was written, so the templates' own files were not re-read): PyTorch's old bug template
("- PyTorch Version (e.g., 1.0): 1.6.0", "- GPU models and configuration: GTX1080ti", n4c-t0076, new-f0093),
TensorFlow's ("- TensorFlow version (use command below): 2.1.0", "- GPU model and memory: ...", n4c-t0050),
`transformers-cli env` ("- `transformers` version: 4.9.1", "- Platform: Linux-5.4.104+-x86_64-with-Ubuntu-18.04-bionic",
"- PyTorch version (GPU?): 1.9.0+cu102 (True)", new-t0022), ROCm/ROCm's and ROCm/TheRock's issue forms ("### ROCm
Version" then the value, n2r-t0006), free-form bullets ("- **PyTorch**: 2.9.1+rocm7.2.0.lw.git7e1940d4", n4r-f0033;
"- Driver: 550.163.01" / "- PyTorch: 2.8.0+cu128", n4c-t0001; "- Nvidia Driver: 550.54.15", n4c-f0066), ComfyUI's
start-up banner ("Total VRAM ...", "pytorch version: 2.10.0+rocm7.1", "AMD arch: gfx1100", new-f0126), jax's
environment print ("jax: 0.4.31" / "jaxlib: 0.4.31", n2r-t0014) and Markdown tables.
"""
from __future__ import annotations

import pytest

from conftest import run_cli
from gpuvet.probes.envblock import label_kind, parse_envblock
from gpuvet.probes.pasted import parse_report

# ---- the lead's forms (missing on main at 18:15 UTC) and their consistent twins
MD_BULLETS = """Environment:
- GPU: AMD Instinct MI210
- ROCm: {rocm}
- PyTorch: 2.3.0.dev20240215+rocm5.7 (nightly)
- Python: 3.10

Training randomly crashes with:
RuntimeError: HIP error: hipErrorOutOfMemory
HIP_ERROR_NoDeviceMemory: failed to allocate workspace
"""
MD_TABLE = """**Environment**
| | |
|---|---|
| GPU | MI210 |
| ROCm | {rocm} |
| torch | 2.3.0.dev20240215+rocm5.7 |

hipBLAS error: HIPBLAS_STATUS_NOT_SUPPORTED
"""
PROSE_WHEEL_FIELD = """OS: Ubuntu 22.04
ROCm Version: ROCm {rocm}
GPU: AMD Instinct MI210 (gfx90a)
PyTorch installed from the nightly channel (rocm5.7 wheel), version 2.3.0.dev20240215
Memory access fault by GPU node-2 (Agent handle: 0x5566) on address 0x7f1b2c000000. Reason: Page not present or supervisor privilege.
Aborted (core dumped)
"""
# a header row over one data row; GitHub's issue form; a bold-label list (ROCm's own template wording)
MD_HEADER_TABLE = """| GPU | ROCm | PyTorch |
|-----|------|---------|
| MI210 | {rocm} | 2.3.0.dev20240215+rocm5.7 |

MIOpen(HIP): Warning [SQLiteBase] SQLite database not found:/opt/rocm/share/miopen/db/gfx90a68.kdb
hipBLAS error: HIPBLAS_STATUS_NOT_SUPPORTED (batch size 256, fp16)
"""
ISSUE_FORM = """### Problem Description

Training crashes at batch size 256.

### Operating System

Ubuntu 22.04.4 LTS

### GPU

AMD Instinct MI210

### ROCm Version

ROCm {rocm}

### PyTorch version

2.3.0.dev20240215+rocm5.7

### ROCm Component

_No response_

RuntimeError: HIP error: HIP_ERROR_NoDeviceMemory: failed to allocate workspace
"""
BOLD_LIST = """**System information**
* **OS**: Ubuntu 22.04
* **ROCm version:** {rocm}
* **torch version**: `2.3.0.dev20240215+rocm5.7`
* **CUDA used to build PyTorch**: N/A

RuntimeError: HIP error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `hipblasGemmStridedBatchedEx( handle, opa, opb, m, n, k, (void*)&falpha, a, HIPBLAS_R_16B, lda, stridea, b, HIPBLAS_R_16B, ldb, strideb, (void*)&fbeta, c, HIPBLAS_R_16B, ldc, stridec, num_batches, HIPBLAS_R_32F, HIPBLAS_GEMM_DEFAULT)`
"""
SKEWS = {"md-bullets": MD_BULLETS, "md-table": MD_TABLE, "prose-wheel-field": PROSE_WHEEL_FIELD,
         "md-header-table": MD_HEADER_TABLE, "issue-form": ISSUE_FORM, "bold-list": BOLD_LIST}


@pytest.mark.parametrize("name", sorted(SKEWS))
def test_a_rocm_skew_in_an_environment_block_ranks_rtm021_first_with_both_versions(name):
    text = SKEWS[name].format(rocm="5.6.1")
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    assert r.code == 1, r.err
    top = r.json()["diagnoses"][0]
    assert top["cause"] == "runtime-mismatch" and "RTM021" in top["checks"], [(d["cause"], d["checks"]) for d in r.json()["diagnoses"]]
    facts = [f for f in top["facts"] if f.get("check") == "RTM021"]
    said = " ".join(f["text"] + " " + f.get("source", "") for f in facts)
    assert "HIP 5.7" in said and "rocm 5.6.1" in said, said  # both versions ...
    assert all("line " in f.get("source", "") for f in facts), facts  # ... and the line each was read from
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert "RTM021" in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}


@pytest.mark.parametrize("name", sorted(SKEWS))
def test_the_consistent_twin_is_no_skew(name):
    text = SKEWS[name].format(rocm="5.7.1")
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
    assert all("RTM021" not in d["checks"] for d in diags), [(d["cause"], d["checks"]) for d in diags]
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert {f["code"]: f["outcome"] for f in doc["findings"] if f["code"] == "RTM021"} == {"RTM021": "passed"}


def test_rocm_smi_driver_version_is_the_amdgpu_driver_not_a_rocm_release():
    text = """$ rocm-smi --showdriverversion
============================ ROCm System Management Interface ============================
================================== Version of System Component ==================================
Driver version: 6.1.5
=================================================================================================
============================================ End of ROCm SMI Log =============================================
$ pip list | grep torch
torch                    2.3.0+rocm6.0
torchvision              0.18.0+rocm6.0
RuntimeError: HIP error: invalid device function
"""
    assert parse_envblock(text, "t") == []
    facts = parse_report(text, "t")
    assert not facts.table("runtimes") and not [d for d in facts.table("drivers") if d.get("vendor") == "nvidia"]
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"]
    assert all("RTM021" not in d["checks"] for d in diags)


# ---- NVIDIA: a driver too old for the torch CUDA line; a CPU build beside a GPU
CUDA_BLOCK = """## Environment
- OS: Ubuntu 20.04
- GPU: NVIDIA GeForce RTX 3090
- NVIDIA driver: {driver}
- PyTorch: 2.1.0+cu121
- Python: 3.10

RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version
"""


def test_a_driver_too_old_for_the_torch_cuda_line_is_the_drv001_finding():
    text = CUDA_BLOCK.format(driver="470.82")
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    top = r.json()["diagnoses"][0]
    assert top["cause"] == "driver-too-old" and "DRV001" in top["checks"], r.json()["diagnoses"]
    said = " ".join(f["text"] + " " + f.get("source", "") for f in top["facts"])
    assert "470.82" in said and "12.1" in said and "line 4" in said and "line 5" in said, said
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert {f["code"]: f["outcome"] for f in doc["findings"] if f["code"] == "DRV001"} == {"DRV001": "failed"}
    twin = run_cli(["check", "--from", "-", "--format", "json"], stdin=CUDA_BLOCK.format(driver="535.54.03")).json()
    assert {f["code"]: f["outcome"] for f in twin["findings"] if f["code"] == "DRV001"} == {"DRV001": "passed"}


@pytest.mark.parametrize("value,driver", [
    ("- Nvidia Driver: 550.54.15", "550.54.15"),  # n4c-f0066
    ("- Driver: 550.163.01", "550.163.01"),  # n4c-t0001: a bare "Driver" in NVIDIA's numbering, in a list
    ("* **NVIDIA driver version**: 535.54.03", "535.54.03"),
    ("- CUDA Driver: 12.0 (Driver 528.49)", "528.49"),  # n2c-f0071
    ("| NVIDIA driver | 470.82.01 |", "470.82.01"),
])
def test_nvidia_driver_fields(value, driver):
    rows = [r for r in parse_envblock(value + "\n", "t") if r.table == "drivers"]
    assert [(r.get("vendor"), r.get("component"), r.get("version")) for r in rows] == [("nvidia", "user-space", driver)]


CPU_BLOCK = """**Environment**
- OS: Windows 11
- GPU: RTX 4090
- torch: 2.1.0+{tag}
- Python: 3.11

AssertionError: Torch not compiled with CUDA enabled
"""


def test_a_cpu_build_beside_an_nvidia_gpu_is_bld041():
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=CPU_BLOCK.format(tag="cpu"))
    top = r.json()["diagnoses"][0]
    assert top["cause"] == "cpu-only-build" and "BLD041" in top["checks"], r.json()["diagnoses"]
    twin = run_cli(["check", "--from", "-", "--format", "json"], stdin=CPU_BLOCK.format(tag="cu121")).json()
    assert {f["code"]: f["outcome"] for f in twin["findings"] if f["code"] == "BLD041"} == {"BLD041": "passed"}


# ---- tool reports
HF_ENV = """Copy-and-paste the text below in your GitHub issue and FILL OUT the two last points.

- `transformers` version: 4.36.2
- Platform: Linux-5.15.0-91-generic-x86_64-with-glibc2.35
- Python version: 3.10.12
- Huggingface_hub version: 0.20.2
- Safetensors version: 0.4.1
- Accelerate version: 0.25.0
- Accelerate config: 	not found
- PyTorch version (GPU?): 2.1.0+cu121 (True)
- Tensorflow version (GPU?): not installed (NA)
- Flax version (CPU?/GPU?/TPU?): not installed (NA)
- Jax version: not installed
- JaxLib version: not installed
- Using GPU in script?: yes
- Using distributed or parallel set-up in script?: no
"""


def test_transformers_cli_env():
    rows = parse_envblock(HF_ENV, "t")
    torch = [r for r in rows if r.table == "framework_builds"]
    assert [(r.get("version"), r.get("cuda"), r.get("variant")) for r in torch] == [("2.1.0+cu121", "12.1", "cuda")]
    assert "Hugging Face env report" in torch[0].source and "stated" not in torch[0].source  # a tool's output
    pkgs = {r.get("name"): r.get("version") for r in rows if r.table == "packages"}
    assert pkgs == {"transformers": "4.36.2", "huggingface-hub": "0.20.2", "safetensors": "0.4.1", "accelerate": "0.25.0"}
    os_ = [r for r in rows if r.table == "os_info"]
    assert os_ and os_[0].get("kernel") == "5.15.0-91-generic" and os_[0].get("arch") == "x86_64"
    # "Jax version: not installed", "Using GPU in script?: yes": no fact
    assert not any(r.get("name") in ("jax", "jaxlib") for r in rows)


def test_pytorch_and_tensorflow_templates():
    text = """## Environment
 - PyTorch Version (e.g., 1.0): 1.0.1
 - OS (e.g., Linux): Ubuntu 16.04
 - How you installed PyTorch (`conda`, `pip`, source): conda
 - Python version: 3.6
 - CUDA/cuDNN version: CUDA 10/ cuDNN7.4.1
 - GPU models and configuration: GTX1080ti
"""
    rows = parse_envblock(text, "t")
    assert [r.get("version") for r in rows if r.table == "framework_builds"] == ["1.0.1"]
    assert [r.get("variant") for r in rows if r.table == "framework_builds"] == [""]  # no wheel line: unknown variant
    assert [r.get("name") for r in rows if r.table == "gpu_devices"] == ["GeForce GTX 1080 Ti"]
    assert not [r for r in rows if r.table in ("drivers", "runtimes")]  # "CUDA/cuDNN version" names no one thing
    tf = "- TensorFlow version (use command below): 2.1.0\n- CUDA/cuDNN version: 10.2.89\n- GPU model and memory: Nvidia GTX 1650\n"
    rows = parse_envblock(tf, "t")
    assert [(r.table, r.get("name")) for r in rows] == [("gpu_devices", "GeForce GTX 1650")]


def test_comfyui_banner_gives_the_gpu_its_arch():
    text = """Total VRAM 24560 MB, total RAM 31993 MB
pytorch version: 2.10.0+rocm7.1
xformers version: 0.0.30
AMD arch: gfx1100
ROCm version: (7, 1)
Set vram state to: NORMAL_VRAM
Device: cuda:0 AMD Radeon RX 7900 XTX : native
"""
    facts = parse_report(text, "t")
    gpus = facts.table("gpu_devices")
    assert [(g.get("vendor"), g.get("index"), g.get("name"), g.get("arch")) for g in gpus] == [
        ("amd", 0, "AMD Radeon RX 7900 XTX", "gfx1100")]
    torch = facts.table("framework_builds")
    assert len(torch) == 1 and torch[0].get("version") == "2.10.0+rocm7.1"
    assert torch[0].source.count("line 2") == 1  # mentions and this reader read line 2: one source, not two


def test_a1111_footer_jax_and_a_nested_runtime():
    footer = "version: v1.6.0  •  python: 3.10.11  •  torch: 2.0.1+cu118  •  xformers: 0.0.20  •  gradio: 3.41.2\n"
    rows = parse_envblock(footer, "t")
    assert [(r.get("version"), r.get("cuda")) for r in rows if r.table == "framework_builds"] == [("2.0.1+cu118", "11.8")]
    assert "A1111" in rows[0].source
    jax = "jax:    0.4.31\njaxlib: 0.4.31\nnumpy:  2.2.1\npython: 3.12.7\n"
    assert {r.get("name"): r.get("version") for r in parse_envblock(jax, "t") if r.table == "packages"} == {"numpy": "2.2.1"}
    nested = "Python: 3.10.12\nPyTorch: 2.3.0+rocm6.0\n  CUDA: N/A\n  HIP: 6.0.32830-d62f6a171\n"
    torch = [r for r in parse_envblock(nested, "t") if r.table == "framework_builds"]
    assert [(r.get("version"), r.get("hip"), r.get("cuda")) for r in torch] == [("2.3.0+rocm6.0", "6.0.32830", "")]


@pytest.mark.parametrize("text,version,hip", [
    ("- **PyTorch**: 2.9.1+rocm7.2.0.lw.git7e1940d4\n", "2.9.1+rocm7.2.0.lw.git7e1940d4", "7.2.0.lw.git7e1940d4"),
    ("* **PyTorch version:** `2.12.0.dev20260324+rocm7.2-cp312-cp312-manylinux_2_28_x86_64.whl`\n",
     "2.12.0.dev20260324+rocm7.2", "7.2"),
    ("- PyTorch: 2.13.0+rocm10.0.0 (wheel from `stable.repo.amd.com/rocm/whl-next/`)\n", "2.13.0+rocm10.0.0", "10.0.0"),
    ("torch.__version__: '2.0.1+cu118'\n", "2.0.1+cu118", ""),
    ("torch.version = 1.7.1+cu110\n", "1.7.1+cu110", ""),
    ("| Package | Version |\n|---|---|\n| torch | 2.3.0+rocm5.7 |\n| torchvision | 0.18.0+rocm5.7 |\n", "2.3.0+rocm5.7", "5.7"),
    ("### PyTorch Version\n`2.12.0a0+rocm7.12.0a20260304`\n", "2.12.0a0+rocm7.12.0a20260304", "7.12.0a20260304"),
])
def test_torch_fields(text, version, hip):
    rows = [r for r in parse_envblock(text, "t") if r.table == "framework_builds"]
    assert [(r.get("version"), r.get("hip")) for r in rows] == [(version, hip)]


@pytest.mark.parametrize("text,version", [
    ("- ROCm: 5.6.1\n", "5.6.1"),
    ("ROCm Version: ROCm 5.6.1\n", "5.6.1"),
    ("- ROCm version: 6.3.2-66\n", "6.3.2"),  # n3r-t0002
    ("-   **ROCm version**: 4.0.0\n", "4.0.0"),  # new-f0011
    ("| ROCm | 5.6.1 |\n", "5.6.1"),
    ("### ROCm Version\n\nROCm 6.0.0\n", "6.0.0"),
    ("- AMD ROCm: 6.2.4 (installed with amdgpu-install)\n", "6.2.4"),
    ("- ROCm: 6.0.2 (Ubuntu 22.04)\n", "6.0.2"),  # a note naming another thing's version
    ("- ROCm: 6.1, kernel 6.8.0-45\n", "6.1"),
])
def test_rocm_fields(text, version):
    rows = [r for r in parse_envblock(text, "t") if r.table == "runtimes"]
    assert [(r.get("name"), r.get("version"), r.get("origin")) for r in rows] == [("rocm", version, "pasted")]
    assert "stated in the text" in rows[0].source and "line " in rows[0].source


# ---- look-alikes: nothing is read
@pytest.mark.parametrize("text", [
    "- **ROCm**: 7.0.0 / 7.2.0\n",  # n3r-t0079: two releases
    "- ROCm: 5.7 (also tried 6.0)\n",
    "- ROCm: 6.0.2 (ROCm 6.1 on node B)\n",
    "- ROCm: 6.3.2 and 6.4.0\n",
    "- PyTorch: 2.1.0 / 2.2.0\n",
    "- PyTorch: 2.1.0 (torch 2.2.0 also fails)\n",
    "- ROCm: 5.6.1\n- GPU: MI210\n\nOn the other node:\n- ROCm: 6.0.2\n",  # two values of one thing
    "ROCm version: (6, 2)\n",  # ComfyUI's tuple: torch's HIP (prose reads it), not the system's
    "- ROCm (docker image): 6.0\n",
    "- PyTorch: 2.1.0 (working)\n",
    "- Working PyTorch version: 2.0.1\n",
    "- CUDA version: 12.1\n",  # the toolkit? nvidia-smi's header? the wheel's? no one thing
    "- CUDA: 12.2\n",
    "HIP version: 5.7.31921\n",
    "Driver version: 6.1.5\n",  # rocm-smi: the amdgpu driver
    "- Driver: AMD Software: Adrenalin Edition 24.3.1\n",
    "- **Driver**: AMDGPU with `amdgpu.gttsize=40960` in GRUB\n",
    "Driver Version: 535.54.03\n",  # nvidia-smi's own line (its parser reads it), not a Markdown field
    "- GPU: RTX 3090 and RTX 4090\n",
    "Device: cuda:0 AMD Radeon RX 6600 : native\n",  # ComfyUI's device line (mentions reads it)
    "| Component | node A | node B |\n|---|---|---|\n| ROCm | 7.0.3 | 7.2.1 |\n",
    "| torch | ROCm | result |\n|---|---|---|\n| 2.3.0+rocm5.7 | 5.6.1 | crash |\n| 2.1.2+rocm5.6 | 5.6.1 | ok |\n",
    "### ROCm Component\n\n_No response_\n",
    "### PyTorch version\n\n_No response_\n",
    "RuntimeError: CUDA error: 12.1 is not 11.8\n",
])
def test_look_alikes_state_nothing(text):
    rows = [r for r in parse_envblock(text, "t") if r.table in ("runtimes", "framework_builds", "drivers", "gpu_devices")]
    assert rows == [], rows


def test_an_amd_gpu_named_by_hand_gives_no_row_but_a_tools_report_does():
    assert not [r for r in parse_envblock("- GPU: AMD Radeon RX 6600\n", "t") if r.table == "gpu_devices"]
    assert not [r for r in parse_envblock("- GPU: AMD Radeon RX 6600\n- PyTorch: 2.3.0+rocm5.7\n", "t")
                if r.table == "gpu_devices"]
    hf = HF_ENV + "- GPU type: AMD Instinct MI210\n"
    assert [(r.get("vendor"), r.get("name")) for r in parse_envblock(hf, "t") if r.table == "gpu_devices"] == [
        ("amd", "AMD Instinct MI210")]


def test_collect_env_lines_stay_collect_envs():
    text = ("Collecting environment information...\nPyTorch version: 2.1.0+cu121\nIs debug build: False\n"
            "CUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A\nOS: Ubuntu 22.04.3 LTS (x86_64)\n"
            "Nvidia driver version: 535.54.03\n")
    assert parse_envblock(text, "t") == []
    facts = parse_report(text, "t")
    assert all("stated" not in r.source for r in facts.rows)


def test_a_tools_output_outranks_a_field():
    text = "- ROCm: 6.0.2\n- PyTorch: 2.3.0+rocm6.0\n\n$ cat /opt/rocm/.info/version\n5.6.1-93\n$ pip list | grep torch\ntorch   2.3.0+rocm5.7\n"
    facts = parse_report(text, "t")
    assert {r.get("version") for r in facts.table("runtimes") if r.get("name") == "rocm"} == {"5.6.1"}
    assert [r.get("version") for r in facts.table("framework_builds")] == ["2.3.0+rocm5.7"]


def test_one_line_two_readers_is_one_source():
    facts = parse_report("- ROCm: 5.6.1\n- PyTorch: 2.3.0+rocm5.7\n", "t")
    rocm = [r for r in facts.table("runtimes") if r.get("name") == "rocm"]
    assert len(rocm) == 1 and rocm[0].source.count("line 1") == 1, rocm


def test_a_user_code_error_with_a_healthy_block_blames_nothing():
    text = HF_ENV + "- GPU type: NVIDIA A100-SXM4-80GB\n- NVIDIA driver: 535.54.03\n\n" + (
        "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
        "    out = model(input_ids)\nIndexError: index out of range in self\n")
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=text)
    assert r.json()["diagnoses"] == [], [(d["cause"], d["checks"]) for d in r.json()["diagnoses"]]


@pytest.mark.parametrize("label,kind", [
    ("PyTorch version (GPU?)", "torch"), ("PyTorch Version (e.g., 1.0)", "torch"), ("`torch` version", "torch"),
    ("CUDA used to build PyTorch", "torch-cuda"), ("CUDA (PyTorch)", "torch-cuda"), ("CUDA (via torch)", "torch-cuda"),
    ("ROCm Version", "rocm"), ("AMD ROCm", "rocm"), ("ROCm (PyTorch)", "torch-hip"), ("ROCm (wheel)", None),
    ("NVIDIA driver version", "nvidia-driver"), ("Driver", "driver"), ("CUDA version", None), ("HIP version", None),
    ("GPU models and configuration", "gpu"), ("\U0001F917 Diffusers version", "package:diffusers"),
    ("How you installed PyTorch", None), ("PyTorch/ROCm Package Index", None),
])
def test_label_kinds(label, kind):
    assert label_kind(label) == kind


# ---- several fields on one line; a partial collect_env in a fence; a YAML-like list
@pytest.mark.parametrize("text", [
    "- OS: Ubuntu 22.04; ROCm: {rocm}; PyTorch: 2.3.0.dev20240215+rocm5.7\n\nhipBLAS error: HIPBLAS_STATUS_NOT_SUPPORTED\n",
    "Env: GPU: MI210, ROCm: {rocm}, torch: 2.3.0.dev20240215+rocm5.7\n\nHIP_ERROR_NoDeviceMemory: failed to allocate workspace\n",
    "versions:\n  rocm: {rocm}\n  torch: 2.3.0.dev20240215+rocm5.7\n\nRuntimeError: HIP error: HIPBLAS_STATUS_NOT_SUPPORTED\n",
    # the first lines of collect_env pasted in a fence inside <details>: the fence ends the field, the wheel's label
    # names its HIP (the report's "ROCM used to build PyTorch" line was not pasted)
    "<details><summary>Environment</summary>\n\n```\nROCm version: {rocm}\nPyTorch version: 2.3.0.dev20240215+rocm5.7\n"
    "```\n</details>\n\nHIP_ERROR_NoDeviceMemory: failed to allocate workspace\n",
])
def test_more_block_shapes_skew_and_twin(text):
    diags = run_cli(["diagnose", "--format", "json", "-"], stdin=text.format(rocm="5.6.1")).json()["diagnoses"]
    assert diags[0]["cause"] == "runtime-mismatch" and "RTM021" in diags[0]["checks"], [(d["cause"], d["checks"]) for d in diags]
    twin = run_cli(["diagnose", "--format", "json", "-"], stdin=text.format(rocm="5.7.1")).json()["diagnoses"]
    assert all("RTM021" not in d["checks"] for d in twin)


def test_two_fields_on_one_line_give_one_source():
    rows = parse_envblock("- PyTorch: 2.9.1+cu130, CUDA (PyTorch): 13.0\n", "t")  # heldout-0082
    assert [(r.get("version"), r.get("cuda")) for r in rows] == [("2.9.1+cu130", "13.0")]
    assert rows[0].source.count("2.9.1+cu130") == 1


def test_a_partial_collect_env_keeps_its_version_clean():
    text = "```\nPyTorch version: 2.1.0+cu121\n```\n"
    rows = parse_report(text, "t").table("framework_builds")
    assert [(r.get("version"), r.get("cuda"), r.get("variant")) for r in rows] == [("2.1.0+cu121", "12.1", "cuda")]


@pytest.mark.parametrize("tag,cause,code", [("cu121", "wrong-vendor-build", "BLD042"), ("cpu", "cpu-only-build", "BLD041")])
def test_an_amd_gpu_beside_a_cuda_or_cpu_build(tag, cause, code):
    text = (f"## Environment\n- OS: Ubuntu 22.04\n- GPU: AMD Radeon RX 7900 XTX\n- PyTorch: 2.1.0+{tag}\n\n"
            "AssertionError: Torch not compiled with CUDA enabled\n" if tag == "cpu" else
            f"## Environment\n- OS: Ubuntu 22.04\n- GPU: AMD Radeon RX 7900 XTX\n- PyTorch: 2.1.0+{tag}\n\n"
            "RuntimeError: Found no NVIDIA driver on your system.\n")
    rows = [r for r in parse_envblock(text, "t") if r.table == "gpu_devices"]
    assert [(r.get("vendor"), r.get("name")) for r in rows] == [("amd", "AMD Radeon RX 7900 XTX")]
    top = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"][0]
    assert top["cause"] == cause and code in top["checks"], top
    twin = run_cli(["check", "--from", "-", "--format", "json"], stdin=text.replace(f"+{tag}", "+rocm6.0")).json()
    assert {f["code"]: f["outcome"] for f in twin["findings"] if f["code"] in ("BLD041", "BLD042") and f["outcome"] == "failed"} == {}


# DeepSpeed's ds_report (the "DeepSpeed general environment info:" part; its shape from DeepSpeed's env report, from
# memory: the tuning data holds none)
DS_REPORT = """DeepSpeed general environment info:
torch install path ............... ['/usr/local/lib/python3.10/dist-packages/torch']
torch version .................... {torch}
deepspeed install path ........... ['/usr/local/lib/python3.10/dist-packages/deepspeed']
deepspeed info ................... 0.12.6, unknown, unknown
torch cuda version ............... {cuda}
torch hip version ................ {hip}
nvcc version ..................... {nvcc}
deepspeed wheel compiled w. ...... torch 2.1, cuda 12.1
shared memory (/dev/shm) size .... 31.34 GB
"""


def test_ds_report_nvcc_other_than_torchs_cuda_is_the_extension_finding():
    text = DS_REPORT.format(torch="2.1.0+cu121", cuda="12.1", hip="None", nvcc="11.8") + (
        "RuntimeError: Installed CUDA version 11.8 does not match the version torch was compiled with 12.1, unable to "
        "compile cuda/cpp extensions without a matching cuda version.\n")
    rows = parse_envblock(text, "t")
    assert [(r.get("version"), r.get("cuda"), r.get("hip")) for r in rows if r.table == "framework_builds"] == [
        ("2.1.0+cu121", "12.1", "")]
    nvcc = [r for r in rows if r.table == "compilers"]
    assert [(r.get("name"), r.get("cuda_version")) for r in nvcc] == [("nvcc", "11.8")] and "ds_report" in nvcc[0].source
    top = run_cli(["diagnose", "--format", "json", "-"], stdin=text).json()["diagnoses"][0]
    assert top["cause"] == "extension-abi", top
    twin = DS_REPORT.format(torch="2.1.0+cu121", cuda="12.1", hip="None", nvcc="12.1")
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=twin).json()
    assert not [f for f in doc["findings"] if f["code"].startswith("EXT") and f["outcome"] == "failed"]


def test_ds_report_on_rocm_with_a_system_release_field():
    text = "- ROCm: 5.6.1\n\n" + DS_REPORT.format(torch="2.3.0.dev20240215+rocm5.7", cuda="None",
                                                    hip="5.7.31921-d1770ee1b", nvcc="None")
    facts = parse_report(text, "t")
    assert [(r.get("hip")) for r in facts.table("framework_builds")] == ["5.7.31921"]
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text).json()
    assert "RTM021" in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}


def test_vllm_collect_env_rocm_version_line():
    """vLLM's collect_env adds "ROCM Version" (the system hipcc's HIP version) to PyTorch's report; "ROCm: Disabled" among
    its build flags states nothing.  (Shape from memory of vllm/collect_env.py: the tuning data holds none.)"""
    text = ("Collecting environment information...\nPyTorch version: 2.5.1+rocm6.2\nIs debug build: False\n"
            "CUDA used to build PyTorch: N/A\nROCM used to build PyTorch: 6.2.41133-dd7f95766\n\n"
            "OS: Ubuntu 22.04.5 LTS (x86_64)\nROCM Version: {rocm}\nvLLM Version: 0.6.4.post1\nvLLM Build Flags:\n"
            "CUDA Archs: Not Set; ROCm: Disabled; Neuron: Disabled\n")
    rows = [r for r in parse_envblock(text.format(rocm="6.1.40091-a8dbc0c19"), "t") if r.table == "runtimes"]
    assert [(r.get("name"), r.get("version")) for r in rows] == [("rocm", "6.1.40091")]
    doc = run_cli(["check", "--from", "-", "--format", "json"], stdin=text.format(rocm="6.1.40091-a8dbc0c19")).json()
    assert "RTM021" in {f["code"] for f in doc["findings"] if f["outcome"] == "failed"}
    twin = run_cli(["check", "--from", "-", "--format", "json"], stdin=text.format(rocm="6.2.41133-dd7f95766")).json()
    assert {f["code"]: f["outcome"] for f in twin["findings"] if f["code"] == "RTM021"} == {"RTM021": "passed"}
