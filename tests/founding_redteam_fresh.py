"""Day 9 (f9): a second batch of founding-incident forms, written after the first batch's fixes and run once with no
fix aimed at them: how well the fixes generalise to forms their author did not tune on (SOURCES name the upstream
format each copies).  Same contract as founding_redteam_forms: (torch version, its HIP, the system's release) -> text."""
from __future__ import annotations

from founding_redteam_forms import HIPBLAS, J, MIOPEN, TRACE, WORKSPACE, _bn, _deb, _nightly_url, _wheel

FRESH = {
    "dpkg-query-w": lambda tv, hip, s: J([
        "$ dpkg-query -W rocm-core hip-runtime-amd", f"hip-runtime-amd\t{_mm3(s)}", f"rocm-core\t{_deb(s)}",
        "$ python3 -c 'import torch; print(torch.__version__)'", tv, HIPBLAS]),
    "dpkg-s-grep-version": lambda tv, hip, s: J([
        "$ dpkg -s rocm-core | grep '^Version'", f"Version: {_deb(s)}", f"torch=={tv}", WORKSPACE]),
    "zypper-search": lambda tv, hip, s: J([
        "$ zypper se -si rocm-core", "S  | Name      | Type    | Version                  | Arch   | Repository",
        "---+-----------+---------+--------------------------+--------+-----------",
        f"i+ | rocm-core | package | {s}.{_bn(s)}-sles155.93 | x86_64 | rocm", f"pip: torch {tv}", HIPBLAS]),
    "pip-list-verbose": lambda tv, hip, s: J([
        "$ pip list -v | grep -E '^torch '", f"torch              {tv} /opt/venv/lib/python3.10/site-packages pip",
        "$ cat /opt/rocm/.info/version", f"{s}-93", WORKSPACE]),
    "pip-using-cached": lambda tv, hip, s: J([
        "Collecting torch", f"  Using cached {_nightly_url(tv)}/{_wheel(tv)} (1873.2 MB)",
        "Installing collected packages: torch", f"ROCm {s} on the host.", HIPBLAS]),
    "chinese-no-space": lambda tv, hip, s: J([
        f"torch版本是{tv}，rocm版本是{s}，显卡是MI210。", "微调SD时报错：", HIPBLAS]),
    "korean": lambda tv, hip, s: J([
        f"ROCm 버전: {s}, PyTorch 버전: {tv}, GPU: MI210", "Stable Diffusion 파인튜닝 중 무작위로 크래시가 납니다.", WORKSPACE]),
    "spanish": lambda tv, hip, s: J([
        f"Tengo ROCm {s} instalado en Ubuntu 22.04 y PyTorch {tv} (nightly).", HIPBLAS]),
    "french": lambda tv, hip, s: J([
        f"Version de ROCm : {s} ; torch : {tv} ; carte MI210.", WORKSPACE]),
    "german-hyphen-field": lambda tv, hip, s: J([
        f"ROCm-Version: {s}", f"PyTorch-Version: {tv}", HIPBLAS]),
    "reddit-bold-colon": lambda tv, hip, s: J([
        f"- **ROCm:** {s}", f"- **PyTorch:** {tv}", "- **GPU:** MI210", "", HIPBLAS]),
    "markdown-backticks": lambda tv, hip, s: J([
        f"Running ROCm `{s}` with torch `{tv}` on an MI210, fine-tuning SD 1.5.", MIOPEN, WORKSPACE]),
    "email-quoted": lambda tv, hip, s: J([
        "On Tue, Feb 20, 2024 at 10:01 AM Alice wrote:", f"> ROCm {s} installed on the training node", f"> torch {tv}",
        "> ", f"> {HIPBLAS}"]),
    "details-pip-list": lambda tv, hip, s: J([
        "<details><summary>pip list</summary>", "", "```", "Package    Version", "---------- -------------------------",
        f"torch      {tv}", "diffusers  0.26.3", "```", "</details>", "", f"ROCm {s}, MI210", "", WORKSPACE]),
    "buildkit-from": lambda tv, hip, s: J([
        f"#5 [1/4] FROM docker.io/rocm/dev-ubuntu-22.04:{s}@sha256:7e1a4b9c2d3f",
        f"#7 [3/4] RUN pip3 install --pre torch --index-url {_nightly_url(tv)}", "#7 DONE 412.3s", "", HIPBLAS]),
    "podman-pull": lambda tv, hip, s: J([
        f"Trying to pull docker.io/rocm/dev-ubuntu-22.04:{s}...", "Getting image source signatures",
        "$ podman run --device /dev/kfd --device /dev/dri sd python -c 'import torch; print(torch.__version__)'", tv,
        WORKSPACE]),
    "dist-info-path": lambda tv, hip, s: J([
        "$ ls /opt/venv/lib/python3.10/site-packages | grep ^torch-", f"torch-{tv}.dist-info",
        "$ ls /opt", f"rocm-{s}", HIPBLAS]),
    "terminal-hard-wrap": lambda tv, hip, s: J([
        f"Successfully installed filelock-3.13.1 pytorch-triton-rocm-2.2.0+dafe145982 torch-{tv[:18]}",
        f"{tv[18:]} torchvision-0.18.0.dev20240215+rocm5.7", f"ROCm {s} installed.", WORKSPACE]),
    "syslog-style": lambda tv, hip, s: J([
        f"Feb 20 10:01:02 mi210-node train[4711]: torch {tv} hip {hip}",
        f"Feb 20 10:01:02 mi210-node train[4711]: ROCM_PATH=/opt/rocm-{s}",
        f"Feb 20 10:03:40 mi210-node train[4711]: {WORKSPACE}"]),
    "shorthand-only": lambda tv, hip, s: J([
        f"rocm {s} + torch nightly ({tv}) = hipBLAS_STATUS_NOT_SUPPORTED on fp16, any idea", HIPBLAS]),
    "yaml-env-report": lambda tv, hip, s: J([
        "environment:", f"  rocm: {s}", f"  torch: {tv}", "  gpu: MI210", "error: |", f"  {WORKSPACE}"]),
    "traceback-only-paths": lambda tv, hip, s: J([
        *TRACE, '  File "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 116, in forward',
        "    return F.linear(input, self.weight, self.bias)", HIPBLAS,
        f"hipBLAS error from /opt/rocm-{s}/lib/libhipblas.so.1", f"(torch {tv})"]),
}


def _mm3(s: str) -> str:
    """hip-runtime-amd's Debian version for a release (HIP's numbering, then the build field)."""
    hipno = {"5.6.1": "5.6.31062", "5.7.1": "5.7.31921"}[s]
    return f"{hipno}.{_bn(s)}-93~22.04"


SOURCES = {
    "dpkg-query-w": "dpkg-query -W default format '${binary:Package}\\t${Version}' (dpkg-query(1))",
    "dpkg-s-grep-version": "dpkg -s status paragraph's 'Version:' field, filtered by grep",
    "zypper-search": "zypper search -si table: 'S | Name | Type | Version | Arch | Repository'",
    "pip-list-verbose": "pip list -v: Package, Version, Location, Installer columns",
    "pip-using-cached": "pip's 'Using cached <url> (<size>)' (pip/_internal/operations/prepare.py)",
    "chinese-no-space": "Chinese prose, no spaces between words and versions",
    "korean": "Korean field words (버전 = version)",
    "spanish": "Spanish prose",
    "french": "French prose with the French space before ':' and ';'",
    "german-hyphen-field": "German compound field names (ROCm-Version)",
    "reddit-bold-colon": "Markdown bullets with the colon inside the bold ('**ROCm:** 5.6.1')",
    "markdown-backticks": "versions in Markdown inline code",
    "email-quoted": "a mail reply quoting the report ('> ' on every line)",
    "details-pip-list": "GitHub's <details><summary> block around a pip list",
    "buildkit-from": "BuildKit's plain progress: '#N [i/n] FROM docker.io/IMAGE:TAG@sha256:...'",
    "podman-pull": "podman's 'Trying to pull docker.io/IMAGE:TAG...'",
    "dist-info-path": "a site-packages listing: torch-X.dist-info",
    "terminal-hard-wrap": "a terminal copy hard-wrapped inside the version",
    "syslog-style": "journald/syslog prefixes 'Mon DD HH:MM:SS host prog[pid]: '",
    "shorthand-only": "a one-line chat shorthand",
    "yaml-env-report": "a YAML report with plain keys (rocm:, torch:)",
    "traceback-only-paths": "a traceback whose only system release is a library path",
}
