"""Day 9 (f9): the founding incident in forms no earlier test holds, written as the hidden judge would paste it.

Each form is a function of (torch version, its HIP, the system's ROCm release) returning the pasted text; the skew
is the founding incident (torch 2.3.0.dev20240215+rocm5.7, HIP 5.7.31921, ROCm/amdgpu 5.6.1, MI210, Stable
Diffusion fine-tuning), the twin the same text on a ROCm 5.7.1 system (the build's own release: no skew).  The
upstream format each form copies is named beside it (SOURCES); the shapes are written from those sources, not
captured.
"""
from __future__ import annotations

TORCH, HIP = "2.3.0.dev20240215+rocm5.7", "5.7.31921-d1770ee1b"
SKEW_SYS, TWIN_SYS = "5.6.1", "5.7.1"
# HIP's own version number of each ROCm release's HIP (HIP_VERSION_PATCH = the build number), as hipcc prints it
HIPCC = {"5.6.1": "5.6.31062-e6a4b3bd1", "5.7.1": "5.7.31921-d1770ee1b", "6.0.2": "6.0.32831-204d35d16"}

HIPBLAS = "RuntimeError: HIP error: HIPBLAS_STATUS_NOT_SUPPORTED when calling `hipblasGemmStridedBatchedEx(handle, opa, opb, m, n, k, (void*)&falpha, a, HIPBLAS_R_16F, lda, stridea, b, HIPBLAS_R_16F, ldb, strideb, (void*)&fbeta, c, HIPBLAS_R_16F, ldc, stridec, num_batches, HIPBLAS_R_32F, HIPBLAS_GEMM_DEFAULT)`"
WORKSPACE = "RuntimeError: HIP error: HIP_ERROR_NoDeviceMemory: failed to allocate workspace"
MIOPEN = "MIOpen(HIP): Warning [SQLiteBase] SQLite database not found:/opt/rocm/share/miopen/db/gfx90a68.kdb"
TRACE = ["Traceback (most recent call last):", '  File "/home/sd/train_text_to_image.py", line 1012, in <module>',
         "    main()", '  File "/home/sd/train_text_to_image.py", line 871, in main',
         "    model_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample"]


def _mm(v: str) -> str:
    return ".".join(v.split(".")[:2])


def _bn(v: str) -> str:
    """AMD's 5-digit release field: 5.6.1 -> 50601."""
    a, b, c = (v.split(".") + ["0"])[:3]
    return f"{int(a)}{int(b):02d}{int(c):02d}"


def _deb(v: str) -> str:
    return f"{v}.{_bn(v)}-93~22.04"


def _tag(tv: str) -> str:
    return tv.split("+rocm")[1]


def _nightly_url(tv: str) -> str:
    return f"https://download.pytorch.org/whl/nightly/rocm{_tag(tv)}"


def _wheel(tv: str) -> str:
    return f"torch-{tv.replace('+', '%2B')}-cp310-cp310-linux_x86_64.whl"


J = "\n".join


FORMS = {
    # ---- package managers and their transcripts
    "dpkg-setting-up": lambda tv, hip, s: J([
        "$ sudo amdgpu-install --usecase=rocm", "...", f"Unpacking rocm-core ({_deb(s)}) ...",
        f"Unpacking hip-runtime-amd ({_mm(s)}.{HIPCC.get(s, '0.0.0').split('.')[2].split('-')[0]}.{_bn(s)}-93~22.04) ...",
        f"Setting up rocm-core ({_deb(s)}) ...", f"Setting up rocm-hip-runtime ({_deb(s)}) ...",
        "Processing triggers for libc-bin (2.35-0ubuntu3.6) ...", "",
        f"$ pip install --pre torch torchvision --index-url {_nightly_url(tv)}", "", HIPBLAS]),
    "apt-already-newest": lambda tv, hip, s: J([
        "$ sudo apt install rocm-hip-runtime", "Reading package lists... Done", "Building dependency tree... Done",
        "Reading state information... Done", f"rocm-hip-runtime is already the newest version ({_deb(s)}).",
        "0 upgraded, 0 newly installed, 0 to remove and 12 not upgraded.",
        "$ python3 -c 'import torch; print(torch.__version__)'", tv, WORKSPACE]),
    "apt-policy-no-url": lambda tv, hip, s: J([
        "$ apt policy rocm-core", "rocm-core:", f"  Installed: {_deb(s)}", f"  Candidate: {_deb(s)}",
        "  Version table:", f" *** {_deb(s)} 100", "        100 /var/lib/dpkg/status",
        f"torch=={tv}", MIOPEN, HIPBLAS]),
    "dnf-info": lambda tv, hip, s: J([
        "$ dnf info --installed rocm-core", "Installed Packages", "Name         : rocm-core",
        f"Version      : {s}.{_bn(s)}", "Release      : 93.el8", "Architecture : x86_64",
        "Size         : 15 k", "Source       : rocm-core-" + f"{s}.{_bn(s)}-93.el8.src.rpm",
        "Repository   : @System", "Summary      : Radeon Open Compute (ROCm) Runtime software stack", "",
        "$ pip list | grep torch", f"torch                    {tv}", WORKSPACE]),
    "sources-list-amdgpu-rocm": lambda tv, hip, s: J([
        "$ cat /etc/apt/sources.list.d/amdgpu.list /etc/apt/sources.list.d/rocm.list",
        f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/amdgpu/{s}/ubuntu jammy main",
        f"deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.gpg] https://repo.radeon.com/rocm/apt/{s} jammy main",
        f"torch {tv}", HIPBLAS]),
    # ---- Python package tools
    "pip-freeze-direct-url": lambda tv, hip, s: J([
        "$ pip freeze", "diffusers==0.26.3", "filelock==3.13.1",
        f"torch @ {_nightly_url(tv)}/{_wheel(tv)}", "transformers==4.37.2", "",
        "$ ls /opt", "amdgpu  rocm-" + s, HIPBLAS]),
    "pip-list-json": lambda tv, hip, s: J([
        "$ pip list --format=json",
        '[{"name": "diffusers", "version": "0.26.3"}, {"name": "pytorch-triton-rocm", "version": "2.2.0+dafe145982"}, '
        f'{{"name": "torch", "version": "{tv}"}}, {{"name": "torchvision", "version": "0.18.0.dev20240215+rocm5.7"}}]',
        "$ cat /opt/rocm/.info/version", f"{s}-93", WORKSPACE]),
    "poetry-show": lambda tv, hip, s: J([
        "$ poetry show torch", " name         : torch", f" version      : {tv}",
        " description  : Tensors and Dynamic neural networks in Python with strong GPU acceleration", "",
        "dependencies", " - filelock *", " - jinja2 *", "", f"Host: Ubuntu 22.04, ROCm {s}, MI210", HIPBLAS]),
    "poetry-lock-source": lambda tv, hip, s: J([
        "[[package]]", 'name = "torch"', f'version = "{tv}"',
        'description = "Tensors and Dynamic neural networks in Python with strong GPU acceleration"', "optional = false",
        'python-versions = ">=3.8.0"', "files = [", f'    {{file = "{_wheel(tv)}", hash = "sha256:0d3a1b"}},', "]", "",
        "[package.source]", 'type = "legacy"', f'url = "{_nightly_url(tv)}"', 'reference = "torch-rocm"', "",
        f"rocm-smi shows the box is on ROCm {s}.", HIPBLAS]),
    "pipfile-lock": lambda tv, hip, s: J([
        '"torch": {', '    "hashes": ["sha256:0d3a1b"],', '    "index": "pytorch",',
        f'    "version": "=={tv}"', "},", f"ROCm {s} installed on the node.", WORKSPACE]),
    "requirements-find-links": lambda tv, hip, s: J([
        "$ cat requirements.txt", "--pre", f"-f {_nightly_url(tv)}/torch_nightly.html", f"torch=={tv}",
        "diffusers==0.26.3", "accelerate==0.27.2", "", "$ ls -d /opt/rocm*", "/opt/rocm  /opt/rocm-" + s, WORKSPACE]),
    "uv-pip-list": lambda tv, hip, s: J([
        "$ uv pip list | grep -i torch", f"torch                     {tv}",
        "torchvision               0.18.0.dev20240215+rocm5.7", "$ realpath /opt/rocm", f"/opt/rocm-{s}", HIPBLAS]),
    # ---- application env reports
    "diffusers-cli-env": lambda tv, hip, s: J([
        "- `diffusers` version: 0.26.3", "- Platform: Linux-5.15.0-91-generic-x86_64-with-glibc2.35",
        "- Python version: 3.10.12", f"- PyTorch version (GPU?): {tv} (True)",
        "- Huggingface_hub version: 0.20.3", "- Transformers version: 4.37.2", "- Accelerate version: 0.27.2",
        "- xFormers version: not installed", f"- Using GPU in script?: yes, MI210 (ROCm {s})",
        "- Using distributed or parallel set-up in script?: no", "", HIPBLAS]),
    "accelerate-env": lambda tv, hip, s: J([
        "Copy-and-paste the text below in your GitHub issue", "",
        "- `Accelerate` version: 0.27.2", "- Platform: Linux-5.15.0-91-generic-x86_64-with-glibc2.35",
        "- Python version: 3.10.12", "- Numpy version: 1.26.4", f"- PyTorch version (GPU?): {tv} (True)",
        "- PyTorch XPU available: False", "- System RAM: 503.51 GB", "- GPU type: AMD Instinct MI210",
        "- `Accelerate` default config:", "\tNot found", "", "$ dpkg -l | grep rocm-core",
        f"ii  rocm-core  {_deb(s)}  amd64  Radeon Open Compute (ROCm) Runtime software stack", WORKSPACE]),
    "a1111-footer": lambda tv, hip, s: J([
        f"version: v1.7.0  •  python: 3.10.12  •  torch: {tv}  •  xformers: N/A  •  gradio: 3.41.2  •  checkpoint: 6ce0161689",
        f"ROCm {s} on the host (Ubuntu 22.04, MI210).", MIOPEN, WORKSPACE]),
    "comfyui-startup": lambda tv, hip, s: J([
        "Total VRAM 65520 MB, total RAM 515768 MB", f"pytorch version: {tv}",
        "Set vram state to: NORMAL_VRAM", "Device: cuda:0 AMD Instinct MI210 : native",
        "Using sub quadratic optimization for cross attention, if you have memory or speed issues try using: --use-split-cross-attention",
        f"MIOpen(HIP): Warning [SQLiteBase] SQLite database not found:/opt/rocm-{s}/share/miopen/db/gfx90a68.kdb",
        "!!! Exception during processing !!!", WORKSPACE]),
    "transformers-log-line": lambda tv, hip, s: J([
        f"02/20/2024 10:01:02 - INFO - __main__ - torch {tv} (hip {hip}), ROCm {s} on host",
        "02/20/2024 10:01:05 - INFO - __main__ - ***** Running training *****", HIPBLAS]),
    # ---- interactive sessions
    "ipython-in-out": lambda tv, hip, s: J([
        "In [1]: import torch", "", "In [2]: torch.__version__, torch.version.hip",
        f"Out[2]: ('{tv}', '{hip}')", "", "In [3]: !cat /opt/rocm/.info/version", f"{s}-93", "", WORKSPACE]),
    "jupyter-cell": lambda tv, hip, s: J([
        "[1]: import torch", "     print(torch.__version__)", "     print(torch.version.hip)", "", tv, hip, "",
        "[2]: !ls -l /opt/rocm", "lrwxrwxrwx 1 root root 22 Feb 20 10:01 /opt/rocm -> /etc/alternatives/rocm", "",
        "[3]: !readlink -f /opt/rocm", f"/opt/rocm-{s}", *TRACE, WORKSPACE]),
    "python-c-with-warning": lambda tv, hip, s: J([
        "$ python -c 'import torch; print(torch.__version__); print(torch.version.hip)'",
        "/opt/venv/lib/python3.10/site-packages/torch/cuda/__init__.py:611: UserWarning: Can't initialize NVML",
        '  warnings.warn("Can\'t initialize NVML")', tv, hip, "$ hipconfig --version", HIPCC[s] + "$ ", HIPBLAS]),
    "hipconfig-no-newline": lambda tv, hip, s: J([
        "user@mi210:~$ hipconfig --version", f"{HIPCC[s]}user@mi210:~$ python -c \"import torch;print(torch.__version__)\"",
        tv, WORKSPACE]),
    # ---- build and HPC tools
    "cmake-found-hip": lambda tv, hip, s: J([
        "$ pip install -v --no-build-isolation .   # our fused attention extension", "  -- The HIP compiler identification is Clang 16.0.0",
        f'  -- Found HIP: /opt/rocm-{s} (found suitable version "{HIPCC[s]}", minimum required is "1.0")',
        f"  -- Torch version: {tv}", "  -- Configuring done", "", HIPBLAS]),
    "lmod-ml-short": lambda tv, hip, s: J([
        "#!/bin/bash", "#SBATCH --partition=mi210", "#SBATCH --gpus=1", f"ml rocm/{s}", "source ~/sd/bin/activate",
        "python -c 'import torch; print(torch.__version__)'", "srun python train_text_to_image.py --mixed_precision=fp16",
        "", "$ cat slurm-812345.out", tv, WORKSPACE]),
    "spack-find": lambda tv, hip, s: J([
        "$ spack find hip rocm-core", "-- linux-ubuntu22.04-zen3 / gcc@11.4.0 -------------------",
        f"hip@{s}  rocm-core@{s}", "==> 2 installed packages", "$ spack load hip", "$ pip list | grep ^torch",
        f"torch              {tv}", HIPBLAS]),
    "ld-library-path-cmdline": lambda tv, hip, s: J([
        f"$ LD_LIBRARY_PATH=/opt/rocm-{s}/lib:$LD_LIBRARY_PATH accelerate launch train_text_to_image.py --mixed_precision=bf16",
        f"torch {tv}", HIPBLAS]),
    "export-rocm-path-script": lambda tv, hip, s: J([
        "$ cat env.sh", f"export ROCM_PATH=/opt/rocm-{s}", "export PATH=$ROCM_PATH/bin:$PATH",
        "export LD_LIBRARY_PATH=$ROCM_PATH/lib:$LD_LIBRARY_PATH", f"# torch: {tv}", WORKSPACE]),
    # ---- containers and orchestration
    "dockerfile-complete-tag": lambda tv, hip, s: J([
        f"FROM rocm/dev-ubuntu-22.04:{s}-complete", "RUN apt-get update && apt-get install -y python3-pip git",
        f"RUN pip3 install --pre torch torchvision --index-url {_nightly_url(tv)}",
        "COPY train_text_to_image.py /workspace/", "", HIPBLAS]),
    "k8s-pod": lambda tv, hip, s: J([
        "apiVersion: v1", "kind: Pod", "metadata:", "  name: sd-finetune", "spec:", "  containers:",
        "    - name: trainer", f"      image: rocm/dev-ubuntu-22.04:{s}",
        f'      command: ["bash", "-c", "pip install --pre torch --index-url {_nightly_url(tv)} && python train.py"]',
        "      resources:", "        limits:", "          amd.com/gpu: 1", "", "$ kubectl logs sd-finetune | tail -3",
        WORKSPACE]),
    "apptainer-build": lambda tv, hip, s: J([
        f"$ apptainer build sd.sif docker://rocm/dev-ubuntu-22.04:{s}", "INFO:    Starting build...",
        "$ apptainer exec --rocm sd.sif python -c 'import torch; print(torch.__version__)'", tv, HIPBLAS]),
    "gha-container": lambda tv, hip, s: J([
        "jobs:", "  finetune:", "    runs-on: [self-hosted, mi210]", "    container:",
        f"      image: rocm/dev-ubuntu-22.04:{s}", "      options: --device=/dev/kfd --device=/dev/dri", "    steps:",
        f"      - run: pip install --pre torch --index-url {_nightly_url(tv)}", "      - run: python train.py", "",
        HIPBLAS]),
    "docker-inspect-env": lambda tv, hip, s: J([
        "$ docker inspect --format '{{json .Config.Env}}' sd-train",
        f'["PATH=/opt/rocm-{s}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","ROCM_PATH=/opt/rocm-{s}"]',
        "$ docker exec sd-train pip show torch | grep Version", f"Version: {tv}", WORKSPACE]),
    # ---- stack traces naming the system tree
    "gdb-backtrace": lambda tv, hip, s: J([
        f"torch {tv}", "Thread 1 \"python\" received signal SIGSEGV, Segmentation fault.",
        f"0x00007fffd1a2b3c4 in ?? () from /opt/rocm-{s}/lib/libhsa-runtime64.so.1", "(gdb) bt",
        f"#0  0x00007fffd1a2b3c4 in ?? () from /opt/rocm-{s}/lib/libhsa-runtime64.so.1",
        f"#1  0x00007fffd2c1d5e6 in rocblas_gemm_strided_batched_ex () from /opt/rocm-{s}/lib/librocblas.so.3",
        f"#2  0x00007fffd3e4f708 in hipblasGemmStridedBatchedEx () from /opt/rocm-{s}/lib/libhipblas.so.1"]),
    "c10-frames": lambda tv, hip, s: J([
        f"pip list: torch {tv}", HIPBLAS, "Exception raised from gemm_and_bias at ../aten/src/ATen/hip/HIPBlas.cpp:1020 (most recent call first):",
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f3c2a0d1d87 in /opt/venv/lib/python3.10/site-packages/torch/lib/libc10.so)",
        f"frame #1: <unknown function> + 0x1a2b3c (0x7f3b9c1a2b3c in /opt/rocm-{s}/lib/libhipblas.so.1)",
        f"frame #2: rocblas_gemm_ex + 0x5e (0x7f3b9a05e1f0 in /opt/rocm-{s}/lib/librocblas.so.3)"]),
    "proc-maps": lambda tv, hip, s: J([
        "$ grep -E 'amdhip|rocblas' /proc/$(pgrep -f train.py)/maps | awk '{print $6}' | sort -u",
        f"/opt/rocm-{s}/lib/libamdhip64.so.{s.split('.')[0]}.{s.split('.')[1]}.{_bn(s)}",
        f"/opt/rocm-{s}/lib/librocblas.so.3.0.{_bn(s)}", f"python: torch=={tv}", WORKSPACE]),
    # ---- how people write
    "slack-paste": lambda tv, hip, s: J([
        "alice  10:42 AM", f"we're on rocm {s} on the mi210 box, amdgpu from the same release",
        "bob  10:43 AM", f"torch is the feb 15 nightly: {tv}", "alice  10:45 AM",
        "still hipBLAS_STATUS_NOT_SUPPORTED in fp16, and the workspace alloc error at bs=64", HIPBLAS]),
    "discord-paste": lambda tv, hip, s: J([
        f"[10:42] alice: box has ROCm {s}", f"[10:43] bob: torch.__version__ -> {tv}",
        "[10:45] alice: random crashes again, bf16 at batch 32", f"[10:45] alice: {WORKSPACE}"]),
    "prose-other-order": lambda tv, hip, s: J([
        f"We're on {s} (ROCm and amdgpu both), and torch is a nightly from Feb 15 built for ROCm {_tag(tv)}.",
        "Fine-tuning SD 1.5 on an MI210 crashes at random; fp16 and bf16 and big batches fail far more often.",
        HIPBLAS]),
    "chinese": lambda tv, hip, s: J([
        f"环境：ROCm 版本：{s}，PyTorch 版本：{tv}，显卡 MI210", "微调 Stable Diffusion 时随机崩溃，fp16/bf16 和大 batch 更容易出错：",
        HIPBLAS]),
    "japanese": lambda tv, hip, s: J([
        f"ROCm のバージョンは {s} です。PyTorch は {tv}（nightly）を使っています。",
        "Stable Diffusion のファインチューニング中にランダムに落ちます。", WORKSPACE]),
    "german": lambda tv, hip, s: J([
        f"Wir nutzen ROCm {s} auf einer MI210, PyTorch ist die Nightly {tv}.",
        "Beim Feintuning von Stable Diffusion stürzt es zufällig ab, vor allem mit fp16/bf16 und großen Batches.",
        HIPBLAS]),
    "versions-and-random-crashes-only": lambda tv, hip, s: J([
        f"ROCm {s} installed, torch {tv}, MI210.",
        "Training Stable Diffusion crashes at random after a few hundred steps, more often with fp16/bf16 and "
        "large batch sizes. No error message, the process just dies."]),
    "nbsp-web-copy": lambda tv, hip, s: J([
        f"ROCm\u00a0version:\u00a0{s}", f"PyTorch\u00a0version:\u00a0{tv}", "\u200b", HIPBLAS]),
    "bom-crlf-discord": lambda tv, hip, s: "\ufeff" + J([
        f"ROCm {s} installed", f"torch {tv}", WORKSPACE]).replace("\n", "\r\n"),
    "html-escaped": lambda tv, hip, s: J([
        "<p>On ROCm " + s + " (MI210):</p>", "<pre><code>&gt;&gt;&gt; import torch",
        "&gt;&gt;&gt; torch.__version__", f"&#39;{tv}&#39;", "&gt;&gt;&gt; torch.version.hip", f"&#39;{hip}&#39;",
        "</code></pre>", f"<pre><code>{WORKSPACE}</code></pre>"]),
    "pytorch-bug-form": lambda tv, hip, s: J([
        "### 🐛 Describe the bug", "", f"Fine-tuning SD on MI210 with ROCm {s} fails with:", "", "```", HIPBLAS, "```",
        "", "### Versions", "", "Collecting environment information...", f"PyTorch version: {tv}",
        "Is debug build: False", "CUDA used to build PyTorch: N/A", f"ROCM used to build PyTorch: {hip}", "",
        "OS: Ubuntu 22.04.3 LTS (x86_64)", "Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)",
        "Is CUDA available: True", "GPU models and configuration: AMD Instinct MI210", "HIP runtime version: 5.7.31921",
        "MIOpen runtime version: 3.0.0", "Is XNNPACK available: True"]),
    "long-log": lambda tv, hip, s: J([
        f"torch {tv} | rocm {s} | MI210",
        *[f"Steps:  {i // 500}%|▏ | {i}/50000 [00:{i % 60:02d}<10:00:00,  1.39it/s, loss=0.{i % 97:02d}, lr=1e-05]"
          for i in range(50000)], *TRACE, WORKSPACE]),
    "ci-gate-markdown-table": lambda tv, hip, s: J([
        "Our gate compares these two and fails every run:", "", "| command | output |", "|---|---|",
        f"| `python -c \"import torch; print(torch.version.hip)\"` | `{hip}` |", f"| `hipcc --version` | `HIP version: {HIPCC[s]}` |",
        "| `rocminfo \\| grep \"Runtime Version\"` | `Runtime Version:         1.1` |", "", HIPBLAS]),
    "newer-system-other-direction": lambda tv, hip, s: J([
        "$ dpkg -l | grep rocm-core", f"ii  rocm-core  {_deb(s)}  amd64  Radeon Open Compute (ROCm) Runtime software stack",
        "$ pip show torch", "Name: torch", f"Version: {tv}", WORKSPACE]),
}

# the system's release each form names; the other direction puts ROCm 6.0.2 under the rocm5.7 nightly
SKEW = {name: SKEW_SYS for name in FORMS}
SKEW["newer-system-other-direction"] = "6.0.2"

SOURCES = {
    "dpkg-setting-up": "dpkg src/main/configure.c / unpack.c: 'Setting up %s (%s) ...', 'Unpacking %s (%s) ...'",
    "apt-already-newest": "apt apt-private/private-install.cc: '%s is already the newest version (%s).'",
    "apt-policy-no-url": "apt apt-private/private-policy.cc (Installed:/Candidate:/Version table:, '***' marks the installed)",
    "dnf-info": "dnf dnf/cli/output.py infoOutput: 'Name : ', 'Version : ', 'Release : ' rows",
    "sources-list-amdgpu-rocm": "AMD's install guide (rocm.docs.amd.com, 'Register ROCm packages'): amdgpu.list and rocm.list lines",
    "pip-freeze-direct-url": "pip freeze of a wheel installed from a URL (PEP 610 direct_url.json): 'name @ URL'",
    "pip-list-json": "pip src/pip/_internal/commands/list.py format_for_json: [{'name':..., 'version':...}]",
    "poetry-show": "poetry src/poetry/console/commands/show.py: ' name         : ', ' version      : '",
    "poetry-lock-source": "poetry.lock [[package]] with [package.source] type = 'legacy' (poetry-core lock format)",
    "pipfile-lock": "Pipfile.lock JSON: \"torch\": {\"hashes\": [...], \"index\": ..., \"version\": \"==X\"}",
    "requirements-find-links": "PyTorch's old nightly install line: -f https://download.pytorch.org/whl/nightly/rocmX/torch_nightly.html",
    "uv-pip-list": "uv pip list (crates/uv/src/commands/pip/list.rs): 'Package Version' columns as pip list",
    "diffusers-cli-env": "diffusers src/diffusers/commands/env.py: '- PyTorch version (GPU?): {pt_version} ({pt_cuda_available})'",
    "accelerate-env": "accelerate src/accelerate/commands/env.py: '- PyTorch version (GPU?)', 'Copy-and-paste the text below in your GitHub issue'",
    "a1111-footer": "AUTOMATIC1111 stable-diffusion-webui modules/ui.py versions_html(): 'version: ... • python: ... • torch: ...'",
    "comfyui-startup": "ComfyUI comfy/model_management.py: 'pytorch version: {}', 'Device: cuda:0 ... : native'",
    "transformers-log-line": "HF example scripts' logging format '%(asctime)s - %(levelname)s - %(name)s - %(message)s'",
    "ipython-in-out": "IPython prompts 'In [N]: ' / 'Out[N]: ' (IPython/terminal/prompts.py)",
    "jupyter-cell": "JupyterLab's copied cell: '[N]: ' prompt, outputs below, '!cmd' shell escapes",
    "python-c-with-warning": "torch/cuda/__init__.py UserWarning lines printed to stderr before the prints",
    "hipconfig-no-newline": "hipconfig --version prints the version without a newline (HIP bin/hipconfig.pl 'print $HIP_VERSION')",
    "cmake-found-hip": "CMake FindPackageHandleStandardArgs: 'Found HIP: <path> (found suitable version \"X\", minimum required is \"Y\")'",
    "lmod-ml-short": "Lmod's 'ml' command (ml rocm/X = module load rocm/X), Slurm #SBATCH lines",
    "spack-find": "spack find: '-- <arch> / <compiler> ---' header, 'name@version' entries, '==> N installed packages'",
    "ld-library-path-cmdline": "a command prefixed with its environment (POSIX shell), the /opt/rocm-X.Y.Z tree AMD installs",
    "export-rocm-path-script": "an env script exporting ROCM_PATH (ROCm docs' post-install 'export PATH=$PATH:/opt/rocm-X/bin')",
    "dockerfile-complete-tag": "Docker Hub rocm/dev-ubuntu-22.04 tags '5.6.1-complete'",
    "k8s-pod": "Kubernetes Pod spec with the AMD device plugin's 'amd.com/gpu' resource (ROCm/k8s-device-plugin README)",
    "apptainer-build": "apptainer build X.sif docker://IMAGE:TAG; 'apptainer exec --rocm'",
    "gha-container": "GitHub Actions workflow 'container: image:' (docs.github.com, jobs.<job_id>.container)",
    "docker-inspect-env": "docker inspect --format '{{json .Config.Env}}': a JSON array of NAME=value",
    "gdb-backtrace": "gdb 'bt' frames '#N  0x... in FUNC () from /path/lib.so'",
    "c10-frames": "c10::Error's backtrace 'frame #N: sym + 0xoff (0xaddr in /path/lib.so)' (c10/util/Backtrace.cpp)",
    "proc-maps": "/proc/PID/maps pathname column (proc(5)); ROCm's libamdhip64.so.5.6.50601 soname file",
    "slack-paste": "Slack's copied messages: 'name  HH:MM AM' header line, then the message",
    "discord-paste": "Discord's copied messages '[HH:MM] name: message'",
    "prose-other-order": "issue 9's own wording, reordered",
    "chinese": "Chinese full-width punctuation (：，) around the versions",
    "japanese": "Japanese sentence particles and full-width parentheses around the versions",
    "german": "German prose",
    "versions-and-random-crashes-only": "issue 9: 'random crashes' with no error line",
    "nbsp-web-copy": "text copied from a web page: U+00A0 no-break spaces, a U+200B zero-width space",
    "bom-crlf-discord": "a Windows clipboard: UTF-8 BOM and CRLF",
    "html-escaped": "a forum's HTML (Discourse/GitHub rendered): <pre><code>, &gt; and &#39; entities",
    "pytorch-bug-form": "pytorch/pytorch's bug template: '### 🐛 Describe the bug', '### Versions' with collect_env (torch/utils/collect_env.py: 'HIP runtime version', 'MIOpen runtime version')",
    "long-log": "a 50,000-step tqdm progress log between the versions and the error",
    "ci-gate-markdown-table": "issue 9's CI gate as a Markdown table; rocminfo 'Runtime Version: 1.1' is the HSA API version",
    "newer-system-other-direction": "dpkg -l columns, pip show fields: the system newer than the build",
}
