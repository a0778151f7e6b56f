"""Day 9 (f9b): a third batch of founding-incident forms, written the way users paste in chat, issue titles and other
projects' issue forms, and run once before any fix aimed at them (SOURCES name the shape each copies).  Same
contract as founding_redteam_forms: (torch version, its HIP, the system's release) -> text."""
from __future__ import annotations

from founding_redteam_forms import HIPBLAS, J, MIOPEN, TRACE, WORKSPACE, _deb, _nightly_url


def _rocm_tag(tv: str) -> str:
    return "rocm" + tv.split("+rocm")[1]


ROUND3 = {
    "chat-plus-shorthand": lambda tv, hip, s: J([
        f"rocm {s} + torch nightly ({_rocm_tag(tv)}) on MI210, sd finetune keeps dying with", HIPBLAS]),
    "issue-title-one-line": lambda tv, hip, s: J([
        "[Bug]: HIPBLAS_STATUS_NOT_SUPPORTED when fine-tuning SD on MI210 (fp16)",
        f"torch {tv} / ROCm {s} / gfx90a"]),
    "version-before-name": lambda tv, hip, s: J([
        f"running {s} rocm with {tv} torch, MI210", WORKSPACE]),
    "everywhere": lambda tv, hip, s: J([
        f"ROCm {s} everywhere (driver + userspace), torch is the nightly {tv}.", HIPBLAS]),
    "hard-wrap-80": lambda tv, hip, s: J([
        f"My setup: Ubuntu 22.04, MI210 (gfx90a), ROCm {s} installed with amdgpu-install, torch",
        f"{tv} from the nightly index. Fine-tuning SD 1.5 fails with", WORKSPACE]),
    "markdown-table-env": lambda tv, hip, s: J([
        "| Component | Version |", "|-----------|---------|", f"| ROCm | {s} |", f"| PyTorch | {tv} |",
        "| GPU | MI210 |", "", HIPBLAS]),
    "bulleted-env": lambda tv, hip, s: J([
        "Env:", "* OS: Ubuntu 22.04", f"* rocm {s}", f"* torch {tv}", "* diffusers 0.26.3", "", WORKSPACE]),
    "diffusers-issue-form": lambda tv, hip, s: J([
        "### System Info", "", "- `diffusers` version: 0.26.3", "- Platform: Linux-5.15.0-94-generic-x86_64-with-glibc2.35",
        "- Python version: 3.10.12", f"- PyTorch version (GPU?): {tv} (True)", "- Huggingface_hub version: 0.20.3",
        "- Transformers version: 4.37.2", "- Accelerate version: 0.27.2", "", f"ROCm {s} on the host.", "",
        "### Reproduction", "", HIPBLAS]),
    "accelerate-env": lambda tv, hip, s: J([
        "- `Accelerate` version: 0.27.2", "- Platform: Linux-5.15.0-94-generic-x86_64-with-glibc2.35",
        "- Python version: 3.10.12", "- Numpy version: 1.26.4", f"- PyTorch version (GPU?): {tv} (True)",
        "- System RAM: 503.72 GB", "- GPU type: AMD Instinct MI210", f"- ROCm: {s}", "", WORKSPACE]),
    "comfyui-startup": lambda tv, hip, s: J([
        "Total VRAM 65520 MB, total RAM 515785 MB", f"pytorch version: {tv}", "Set vram state to: NORMAL_VRAM",
        "Device: cuda:0 AMD Instinct MI210 : native", f"(host has rocm {s})", HIPBLAS]),
    "kohya-log": lambda tv, hip, s: J([
        f"Torch version: {tv} | ROCm on host: {s}",
        "INFO     Torch backend: AMD ROCm HIP", "INFO     Torch detected GPU: AMD Instinct MI210 VRAM 65520",
        "steps:   3%|▎         | 12/400 [00:41<22:10,  3.43s/it, loss=0.104]", WORKSPACE]),
    "traceback-opt-rocm-path-pip": lambda tv, hip, s: J([
        f"$ pip install --pre torch --index-url {_nightly_url(tv)}", *TRACE,
        f'  File "/opt/rocm-{s}/lib/python3/dist-packages/something.py", line 3, in <module>', HIPBLAS]),
    "conda-env-export": lambda tv, hip, s: J([
        "name: sd", "channels:", "  - defaults", "dependencies:", "  - python=3.10.13", "  - pip:",
        "    - diffusers==0.26.3", f"    - torch=={tv}", "    - accelerate==0.27.2",
        "prefix: /home/sd/miniconda3/envs/sd", "", f"host: rocm-{s}", WORKSPACE]),
    "mixed-chat-with-other-text": lambda tv, hip, s: J([
        "hey all, quick q. been at this 2 days.", f"box: MI210, rocm is {s}, torch {tv} (nightly, needed for a fix)",
        "batch 1 works, batch 8 fp16 crashes:", HIPBLAS, "any pointers? thx"]),
    "slash-stack": lambda tv, hip, s: J([
        f"MI210 / ROCm {s} / PyTorch {tv} / diffusers 0.26.3", MIOPEN, WORKSPACE]),
    "equals-pairs": lambda tv, hip, s: J([
        f"rocm={s} torch={tv} gpu=MI210", HIPBLAS]),
    "dpkg-l-row-and-pip-show": lambda tv, hip, s: J([
        "$ dpkg -l | grep rocm-core", f"ii  rocm-core   {_deb(s)}   amd64   Radeon Open Compute (ROCm) Runtime software stack",
        "$ pip show torch", "Name: torch", f"Version: {tv}", WORKSPACE]),
    "discord-inline-code": lambda tv, hip, s: J([
        f"`{tv}` on `rocm {s}` -> `hipBLAS_STATUS_NOT_SUPPORTED` with bf16, fp32 fine", HIPBLAS]),
    "torch-version-hip-print": lambda tv, hip, s: J([
        ">>> torch.__version__, torch.version.hip", f"('{tv}', '{hip}')", "$ ls /opt | grep rocm",
        f"rocm-{s}", "rocm", WORKSPACE]),
    "stackoverflow-question": lambda tv, hip, s: J([
        "I'm fine-tuning Stable Diffusion on an AMD MI210. I installed the latest PyTorch nightly "
        f"({tv}) because the stable one lacked a fix. The ROCm version on the server is {s}.",
        "With batch size 8 and fp16 I get:", HIPBLAS]),
    "key-value-tabs": lambda tv, hip, s: J([
        f"ROCm\t{s}", f"torch\t{tv}", "GPU\tMI210", WORKSPACE]),
    "rocm-smi-banner": lambda tv, hip, s: J([
        "========================= ROCm System Management Interface =========================",
        f"ROCM-SMI version: 1.4.1 | ROCm {s}", "GPU  Temp   AvgPwr  SCLK    MCLK", "0    35.0c  42.0W   800Mhz  1600Mhz",
        f"torch {tv}", HIPBLAS]),
}

SOURCES = {
    "chat-plus-shorthand": "chat shorthand 'rocm X + torch nightly (rocmY)'",
    "issue-title-one-line": "an issue title plus one line of slash-separated versions",
    "version-before-name": "versions written before their names ('5.6.1 rocm')",
    "everywhere": "'ROCm X everywhere' prose",
    "hard-wrap-80": "prose hard-wrapped at 80 columns between a name and its version",
    "markdown-table-env": "a Markdown | Component | Version | table",
    "bulleted-env": "an asterisk-bulleted env list",
    "diffusers-issue-form": "diffusers-cli env output in the diffusers bug form",
    "accelerate-env": "accelerate env output",
    "comfyui-startup": "ComfyUI's startup lines ('pytorch version: ...')",
    "kohya-log": "kohya_ss/sd-scripts log lines",
    "traceback-opt-rocm-path-pip": "a traceback whose only system release is an /opt/rocm-X path, plus a pip line",
    "conda-env-export": "conda env export YAML with a pip: section",
    "mixed-chat-with-other-text": "a chat message with the versions among other words",
    "slash-stack": "a slash-separated stack line",
    "equals-pairs": "key=value pairs on one line",
    "dpkg-l-row-and-pip-show": "dpkg -l row plus pip show",
    "discord-inline-code": "a Discord message with inline code",
    "torch-version-hip-print": "a REPL tuple of torch.__version__ and torch.version.hip plus ls /opt",
    "stackoverflow-question": "a Stack Overflow question in prose",
    "key-value-tabs": "tab-separated key/value lines",
    "rocm-smi-banner": "a rocm-smi banner naming the release",
}
