"""Facts and context found inside log text (pure functions).

Two kinds of things are read here:

* **version facts** that only appear inside tracebacks and warnings, returned as model fact rows so the
  same checks run on them: xFormers' "built for PyTorch X with CUDA Y (you have Z)", torch's "The NVIDIA
  driver on your system is too old (found version 11040)", rocminfo's "ROCk module version 6.3.6 is
  loaded", nvidia-smi's "Driver Version: 535.104.05   CUDA Version: 12.2", /proc/driver/nvidia/version.
* **context hints**: short names for what the text shows about the machine (an AMD or NVIDIA GPU, a CUDA,
  ROCm or CPU-only framework build, a nightly/pre-release build, a container, WSL, Windows, several
  ranks).  Signatures use hints to settle ambiguous messages (``resolve`` in signatures.yaml).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from gpuvet.model import Row, row
from gpuvet.model.versions import channel_of, cuda_of_local, hip_of_local, variant_of

from .gate import MultiGate

# name -> regex (Python); a hint is set when any line matches.
HINTS: dict[str, str] = {
    "amd": r"\bgfx[0-9]{3,4}[a-z]?\b|\bRadeon\b|\bInstinct\b|\bMI[1-3][0-9]{2}X?\b|\bROCm\b|\brocm[0-9.]|\bamdgpu\b"
           r"|\bMIOpen\b|\brocBLAS\b|\bhipBLAS|\bRCCL\b|\bZLUDA\b|\bNavi ?[0-9]|\bVega\b|\bPolaris\b|\bAMD/ATI\b"
           r"|HSA_|/dev/kfd|\bROCk\b|rocminfo|rocm-smi|amd-smi|libamdhip64|\bHIP error|\bhipError|\bAdrenalin\b"
           r"|\b(?:HIPBLAS|ROCBLAS|HIPBLASLT|MIOPEN|HIP)_(?:STATUS|ERROR)_|\bmiopenStatus|\brocblas_status",
    "nvidia": r"\bNVIDIA\b|\bGeForce\b|\bRTX ?[0-9]|\bGTX ?[0-9]|\bTesla\b|\bQuadro\b|nvidia-smi|\bsm_[0-9]{2,3}\b"
              r"|\+cu[0-9]{2,3}\b|CUDA used to build PyTorch: [0-9]|\bcuDNN\b|\bcudnn|libcuda\.so|\bNVRM\b"
              r"|\bH100\b|\bA100\b|\bV100\b|\bH200\b|\bL40S?\b",
    "cuda-build": r"\+cu[0-9]{2,3}\b|CUDA used to build PyTorch: [0-9]|py[0-9.]+_cuda[0-9.]+|cuda[0-9.]+_cudnn|pytorch-cuda"
                  # NVIDIA's CUDA libraries as the pip packages a CUDA build of torch (PyPI's default on Linux) depends
                  # on: "Requires: ... nvidia-cublas-cu11", "Collecting nvidia-cudnn-cu12==9.1.0.70",
                  # "nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl"
                  r"|\bnvidia[-_](?:cublas|cuda[-_]runtime|cuda[-_]nvrtc|cuda[-_]cupti|cudnn|cufft|curand|cusolver|cusparse|nccl|nvtx|nvjitlink)[-_]cu1[0-9]\b",
    "rocm-build": r"\+rocm[0-9]|ROCM used to build PyTorch: [0-9]|HIP runtime version: [0-9]|tensorflow-rocm|-rocm[0-9]"
                  # an image tag naming the ROCm variant ("ollama/ollama:rocm", "ollama/ollama:0.4.0-rc5-rocm")
                  r"|\b[a-z0-9_./-]+/[a-z0-9_.-]+:(?:[A-Za-z0-9_.-]*-)?rocm(?![A-Za-z0-9.])",
    "cpu-build": r"[0-9]\+cpu\b|_cpu_0\b|\bcpuonly\b|CUDA used to build PyTorch: None|is_buil[dt]_with_cuda\(\).*[Ff]alse",
    "prerelease": r"\.dev20[0-9]{6}|\bdev20[0-9]{6}\b|[0-9]\.dev[0-9]+|\bnightl(?:y|ies)\b|\b[0-9]+\.[0-9]+(?:\.[0-9]+)?(?:a|rc)[0-9]+\b(?!\+)|\brocm[0-9]+\.[0-9]+(?:\.[0-9]+)?(?:a|rc)20[0-9]{6}\b"
                  r"|\b[Pp]re-?release\b|--pre\b"
                  # "Nightly" as a sentence or title starts it ("Nightly broken on cu92", "PyTorch: Nightly")
                  r"|\bNightl(?:y|ies)\b|\bNIGHTLY\b",
    "container": r"\bdocker\b|\bDocker\b|\bcontainer\b|\bsingularity\b|\bapptainer\b|\bpodman\b|\bkubelet\b|\bkubernetes\b"
                 r"|\bk8s\b|\.sif\b|^[A-Za-z0-9_.-]{1,40}-[0-9]+\s+\|",
    "wsl": r"\bWSL2?\b|/mnt/[a-z]/|microsoft-standard|/usr/lib/wsl|\bDESKTOP-[A-Z0-9]+",
    "windows": r"\b[A-Z]:\\|WinError|\.dll\b|win_amd64|\bWindows\b|\bwin32\b",
    "zluda": r"\bZLUDA\b|\bzluda\b",
    # the ISA override, as the variable or as users describe it ("override to gfx1030", "overriding gfx")
    "hsa-override": r"HSA_OVERRIDE_GFX_VERSION|(?i:\boverrid(?:e|ed|ing) (?:it |the gpu |the gfx version )?(?:to |as )?gfx ?[0-9]{3,4})",
    # GPU hardware named (not merely a vendor API in an error message: "hipError..." is no AMD GPU)
    "amd-gpu": r"\bgfx[0-9]{3,4}[a-z]?\b|\bRadeon\b|\bInstinct\b|\bMI[1-3][0-9]{2}X?\b|\bNavi ?[0-9]|\bVega\b|\bPolaris\b"
               r"|\bAMD/ATI\b|(?i:\bRX ?[4-9][0-9]{2,3}(?: ?XT| ?XTX)?\b)|rocminfo|/dev/kfd|\bROCk\b"
               # APU / GPU code names as lspci and bug templates print them ("AMD Raven", "[AMD/ATI] Barcelo")
               r"|\bAMD (?:Raven|Renoir|Cezanne|Barcelo|Rembrandt|Lucienne|Picasso|Fiji|Ellesmere|Baffin|Hawaii|Tonga)\b"
               # a Radeon RX model number typed without "RX" ("my 5700xt", "6700 XT"; Ryzen CPUs of these numbers
               # end in X, X3D or G, never XT), and an APU's graphics named in a "GPU:" field ("gpu: 680m")
               r"|(?i:\b(?:5[5-7]00|6[4-9][05]0|7[6-9]00) ?XTX?\b|\b(?:i?gpu|apu|graphics) ?[:=] ?(?:amd )?(?:radeon )?[6-8][1-9]0m\b)",
    "nvidia-gpu": r"\bGeForce\b|\b[RG]TX ?[0-9]{3,4}\b|\bTesla [A-Z]?[0-9]|\bQuadro\b|NVIDIA-SMI|nvidia-smi|\bNVRM\b"
                  r"|\b[AHVL][0-9]{2,3}S?(?:-SXM|-PCIE)\b|\b(?:H100|A100|V100|H200|L40S?)\b",
    "hip-error": r"\bhipError[A-Za-z]+|\bHIP error\b|\bHIP_ERROR_|\bhip[A-Z][A-Za-z]+ failed",
    "multi-gpu": r"tensor[- ]parallel|\ball[- ]?reduce|\bXGMI\b|\bNVLink\b|world_size|\bTP ?= ?[2-9]|tensor_parallel_size"
                 r"|\bnranks [2-9]|\[rank[1-9][0-9]*\]",
    "driver-version": r"[Dd]river(?: [Vv]ersion)?:? *\[?[0-9]{3}\.[0-9]+|NVRM version|\b[3-5][0-9]{2}\.[0-9]{2,3}(?:\.[0-9]+)?,|ROCk module version",
    # gfx targets that official ROCm framework wheels have never carried kernels for (RDNA1, the smaller RDNA2
    # and RDNA3 parts, Polaris, APUs); users run them with HSA_OVERRIDE_GFX_VERSION or source builds.
    # (by marketing name too: RX 470-590 Polaris gfx803, RX 5x00 RDNA1 gfx101x, RX 64x0-67x0 gfx1031-1034,
    # RX 7600 gfx1102, Radeon 760M/780M gfx1103)
    "amd-unlisted-arch": r"\bgfx(?:803|90c|1010|1011|1012|1013|1031|1032|1033|1034|1035|1036|1102|1103)\b"
                         r"|(?i:\bRX ?(?:[45][5-9]0|5[3-7]00|6[4-7][05]0|7600)(?: ?XT| ?S| ?M)?\b|\bRadeon (?:\w+ )?7[468]0M\b|\bPro WX ?[2-7]100\b)"
                         # the same RDNA1/RDNA2 numbers typed without "RX" ("my 5700xt"); APU graphics by name: Radeon
                         # 660M/680M (Rembrandt gfx1035), 610M (Raphael gfx1036), 740M (Phoenix gfx1103), also in a
                         # "GPU:" field without "Radeon" (LLVM AMDGPUUsage's processor table; KB gpu_models)
                         r"|(?i:\b(?:5[5-7]00|6[4-7][05]0) ?XT\b|\bRadeon (?:\w+ )?(?:6[168]0)M\b"
                         r"|\b(?:i?gpu|apu|graphics) ?[:=] ?(?:amd )?(?:radeon )?(?:6[168]0|7[468]0)m\b)"
                         # APU graphics as lspci names them: Raven/Picasso gfx902, Renoir/Lucienne/Cezanne/Barcelo
                         # gfx90c, Rembrandt gfx1035, Raphael gfx1036
                         r"|\[AMD/ATI\] (?:Raven|Picasso|Renoir|Lucienne|Cezanne|Barcelo|Rembrandt|Raphael)\b"
                         # the GCN generations ROCm dropped (LLVM AMDGPUUsage's processor table: GFX6 Southern Islands
                         # gfx600-602, GFX7 Sea Islands gfx700-705 (Hawaii gfx701/702: FirePro W8100/W9100, S9150,
                         # R9 290/390; Bonaire gfx704: HD 7790, R7 260), GFX8 Carrizo gfx801, Tonga/Iceland gfx802
                         # (R9 285/380/385, FirePro S7150/W7100), Stoney gfx810)
                         r"|\bgfx(?:60[0-2]|70[0-5]|80[0-2]|810)\b"
                         r"|(?i:\bR9 ?(?:2[89]0|3[89]0|285|38[05])X?\b|\bR7 ?260X?\b|\bFirePro [WS](?:[789]100|9150|9170|7150)\b"
                         r"|\bRadeon HD ?[78][0-9]{3}\b)|\b(?:Hawaii|Tahiti|Pitcairn|Bonaire|Tonga)\b",
    # a Tensile kernel library that fails to load although its file name is for a gfx target every ROCm release
    # since 5.5 ships (a listing of the library directory does not count: only the failing load)
    "tensile-supported-arch": r"(?:Could not load|Cannot read) .*TensileLibrary[A-Za-z_]*_gfx(?:908|90a|942|1030|1100)\b",
    # a hipBLASLt failure naming a gfx target rocBLAS/MIOpen support but hipBLASLt never did
    "rocblas-only-arch": r"(?:hipblaslt|rocblaslt|hipBLASLt)[^ ]* .*gfx(?:900|906|908|1030)\b",
    # a companion package's own native library failing to resolve a symbol
    "companion-lib": r"(?:torchaudio|torchvision|torchtext|_torch_sox)[A-Za-z0-9_./-]*\.so[.0-9]*:? (?:undefined symbol|cannot open)",
    "hip-lib-wanted": r"lib(?:torch_hip|c10_hip|amdhip64)\.so[.0-9]*: cannot open",
    "cuda-lib-wanted": r"lib(?:torch_cuda[a-z_]*|c10_cuda|cudart)\.so[.0-9]*: cannot open",
    "nccl-context": r"\bNCCL\b|\bRCCL\b|ProcessGroupNCCL|\bnccl[A-Z]",
    # onnxruntime's "Specified provider 'X' is not in available provider names.Available providers: '...'"
    # (onnxruntime/python/onnxruntime_inference_collection.py): an AMD provider asked for, NVIDIA ones on offer
    "ort-amd-provider-wanted": r"Specified provider .(?:ROCM|MIGraphX)ExecutionProvider. is not in available provider names",
    "ort-nvidia-providers": r"Available providers: '[^']*(?:CUDA|Tensorrt|TensorRT)ExecutionProvider",
    # an AMD GPU as users name it in prose ("AMD GPU not recognized", "my AMD card")
    "amd-gpu-said": r"\bAMD (?:GPU|[Gg]raphics [Cc]ard|[Cc]ard|video card)s?\b|(?i:\b(?:on|an|my|with) amd gpus?\b)",
    # the reporter says the work runs on the CPU or the GPU is not used ("it falls back to the CPU", "my cpu is being
    # pegged", "the gpu no use", "not utilising it at all"), or a program prints that it found no GPU it can use
    # (ollama's discovery: "no compatible GPUs were discovered", an inference-compute line with library=cpu; JAX's
    # device list holding only the CPU)
    "gpu-unused": r"(?i:\b(?:runs?|running|ran|falls?(?: back)?|fell back|falling back|fallback|defaults?|defaulting|stays?|stuck|only)"
                  r" (?:only |entirely |everything |all )?(?:on|to|uses?|using) (?:the |my )?cpu\b"
                  r"|\bcpu (?:usage )?(?:is |was )?(?:being |very |always )*(?:pegged|maxed|prioriti[sz]ed|high|at 100)"
                  r"|\b100 ?% cpu\b|\bgpu (?:is |was )?(?:not|no|never) (?:use|used|usage|utili[sz]ed|being used)\b"
                  r"|\bnot (?:utili[sz]ing|using) (?:it|the gpu|my gpu)\b"
                  r"|\b(?:doesn'?t|does not|don'?t|isn'?t|is not|wasn'?t|was not) (?:use|using|utili[sz]e|utili[sz]ing) (?:the |my |any )?(?:gpu|graphics card|video card)"
                  r"|no compatible (?:amdgpu )?(?:gpus|devices) (?:were )?(?:discovered|detected))|\[CpuDevice\(id=0\)\]",
    # an integrated GPU named ("the iGPU", "integrated graphics"): ROCm enumerates an APU's graphics next to a discrete
    # GPU, and official ROCm builds carry kernels for none of them but Strix Halo's (gfx1151, below)
    "igpu-said": r"(?i:\bigpus?\b|\bintegrated (?:amd |radeon )?(?:gpus?|graphics)\b)",
    "strix-halo": r"\bgfx1151\b|\b80[4-6]0S\b|(?i:\bstrix halo\b|\bryzen ai max)",
    # a GPU back end that is not ROCm/HIP: DirectML (Windows), Vulkan (llama.cpp, Mesa's RADV); its failures do not
    # depend on the gfx targets ROCm builds carry
    "dml-vulkan": r"(?i:\bdirectml\b|torch[_-]directml|\bvulkan\b|\bradv\b)|\bdml_[a-z_]+\.(?:cc|cpp|h)\b|\bDml[A-Z][a-z]+[A-Za-z]*",
    # the reporter says the machine is an AMD/ROCm one ("I use an AMD GPU", "installed for AMD", "comfy install --amd",
    # "I installed ROCm", "ROCm 6.2"), not an AMD CPU ("AMD Ryzen", "AMD EPYC") and not collect_env's empty ROCm row
    # ("ROCM used to build PyTorch: N/A" is upper-case; "ROCm: N/A" and "ROCm version: None" are excluded)
    "amd-said": r"(?i:\b(?:for|on|with|an|my|have|using|use|uses)[ \t]+(?:an?[ \t]+)?AMD\b(?![ \t]*(?:Ryzen|EPYC|Threadripper|Athlon|Opteron|CPUs?\b|processors?\b|chipset|APU\b))"
                r"|\bAMD[ \t]+(?:GPUs?|cards?|graphics|video|Radeon)\b|(?<![\w-])--amd\b)"
                r"|\bROCm\b(?![ \t]*(?:version)?[ \t]*[:=]?[ \t]*(?:N/?A|None)\b)|\brocm[0-9]",
    # the reporter says a CUDA (NVIDIA) build of torch is what got installed ("installs CUDA torch instead of ROCm torch",
    # "the CUDA version of PyTorch", "left the container with a CUDA torch build")
    "cuda-build-said": r"(?i:\b(?:CUDA|NVIDIA)[ \t-](?:version|build|variant|wheel|flavou?r)s?[ \t]+of[ \t]+(?:py)?torch\b"
                       r"|\bCUDA[ \t]+(?:py)?torch(?:vision|audio)?\b|\b(?:py)?torch[ \t]+(?:for|with)[ \t]+CUDA\b(?![ \t]+(?:enabled|support))"
                       r"|\b(?:py)?torch(?:vision|audio)?[ \t]+(?:CUDA|cu1[0-9]{1,2})[ \t]+(?:build|wheel|version)s?\b)",
    # the reporter (or an installer) says the CPU-only build of torch is what got installed ("falling back to CPU-only
    # PyTorch", "resulted in the CPU version of torch", "torch 2.7.0+cpu detected")
    "cpu-build-said": r"(?i:\bCPU[- ]only[ \t]+(?:build[ \t]+of[ \t]+)?(?:py)?torch\b|\bCPU[ \t-](?:version|build|variant|wheel)s?[ \t]+of[ \t]+(?:py)?torch\b"
                      r"|\b(?:py)?torch[ \t]+CPU[ \t-]?only\b|\bCPU[ \t]+(?:py)?torch\b)"
                      r"|\b(?:torch|pytorch|PyTorch)[ \t=-]+[0-9]+\.[0-9]+(?:\.[0-9]+)?\+cpu\b",
    # ROCm/HIP itself named (the back end whose builds carry a gfx target list)
    "rocm-said": r"\bROCm\b|\brocm[0-9]|\bHIP\b|\bhip[A-Z][A-Za-z]+|libamdhip64|amdhip64|\bZLUDA\b|\brocBLAS\b|\bMIOpen\b|HSA_OVERRIDE",
    # the reporter says the machine has no GPU or that they want the CPU (a CUDA call in their code is then theirs)
    "no-gpu-stated": r"(?i:\bI (?:don'?t|do not) have (?:a |an |any )?(?:NVIDIA |CUDA |dedicated )?(?:GPU|graphics card)"
                     r"|\b(?:my|this) (?:machine|laptop|computer|PC|server) (?:has no|does not have an?|doesn'?t have an?) (?:NVIDIA |CUDA )?GPU"
                     r"|\bI (?:want|need|would like) to (?:run|use) (?:it |this |the )?(?:code |script |model |program )?on (?:the |a )?CPU"
                     r"|\bhow (?:can|do) I run (?:this |it |the )?(?:code |script |model |program )?on (?:the |a )?CPU)",
    # xFormers' dispatcher refused every kernel because the inputs are on the CPU (xformers/ops/fmha/common.py)
    "inputs-on-cpu": r"device=cpu \(supported: \{'cuda'",
    # a *_VISIBLE_DEVICES variable named (set in a script, a shell, a launcher): what hides a GPU from a process
    "visible-devices": r"\b(?:CUDA|HIP|ROCR)_VISIBLE_DEVICES\b",
    # NVIDIA Multi-Instance GPU in use: a MIG device UUID, a GPU-instance profile (3g.40gb), MIG named as a mode or
    # a slice; a CUDA process enumerates only the MIG instances it is given (one, without CUDA_VISIBLE_DEVICES)
    # (not nvidia-smi's "MIG M." column header, which every table prints)
    "mig": r"\bMIG-(?:GPU-)?[0-9a-f]{8}-|\b[1-7]g\.[0-9]{1,3}gb\b|\bMIG[ -](?:mode|[Ee]nabled|instances?|slices?|partitions?|devices?|configuration)\b"
           r"|(?i:\bMIG (?:is )?enabled\b|\b(?:in|with|under|on) MIG\b|\bMIG[- ]partitioned\b|\bpartitioned (?:with MIG|A100|H100))",
    # the reporter ties a failure to the batch size ("any bigger batch", "reduce the batch size", batch_size=...)
    "batch-said": r"(?i:\bbatch[ _-]?size\b|\b(?:bigger|larger|smaller|lower|reduc\w*|decreas\w*|increas\w*|chang\w*) (?:the |my )?batch\b"
                  r"|\bbatch (?:of|=) ?[0-9]|--batch\b)",
    # Triton's OutOfResources (python/triton/runtime/errors.py: "out of resource: shared memory, Required: N, Hardware
    # limit: M") asking for more shared memory per block than any NVIDIA GPU offers (227 KiB = 232448 bytes on compute
    # capability 9.0/10.0, the largest in the CUDA programming guide's per-capability table): no GPU can run that
    # kernel configuration, so it is the model's or the program's settings (a head dimension, a block size), not a
    # GPU the kernels were not made for
    "smem-beyond-any-gpu": r"Required: (?:23[3-9][0-9]{3}|2[4-9][0-9]{4}|[3-9][0-9]{5}|[0-9]{7,}), Hardware limit",
    # PyTorch's cudaMallocAsync allocator backend in use: named (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, ComfyUI's
    # start-up line "Device: cuda:0 ... : cudaMallocAsync"), or ComfyUI, which turns it on by default for CUDA torch 2.x
    # unless --disable-cuda-malloc (ComfyUI cuda_malloc.py; its blacklist names GPUs without support)
    "cuda-malloc-async": r"cudaMallocAsync|--cuda-malloc\b|\bComfyUI\b|\bcomfy[\\/](?:model_management|sd|samplers|ops)",
    # the program asks for the CPU device (device="cpu", --device cpu): CPU-only kernels, dtypes and settings are its own
    "cpu-device-asked": r"\bdevice ?= ?[\"']cpu[\"']|--device[ =][\"']?cpu\b",
    # a batch scheduler: a job only sees the GPUs it requested
    "job-scheduler": r"\b(?:[Ss]lurm|SLURM|sbatch|srun|salloc)\b|--gres\b",
    # the package index of one vendor's torch builds (what pip was pointed at decides the build it installs)
    "rocm-index": r"download\.pytorch\.org/whl/(?:nightly/|test/)?rocm[0-9]",
    "cuda-index": r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu[0-9]{2,3}\b",
    # a wheel of PyPI's Linux x86_64 build, which is the CUDA one (no local label: the PyTorch index labels its
    # +cpu/+cuXY/+rocmX.Y wheels, and its old unlabelled CPU wheels are tagged linux_x86_64, never manylinux):
    # "Downloading torch-2.6.0-cp312-cp312-manylinux1_x86_64.whl", "vllm-0.6.3-cp38-abi3-manylinux1_x86_64.whl"
    "pypi-cuda-wheel": r"\b(?:torch|torchvision|torchaudio|vllm)-[0-9]+\.[0-9]+\.[0-9]+(?:\.post[0-9]+)?-cp[0-9]+-(?:cp[0-9]+m?|abi3)"
                       r"-manylinux[0-9a-z_.]*_x86_64\.whl",
    # a message only a HIP/ROCm build prints (a ROCm torch looking for an AMD device or library)
    "hip-only-msg": r"No HIP GPUs are available|\bhipErrorNoDevice\b|libamdhip64\.so[.0-9]*: cannot open",
    # a message only an NVIDIA build prints (a CUDA library or driver looked for)
    "cuda-only-msg": r"\blib(?:cublas|cublasLt|cudart|cudnn|nvrtc|cufft|curand|cusparse|cusolver|nvinfer)[a-z_]*\.so[.0-9]*: cannot open"
                     r"|CUDA driver version is insufficient|Found no NVIDIA driver|\bptxas fatal\b|\bcublas64_[0-9]+\.dll"
                     r"|\bcudart64_[0-9]+\.dll"
                     # ONNX Runtime's CUDA execution provider failing (onnxruntime/core/providers/cuda/cuda_call.cc)
                     r"|onnxruntime::CudaCall|providers[\\/]cuda[\\/]cuda_call\.cc"
                     # a program looking for an NVIDIA GPU or driver, as users report it ("ComfyUI is trying to detect an
                     # nVidia GPU", "it looks for an NVIDIA driver", "\"no Nvidia GPU\" error")
                     r"|(?i:\b(?:(?:trying|tries|tried) to (?:detect |find |use |load )?|looking for |looks for |searching for |expects? |expecting )(?:an? |the )?nvidia (?:gpu|card|driver)"
                     r"|\bno nvidia gpu\b)",
}
# The literal gate of each hint: a line reaches a hint's regex only when it holds one of its literals (the
# alternation above costs ~600 us on an ordinary 100-character line; the gates a few microseconds).  Built on
# first use, not at import (`gpuvet run` and `check` import this module without reading any log line).
_hints_gated: MultiGate | None = None


def hints_digest() -> str:
    from . import index
    from .gate import GATE_FORMAT, MIN_NEEDLE

    return index.digest(GATE_FORMAT, MIN_NEEDLE, list(HINTS.items()))


def hints_gate() -> MultiGate:
    """The hints' gates, from the shipped plan (data/signature_index.json) when it was computed from these
    very patterns, else computed now."""
    global _hints_gated
    if _hints_gated is None:
        from . import index

        sec = index.section("hint_gates", hints_digest())
        _hints_gated = MultiGate(HINTS, sec["plan"] if sec is not None else None)
    return _hints_gated

# Facts in tracebacks and warnings.  (Extra grep-safe prefilter patterns so the fast path sees them too.)
XFORMERS_RE = re.compile(r"built for:?\s*PyTorch ([0-9][^ ]*) with CUDA ([0-9]+)\s*\(you have ([0-9][^ )]*)\)")
TORCH_OLD_DRIVER_RE = re.compile(r"NVIDIA driver on your system is too old \(found version ([0-9]+)\)")
ROCK_RE = re.compile(r"ROCk module version ([0-9][0-9.]*) is loaded")
SMI_RE = re.compile(r"Driver Version: *([0-9]+\.[0-9.]+)\s+CUDA Version: *([0-9]+\.[0-9]+)")
NVRM_RE = re.compile(r"NVRM version: NVIDIA .*Kernel Module(?: for [a-z0-9_]+)? +([0-9]+\.[0-9.]+)")
TOOLKIT_MISMATCH_RE = re.compile(r"detected CUDA version \(([0-9.]+)\) mismatches the version that was used to compile\s+PyTorch \(([0-9.]+)\)")
CAPABILITY_RE = re.compile(r"^(.*?) with CUDA capability (sm_[0-9]+a?) is not compatible with the current PyTorch installation")
SUPPORTED_CAPS_RE = re.compile(r"current PyTorch install supports CUDA capabilities ((?:sm_[0-9]+a? ?)+)")
# "torch 2.3.0+cu121" / "torch==2.3.0+rocm6.0" fragments (pip list | grep torch, a line of an issue template)
TORCH_LINE_RE = re.compile(r"^(?:\[pip3?\]\s*|-\s*)?(?:torch|pytorch)(?:\s*==\s*|\s+)([0-9]+\.[0-9]+\.[0-9]+[0-9a-z.]*(?:\+[a-z0-9.]+)?)\s*$")
ROCBLAS_ARCH_RE = re.compile(r"(?:for )?GPU arch ?: ?(gfx[0-9a-f]+)")
from .fact_patterns import PREFILTER_PATTERNS  # noqa: E402,F401 - grep-safe twins of the patterns above
from ..model.lazyre import lazy


HINT_SPAN = 600


@dataclass(frozen=True)
class Hint:
    name: str
    line: int
    text: str


_SIZE = r"([0-9.]+) ([KMGT]i?B|bytes)"
OOM_SPLIT_RE = lazy(rf"Of the allocated memory {_SIZE} is allocated by PyTorch, and {_SIZE} is reserved by PyTorch but unallocated")
_UNIT = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}


def oom_fragmented(text: str) -> bool:
    """torch's OOM message says how much is allocated and how much is reserved but unallocated; a large
    unallocated reserve (>= 1 GiB and >= a quarter of what is allocated) is fragmentation, not capacity."""
    m = OOM_SPLIT_RE.search(text)
    if not m:
        return False
    alloc = float(m.group(1)) * _UNIT.get(m.group(2), 1)
    free_reserved = float(m.group(3)) * _UNIT.get(m.group(4), 1)
    return free_reserved >= 2**30 and free_reserved >= 0.25 * alloc


_OOM_REQ = re.compile(rf"Tried to allocate {_SIZE}")
# torch >= 2.1: "GPU 0 has a total capacity of C of which F is free" (2.1 printed "capacty")
_OOM_NEW = lazy(rf"total capaci?ty of {_SIZE} of which {_SIZE} is free")
_OOM_ALLOC = re.compile(rf"memory {_SIZE} is allocated by PyTorch")  # a literal first: linear on digit runs
_OOM_UNALLOC = lazy(rf"and {_SIZE} is reserved by PyTorch but unallocated")
# torch < 2.1: "(GPU 0; C total capacity; A already allocated; F free; R reserved in total by PyTorch)" (or "R cached")
_OOM_OLD = lazy(rf"\(GPU [0-9]+; {_SIZE} total capacity; {_SIZE} already allocated; {_SIZE} free"
                      rf"(?:; {_SIZE} (?:reserved in total by [Pp]y[Tt]orch|cached))?")


def _bytes(m: re.Match, i: int) -> float:
    return float(m.group(i)) * _UNIT.get(m.group(i + 1), 1)


def oom_workload_too_large(text: str) -> bool:
    """The numbers of torch's out-of-memory message show the workload itself filling the GPU: the request exceeds
    what is free, the process's own tensors hold at least a quarter of the GPU, and the caching allocator keeps no
    large unallocated reserve (that would be fragmentation, oom_fragmented).  The fix is a smaller batch, context
    or model (the incident sets label this ``none``: the job, not the stack); an allocation larger than what is free
    on a GPU the process barely uses (an APU's carve-out, another process's memory) stays the allocator's."""
    req = _OOM_REQ.search(text)
    if not req:
        return False
    new, old = _OOM_NEW.search(text), _OOM_OLD.search(text)
    if new:
        cap, free = _bytes(new, 1), _bytes(new, 3)
        a = _OOM_ALLOC.search(text)
        if not a:  # the message cut after "is free" (a title, a one-line paste): a GPU left with < 2% free is full
            return _bytes(req, 1) > free and cap > 0 and free <= 0.02 * cap
        alloc = _bytes(a, 1)
        u = _OOM_UNALLOC.search(text)
        unalloc = _bytes(u, 1) if u else 0.0
    elif old:
        cap, alloc, free = _bytes(old, 1), _bytes(old, 3), _bytes(old, 5)
        unalloc = max(0.0, _bytes(old, 7) - alloc) if old.group(7) else 0.0
    else:
        return False
    fragmented = unalloc >= 2**30 and unalloc >= 0.25 * alloc
    return _bytes(req, 1) > free and cap > 0 and alloc >= 0.25 * cap and not fragmented


_PADDLE_CUDNN = lazy(r"compiled with CUDNN ([0-9]+)\.([0-9]+), but CUDNN version in your machine is ([0-9]+) ?\.([0-9]+)")


def paddle_cudnn_versions(text: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """(compiled with, loaded) of Paddle's warning "compiled with CUDNN a.b, but CUDNN version in your machine is
    c.d" (some releases print it with two equal versions)."""
    m = _PADDLE_CUDNN.search(text)
    if not m:
        return None
    return (int(m.group(1)), int(m.group(2))), (int(m.group(3)), int(m.group(4)))


def hints_in(text: str, lineno: int) -> list[Hint]:
    """Context hints one normalised line shows."""
    out = []
    if "compiled with CUDNN" in text:
        pv = paddle_cudnn_versions(text)
        if pv is not None:
            out.append(Hint("cudnn-older-than-built" if pv[1] < pv[0] else "cudnn-not-older-than-built", lineno,
                            text[:300]))
    if "reserved by PyTorch but unallocated" in text and oom_fragmented(text):
        out.append(Hint("oom-fragmentation", lineno, text[:300]))
    if "Tried to allocate" in text and oom_workload_too_large(text):
        out.append(Hint("oom-workload", lineno, text[:300]))
    cut = text.find("(from versions:")
    if cut >= 0:  # pip's list of what the index offers ("1.4.0+cpu, 1.5.0+cu101, ...") says nothing of what is installed
        text = text[:cut]
    text = text[:HINT_SPAN]  # context sits in short lines; long ones are metric dumps
    short = text[:300]
    found = (_hints_gated or hints_gate()).matches(text)
    if not found:
        return out
    return out + [Hint(k, lineno, short) for k in HINTS if k in found]


def _cuda_int(v: str) -> str:
    """CUDA's integer version (11040, 1201) -> '11.4', '12.1'."""
    n = int(v)
    if n >= 1000:
        return f"{n // 1000}.{(n % 1000) // 10}"
    return f"{n // 100}.{(n % 100) // 10}"


def facts_in(text: str, lineno: int) -> list[Row]:
    """Version facts one normalised line states, as fact rows (source names the line)."""
    out: list[Row] = []
    src = f"log line {lineno}"
    m = XFORMERS_RE.search(text)
    if m:
        built, cuda, have = m.groups()
        variant = "cpu" if "+cpu" in have else ("rocm" if "rocm" in have else "cuda")
        out.append(row("framework_builds", src, name="torch", version=have, variant=variant,
                       channel=channel_of(have)))
        out.append(row("packages", src, name="xformers", version="",
                       requires=[f"torch=={built}"]))
    m = TORCH_OLD_DRIVER_RE.search(text)
    if m:
        out.append(row("drivers", src, vendor="nvidia", component="user-space", version="",
                       cuda_version=_cuda_int(m.group(1))))
    m = ROCK_RE.search(text)
    if m:
        out.append(row("drivers", src, vendor="amd", component="kernel-module", version=m.group(1)))
    m = SMI_RE.search(text)
    if m:
        out.append(row("drivers", src, vendor="nvidia", component="user-space", version=m.group(1),
                       cuda_version=m.group(2)))
    m = NVRM_RE.search(text)
    if m:
        out.append(row("drivers", src, vendor="nvidia", component="kernel-module", version=m.group(1)))
    m = TOOLKIT_MISMATCH_RE.search(text)
    if m:
        out.append(row("compilers", src, name="nvcc", version="", cuda_version=m.group(1), platform="nvidia"))
        out.append(row("framework_builds", src, name="torch", version="", cuda=m.group(2), variant="cuda"))
    m = CAPABILITY_RE.search(text)
    if m:
        name = m.group(1).strip().split(": ")[-1].strip()
        arch = m.group(2)
        out.append(row("gpu_devices", src, vendor="nvidia", name=name, arch=arch,
                       compute_capability=f"{arch[3:-1]}.{arch[-1]}" if arch[-1].isdigit() else ""))
    m = SUPPORTED_CAPS_RE.search(text)
    if m:
        out.append(row("framework_builds", src, name="torch", version="", variant="cuda",
                       targets=m.group(1).split(), targets_source="torch warning in log"))
    m = TORCH_LINE_RE.search(text.strip())
    if m:
        v = m.group(1)
        out.append(row("framework_builds", src, name="torch", version=v, variant=variant_of(v, default=""),
                       cuda=cuda_of_local(v), hip=hip_of_local(v), channel=channel_of(v)))
    if "TensileLibrary" in text:
        m = ROCBLAS_ARCH_RE.search(text)
        if m:
            out.append(row("gpu_devices", src, vendor="amd", arch=m.group(1)))
    return out


def hint_names(hints: Iterable[Hint]) -> set[str]:
    return {h.name for h in hints}
