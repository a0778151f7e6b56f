"""Versions a bug report states in words and in install commands, read only where their role is clear (pure).

A user who pastes no tool's output still says what the machine runs, in a few recurring shapes:

* the **system's ROCm** as a statement: "ROCm 5.6.1 installed", "I'm running ROCm 6.1.3", "ROCm version: 6.0.2",
  "Our ROCm install is 5.6.1", "Ubuntu 22.04, ROCm 5.6.1, MI210", "AMD ROCm™ 5.6.1 (from ...)" (a two-cell Markdown
  table row ``| ROCm | 5.6.1 |`` is an environment block's: ``probes.envblock``), GitHub's issue form (``### ROCm Version`` then ``ROCm 6.0.0`` on a later line: the
  template of github.com/ROCm/ROCm and ROCm/TheRock issues); AMD's installer package
  (``amdgpu-install_5.6.50601-1_all.deb``, ``repo.radeon.com/amdgpu-install/7.1/...``: its 5-digit build field is the
  release, as in github.com/ROCm/legacy-rocm-build issues 1800, 5160, 5615) or "amdgpu-install 5.6.1"; AMD's
  multi-version packages (``rocm-core5.6.1`` in apt / dpkg rows: a tool's fact; in an install command: a statement);
  ``ARG`` / ``ENV`` / ``export ROCM_VERSION=X``;
* the **framework's build** as a statement or a transcript: "torch version 2.3.0.dev20240215+rocm5.7", pip's ``Requirement already satisfied: torch in ... (2.3.0+rocm6.0)``, uv's `` + torch==2.3.0+rocm6.0``
  (``-`` lines are what it removed), poetry's ``- Installing torch (2.3.0+rocm6.0)`` / ``- Updating torch (A -> B)``,
  uv.lock / poetry.lock tables, ``torch.version.hip: X`` on one line, ComfyUI's ``ROCm version: (6, 2)`` (the major.minor
  of torch.version.hip, comfy/model_management.py); weakest, the ROCm variant of PyTorch's package index in an install
  command, a requirements file, pip's ``Looking in indexes:`` or a uv / poetry index
  (``download.pytorch.org/whl/nightly/rocm5.7``: every wheel of that index is built for that ROCm release) and a
  build named by its ROCm release alone ("the PyTorch nightly for ROCm 5.7");
* the **HIP runtime torch loaded**: the ``HIP Runtime 5.7.31921`` line of ``torch.__config__.show()`` (aten's
  showConfig prints ``"  - HIP Runtime "`` and hipRuntimeGetVersion, under ``PyTorch built with:``), a library fact;
  the build's HIP too, as the weakest reading, when nothing else names the build.

Role decides, never the bare number.  A statement counts only when nothing in its sentence makes it a change, a
comparison, a question, a wish or somebody else's setup ("tried ROCm 5.7 and 6.0", "upgrade to ROCm 6.1 fixed it",
"works on ROCm 5.7", "PyTorch for ROCm 5.7" as the system, a release in a docs URL), when its sentence names one
release only, and when the whole text states one release only.  An install command counts unless it is commented
out, offered as a suggestion ("try: pip install ..."), or followed by pip's "no matching distribution".  Every row
says so in its source (``STATED`` / ``INDEX`` / ``BUILD_STATED`` / ``CONFIG_SHOW``), and ``pasted.parse_report``
drops them where a tool's output in the same text says the same thing more exactly (``weakest_first_dropped``): a
tool's ROCm or HIP release outranks a stated one, a torch version printed by a tool outranks a stated one, and any
torch version outranks the weakest readings.
"""
from __future__ import annotations

import re

from gpuvet.model import Row, row

from ..model.lazyre import lazy
from .mentions import _snippet, _torch_row

STATED = "stated in the text"
INDEX = "from the install index"
BUILD_STATED = "the build's ROCm, stated in the text"
CONFIG_SHOW = "torch.__config__.show()"

_V = r"\d+\.\d+(?:\.\d+)?"
# "ROCm 5.6.1", "ROCm version: 6.0.2", "ROCm install is 5.6.1", "rocm 5.6", "ROCm v6.1", "ROCm6.1" (not "+rocm5.7",
# "/rocm5.7", "pytorch_rocm6.1", "rocm-5.6.1": tags, URLs and paths are other readers')
# The same field written in other languages: its word for "version" (版本, バージョン) and "is" (是, は, ist) after
# pasted.clean turned the full-width colon and comma into ASCII ("ROCm 版本:5.6.1", "ROCm のバージョンは 5.6.1")
_L10N_VERSION = r"[ \t]*(?:の[ \t]*)?(?:版本号?|バージョン|버전|versión|versão)"
_L10N_IS = r"[ \t]*(?:は|是|为|為)|[ \t]+ist"
PROSE_ROCM_RE = lazy(r"(?<![\w/.+-])ROCm(?:™|®|\(TM\))?(?:[ \t]+(?:version|release|install(?:ation)?|stack|runtime|sdk)|"
                     + _L10N_VERSION + r")?"
                     r"(?:\*\*|`)?(?:[ \t]+(?:is|=)|" + _L10N_IS + r")?[ \t]*(?:[:=][ \t]*)?(?:\*\*|`)?v?(" + _V
                     + r")(?![\w]|\.\d)", re.I)
# the issue form's field: a heading "### ROCm Version" (or "**ROCm version**") alone, its value a few lines below
FORM_HEAD_RE = lazy(r"^(?:#{1,4}[ \t]*|\*\*)?ROCm[ \t]+[Vv]ersion(?:\*\*)?:?[ \t]*$")
FORM_VALUE_RE = lazy(r"^(?:ROCm[ \t]*)?v?(" + _V + r")(?:[ \t]*\([^()\n]{0,80}\))?[ \t]*$", re.I)
# AMD's installer: amdgpu-install_5.6.50601-1_all.deb, amdgpu-install-6.4.60402-2187269.el8.noarch.rpm, dpkg -l's
# "ii  amdgpu-install  5.6.50601-1  all ..."; the 5-digit field is the release (50601 -> 5.6.1)
AMDGPU_INSTALL_PKG_RE = lazy(r"\bamdgpu-install[_ \t-]{1,40}?(\d+)\.(\d+)\.(\d)(\d\d)(\d\d)-\d+")
AMDGPU_INSTALL_URL_RE = lazy(r"\brepo\.radeon\.com/amdgpu-install/(" + _V + r")/")
AMDGPU_INSTALL_PROSE_RE = lazy(r"(?<![\w/.-])amdgpu-install(?:er)?[ \t]+(?:version[ \t]+)?v?(" + _V + r")(?![\w]|\.\d)",
                               re.I)
# Dockerfiles and shell set-ups that declare the release (AMD's ROCm images: `ARG ROCM_VERSION=6.0`)
ENV_ROCM_VERSION_RE = lazy(r"^(?:ENV|ARG|export)[ \t]+ROCM_VERSION(?:=|[ \t]+)[\"']?(" + _V + r")[\"']?[ \t]*$")
# ComfyUI's start-up log (comfy/model_management.py: rocm_version = the major.minor of torch.version.hip, printed as a
# tuple; (6, -1) when it could not be read)
COMFY_ROCM_RE = lazy(r"\bROCm version: \((\d+), (-?\d+)\)[ \t]*$")
# lock files (uv.lock, poetry.lock): a package's table, name then version
LOCK_NAME_RE = lazy(r"^name[ \t]*=[ \t]*\"torch\"[ \t]*$")
LOCK_VERSION_RE = lazy(r"^version[ \t]*=[ \t]*\"(\d+\.\d+\.\d+[\w.]*\+rocm[\w.]+)\"[ \t]*$")
# AMD's multi-version installs name the release in the package itself ("sudo apt install rocm-hip-sdk5.6.1",
# "rocm-core5.6.1/jammy,now 5.6.1.50601-93~22.04 amd64 [installed]", "ii  rocm-core5.6.1  5.6.1.50601-93~22.04 ...")
MULTI_PKG_RE = lazy(r"(?<![\w.-])(rocm-core|rocm-hip-sdk|rocm-hip-runtime|rocm-hip-libraries|rocm-dev|rocm-libs|rocm-utils"
                    r"|rocm-language-runtime|rocm-ml-sdk|hip-runtime-amd)(\d+\.\d+\.\d+)(?![\w]|\.\d)")
MULTI_LIST_RE = lazy(r"^(?:ii[ \t]|[a-z0-9][a-z0-9.+-]*/[\w,.-]+ \S+ (?:amd64|arm64|all)\b)")
MULTI_INSTALL_RE = lazy(r"\b(?:apt(?:-get)?|dnf|yum|zypper)[ \t]+(?:-[-\w]+[ \t]+){0,3}install\b")
# torch.version.hip quoted with its value on one line: "torch.version.hip: 5.7.31921-d1770ee1b", "torch.version.hip ==
# '5.7.31921-d1770ee1b'" (HIP's own numbering, X.Y.NNNNN: no other number is taken for it)
TORCH_HIP_INLINE_RE = lazy(r"\btorch\.version\.hip\b[)'\"\]]*[ \t]*(?:(?:==|=|:|->|is)[ \t]*)?['\"]?(\d+\.\d+\.\d{4,6}(?:-[0-9a-f]+)?)"
                           r"['\"]?(?![\w.])")
# torch's version with its ROCm tag in a sentence: "torch version 2.3.0.dev20240215+rocm5.7", "PyTorch 2.8.0 + rocm6.4",
# "torch==2.3.0+rocm6.0"
# The "+rocmX.Y" local label is itself the mark of a PyTorch-family ROCm wheel: the version is torch's where the word
# torch comes first in its sentence with only words between ("torch is the feb 15 nightly: 2.3.0.dev20240215+rocm5.7",
# "torch.__version__ -> 2.3.0+rocm5.7", "PyTorch ist die Nightly 2.3.0+rocm5.7", "PyTorch 版本:2.3.0+rocm5.7"): no other
# version and no other package's name (torchvision, triton, ...) between them
_TORCH_GAP = (r"(?:(?!\d+\.\d|torch|vision|audio|triton|xformers|jax|tensorflow|onnx|vllm|deepspeed|apex|diffusers"
              r"|transformers|rocm|hip|cuda)[^\n+])")
TORCH_INLINE_RE = lazy(r"(?<![\w.-])(?:py)?torch(?![\w-])" + _TORCH_GAP + r"{0,40}?(?<![\w.])v?"
                       r"(\d+\.\d+\.\d+(?:[a-z]+\d*)?(?:\.dev\d{8})?)[ \t]*\+[ \t]*(rocm\d+\.\d+(?:\.\d+)?(?:[a-z]+\d+)?)"
                       r"(?![\w.])", re.I)
# transcripts: pip, uv, poetry
PIP_SATISFIED_RE = lazy(r"^Requirement already satisfied: (?:py)?torch(?:[=<>!~]=?[\w.+]{1,40})? in [^()\n]{1,300}"
                        r"\((\d+\.\d+\.\d+[\w.]*\+rocm[\w.]+)\)\s*$")
UV_PLUS_RE = lazy(r"^\+[ \t]+torch==(\d+\.\d+\.\d+[\w.]*\+rocm[\w.]+)\s*$")
POETRY_RE = lazy(r"^[-•*][ \t]+(?:Installing|Updating|Downgrading)[ \t]+torch[ \t]+\((?:[^()\s]{1,60}[ \t]+->[ \t]+)?"
                 r"(\d+\.\d+\.\d+[\w.]*\+rocm[\w.]+)\)")
# torch.__config__.show(): "PyTorch built with:" then "  - HIP Runtime 5.7.31921"
CONFIG_HEAD_RE = lazy(r"^\s*PyTorch built with:\s*$")
CONFIG_HIP_RE = lazy(r"^\s*-[ \t]+HIP Runtime[ \t]+(\d+\.\d+(?:\.\d+)?)\s*$")
# PyTorch's ROCm index (stable, nightly, test channels)
INDEX_URL_RE = lazy(r"download\.pytorch\.org/whl/(nightly/|test/)?rocm(" + _V + r")(?=[/\s\"'`,)\]]|$)")
INSTALL_CTX_RE = lazy(r"\b(?:pip3?|uv|poetry|pdm|pipenv|conda)\b[^\n]{0,400}?\b(?:install|add|sync|lock)\b"
                      r"|--(?:extra-)?index-url\b|(?:^|[ \t])-[if][ \t]|--find-links\b|^[ \t]*(?:url|index-url|extra-index-url)[ \t]*="
                      r"|Looking in (?:indexes|links):|\bUV_(?:EXTRA_)?INDEX_URL=|\bPIP_(?:EXTRA_)?INDEX_URL=|\bregistry[ \t]*=")
INSTALL_FAILED_RE = lazy(r"Could not find a version that satisfies the requirement[ \t]+(?:py)?torch\b"
                         r"|No matching distribution found for[ \t]+(?:py)?torch\b")

# a sentence that reports a change, a comparison, a condition, a wish or documentation is no statement of the
# machine's state: its words (a set and stems: one pass over the words, not a regex of 80 alternatives per sentence)
CHANGE_WORDS = frozenset(
    "try tries tried trying instead fix fixed fixes work works worked working should would could will wont won't "
    "plan plans planned planning want wants wanted before previous previously until since prior earlier later older "
    "newer than versus vs changelog doc docs documentation roadmap whether if released either both also another "
    "other same different rollback reinstall reinstalled reinstalling instruction instructions guide tutorial example "
    "requirement hope hoping above below".split())
CHANGE_STEMS = ("upgrad", "downgrad", "switch", "migrat", "support", "compatib", "requir", "recommend", "suggest",
                "expect", "wait", "announc", "availab", "deprecat", "remov", "uninstall", "purg", "mismatch", "differ",
                "revert", "drop")
CHANGE_PAIRS = frozenset({("update", "to"), ("updated", "to"), ("updates", "to"), ("updating", "to"), ("move", "to"),
                          ("moved", "to"), ("moving", "to"), ("going", "to"), ("used", "to"), ("release", "note"),
                          ("release", "notes"), ("rolled", "back"), ("roll", "back"), ("no", "matching"),
                          ("existing", "installation"), ("e", "g"), ("i", "e"), ("hope", "to"),
                          ("when", "using")})
# (and the same joiners in the languages the release fields are read in: und/oder, et/ou, と, 和/或/还是, 또는/및)
CHANGE_RANGE_RE = lazy(r"(?:\bor|\band|\bund|\boder|\bou|\bet|/|->|→|~|と|和|或|及|还是|또는|및)[ \t]*v?\d+\.\d")
_WORDS = lazy(r"[a-z0-9_]+(?:'[a-z]+)?")  # an identifier (HIPBLAS_STATUS_NOT_SUPPORTED) is one word


def changed(text: str) -> bool:
    """Does the sentence report a change, a comparison, a condition, a wish or somebody else's setup?"""
    if "?" in text:
        return True
    words = _WORDS.findall(text.lower())
    for a, b in zip(words, words[1:] + [""]):
        if a in CHANGE_WORDS or a.startswith(CHANGE_STEMS) or (a, b) in CHANGE_PAIRS:
            return True
    return bool(CHANGE_RANGE_RE.search(text))


_URL = lazy(r"\b(?:https?|file)://\S+|\bwww\.\S+")
_SENTENCE_END = lazy(r"[!?;]|\.(?=\s|$)")
_CLAUSE_SEP = lazy(r"[,;()|\[\]]|[ \t]-[ \t]|\b(?:and|but)\b")
_WORD = lazy(r"[A-Za-z][\w'-]*")
# words before "ROCm X" that make it the framework's build, somebody's negation or a change, not the system
_FRAMEWORK_PREV = {"for", "against", "built", "compiled", "torch", "pytorch", "wheel", "wheels", "whl", "nightly",
                   "nightlies", "build", "builds", "index", "tag", "image", "docker", "container", "jax", "jaxlib",
                   "tensorflow", "onnxruntime", "vllm", "not", "no", "without", "except", "from", "to", "of", "new",
                   "old", "latest", "next", "than", "like", "bundled", "bundles", "ships", "shipped"}
_SYSTEM_PREV = {"have", "has", "installed", "install", "running", "run", "runs", "using", "use", "on", "with", "got",
                "our", "my", "system", "system's", "host", "host's", "native", "under", "machine", "machine's",
                "we're", "i'm", "im", "am", "is", "are", "here", "local"}
_FRAMEWORK_WORDS = lazy(r"\b(?:py)?torch\b|\bwheels?\b|\bwhl\b|\bnightl(?:y|ies)\b|\bbuil[dt]s?\b|\bjax(?:lib)?\b"
                        r"|\btensorflow\b|\bonnxruntime\b|\bvllm\b|\bdocker\b|\bimage\b|\bcontainer\b", re.I)
_FRAMEWORK_NEXT = lazy(r"^[ \t]*(?:wheels?|whl|builds?|nightl(?:y|ies)|version[ \t]+of|(?:py)?torch|images?|docker"
                       r"|containers?|index|tags?|variant|binar(?:y|ies)|support|release[ \t]+of)\b", re.I)
_SYSTEM_NEXT = lazy(r"^[ \t]*(?:(?:is[ \t]+)?installed|install(?:ation)?|packages?|stack|(?:on|in)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+)?"
                    r"(?:host|system|machine|server|node|box|ubuntu|debian|fedora|rhel|rocky|centos|arch|linux|opensuse|sles)"
                    r"|from[ \t]+(?:AMD|the[ \t]+AMD|repo\.radeon)|via[ \t]+amdgpu-install|(?:with|and)[ \t]+(?:amdgpu|the[ \t]+amdgpu))\b",
                    re.I)
# a sentence that describes the machine: an OS or a GPU beside the release ("ROCm 5.6.1 on Ubuntu 22.04, MI210")
_ENV_WORDS = lazy(r"\b(?:Ubuntu|Debian|Fedora|RHEL|Rocky|CentOS|Arch|Manjaro|openSUSE|SLES|Linux|kernel|WSL2?"
                  r"|MI[1-3]\d{2}X?|Instinct|Radeon|RX[ \t]?\d{3,4}|gfx\d{3,4}|W\d{4}|Navi)\b", re.I)
_BULLET = lazy(r"^[ \t]*(?:[-*+•][ \t]+|\d+[.)][ \t]+|#{1,6}[ \t]+|>[ \t]*|\|[ \t]*)?(?:\*\*)?")
# the previous line offers a suggestion ("Try this:", "You should install it with:")
_SUGGESTION_RE = lazy(r"\b(?:tr(?:y|ied)|should|suggest\w*|recommend\w*|instead|fix|solution|workaround|please|could|"
                      r"can[ \t]+you|correct|proper|right|official|instructions?|docs?|guide|per[ \t]+the)\b", re.I)


def _sentences(line: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    start = 0
    for m in _SENTENCE_END.finditer(line):
        # a "?" or "!" stays with its sentence (a question states nothing); a full stop does not (it would end
        # the version before it: "... torch 2.3.0+rocm5.7.")
        out.append((start, line[start:m.end() if m.group(0) in "?!" else m.start()]))
        start = m.end()
    out.append((start, line[start:]))
    return [(s, t) for s, t in out if t.strip()]


def _clause(sentence: str, a: int, b: int) -> tuple[str, str]:
    """The words of the mention's clause before and after it."""
    left, right = 0, len(sentence)
    for m in _CLAUSE_SEP.finditer(sentence):
        if m.end() <= a:
            left = m.end()
        elif m.start() >= b:
            right = m.start()
            break
    return sentence[left:a], sentence[b:right]


def _prev_word(before: str) -> str:
    words = [w.lower() for w in _WORD.findall(before)]
    while words and words[-1] in ("the", "a", "an", "amd"):
        words.pop()
    return words[-1] if words else ""


def _clean_sentence(sentence: str, spans: list[tuple[int, int]]) -> str:
    """The sentence without its URLs and without the mentions themselves (their own words, 'release', 'install',
    decide nothing)."""
    chars = list(sentence)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return _URL.sub(" ", "".join(chars))


_BUILD_PREV = {"for", "built", "against", "compiled", "torch", "pytorch", "nightly", "nightlies", "wheel", "wheels",
               "whl", "build", "builds"}
_TORCH_WORD = lazy(r"\b(?:py)?torch\b", re.I)
_OTHER_FRAMEWORK = lazy(r"\b(?:jax(?:lib)?|tensorflow|onnxruntime|vllm|paddle\w*|mxnet|cupy|triton)\b", re.I)
_NOT_INSTALLED = lazy(r"\b(?:fail(?:s|ed)?[ \t]+to[ \t]+install|can'?t|cannot|unable|no[ \t]+(?:such|wheel|build))\b", re.I)


def _rocm_statements(line: str) -> list[tuple[str, str, str]]:
    """(role, release, the words that state it) of each ROCm release a line states: role "system" (the machine's
    ROCm) or "build" (the release PyTorch was built for: "the PyTorch nightly for ROCm 5.7", "torch built with ROCm
    6.1", "the ROCm 6.0 wheel of torch").  A sentence may state one of each ("rocm is 5.6.1, torch is the nightly for
    rocm 5.7"); two releases in one role are a comparison, a change or a list of what was tried, and give nothing."""
    out: list[tuple[str, str, str]] = []
    for _, sent in _sentences(_URL.sub(lambda m: " " * len(m.group(0)), line)):
        found = list(PROSE_ROCM_RE.finditer(sent))
        if not found or changed(_clean_sentence(sent, [m.span() for m in found])):
            continue
        roles: dict[str, set[str]] = {}
        for m in found:
            roles.setdefault(_role(sent, m), set()).add(m.group(1))
        unclear = roles.pop("", set())
        for role, versions in roles.items():
            # another release the sentence names in no clear role ("I have ROCm 6.0.2 and ROCm 5.7.1") may be the
            # system's too: then which one is, is not stated
            if len(versions) == 1 and (role == "build" or unclear <= versions):
                out.append((role, versions.pop(), _snippet(sent, 100)))
    return out


_VERSION_OF = lazy(r"(?:the[ \t]+|la[ \t]+)?(?:version|versión|versão|Version)[ \t]+(?:of|de|del|do|da|von|der)", re.I)


def _role(sent: str, m: re.Match[str]) -> str:
    """"system", "build" or "" (neither, or not clear) for one "ROCm X" mention in its sentence."""
    before, after = _clause(sent, m.start(), m.end())
    prev = _prev_word(before)
    framework_next = bool(_FRAMEWORK_NEXT.match(after))
    if prev in _FRAMEWORK_PREV or framework_next or (prev == "with" and _FRAMEWORK_WORDS.search(before)):
        # the framework's build ("PyTorch for ROCm 5.7", "the ROCm 6.0 wheel"), when the sentence is about torch alone
        # and says it is there ("PyTorch 2.1 with ROCm 5.6" is either: no build is read from it)
        if ((prev in _BUILD_PREV or framework_next) and _TORCH_WORD.search(sent)
                and not _OTHER_FRAMEWORK.search(sent) and not _NOT_INSTALLED.search(sent)):
            return "build"
        return ""
    # a field: the sentence opens with the mention ("ROCm version: 6.0.2", "- **ROCm**: 7.2.0", a line "ROCm 6.0")
    # (or a field named the other way round: "Version de ROCm : 6.0.2", "version of ROCm: 6.0.2")
    head = _BULLET.sub("", sent[:m.start()]).strip()
    opens = head in ("", "AMD") or bool(_VERSION_OF.fullmatch(head))
    rest = after.strip(" \t.*`") if after.strip() else sent[m.end():].strip(" \t.*`")
    field = opens and (bool(re.search(r"[:=]|\bis\b|\bist\b|は|是|为|為", m.group(0))) or not rest or rest.startswith("("))
    if field or prev in _SYSTEM_PREV or _SYSTEM_NEXT.match(after) or _ENV_WORDS.search(sent):
        return "system"
    return ""


def _statement_ok(sent: str, spans: list[tuple[int, int]]) -> bool:
    return not changed(_clean_sentence(sent, spans))


def _suggested(lines: list[str], i: int) -> bool:
    """An install command offered rather than run: commented out, or under a line that proposes it."""
    line = lines[i].strip()
    if line.startswith(("#", "//")) or _SUGGESTION_RE.search(line.split("://", 1)[0]):
        return True
    for j in range(i - 1, max(-1, i - 4), -1):
        prev = lines[j].strip()
        if not prev:
            return False  # a blank line ends the block the command belongs to
        if prev.startswith("```"):
            continue
        return prev.endswith(":") and bool(_SUGGESTION_RE.search(prev))
    return False


def parse_prose(text: str, source: str) -> list[Row]:
    lines = text.splitlines()
    rocm_stated: list[tuple[str, int, str]] = []
    torch_stated: list[tuple[str, int, str]] = []
    build_stated: list[tuple[str, int, str]] = []
    multi: list[Row] = []
    transcripts: list[Row] = []
    index: list[tuple[str, bool, int, str]] = []
    in_config = False
    for i, raw in enumerate(lines):
        n = i + 1
        line = raw.strip()
        if not line or len(line) > 2000:
            in_config = False if not line else in_config
            continue
        if CONFIG_HEAD_RE.match(line):
            in_config = True
            continue
        if in_config:
            if line.startswith("-"):
                m = CONFIG_HIP_RE.match(line)
                if m:
                    # the runtime torch loaded (aten's showConfig asks hipRuntimeGetVersion): a library fact, which
                    # BLD046 compares with the build's HIP; and, when nothing else names the build, the build's HIP
                    # itself (a pip wheel runs on the runtime it carries), as the weakest reading
                    hip = m.group(1)
                    transcripts.append(row("libraries", f"{source} line {n} (torch.__config__.show(): HIP Runtime {hip})",
                                           name="amdhip64", version=hip, path="", origin="pasted", selected=True))
                    transcripts.append(_torch_row("", f"{source} line {n} ({CONFIG_SHOW}: HIP Runtime {hip}, the HIP "
                                                      "runtime torch runs on)", hip=hip))
                continue  # the build's own list ("- ROCm 6.2.0" there is the build's release, not the system's)
            in_config = False
        # the system's ROCm
        if "rocm" in line.lower():
            if FORM_HEAD_RE.match(line):
                for j in range(i + 1, min(len(lines), i + 4)):
                    nxt = lines[j].strip()
                    if not nxt:
                        continue
                    vm = FORM_VALUE_RE.match(nxt)
                    if vm:
                        rocm_stated.append((vm.group(1), j + 1, f"{line} {nxt}"))
                    break
                continue
            for role, v, words in _rocm_statements(line):
                (rocm_stated if role == "system" else build_stated).append((v, n, words))
            m = ENV_ROCM_VERSION_RE.match(line)
            if m:
                rocm_stated.append((m.group(1), n, _snippet(line, 100)))
            m = COMFY_ROCM_RE.search(line)
            if m and int(m.group(2)) >= 0:
                transcripts.append(_torch_row("", f"{source} line {n} (ComfyUI: {_snippet(line, 80)}: torch.version.hip's "
                                                  "major.minor)", hip=f"{m.group(1)}.{m.group(2)}"))
        if "rocm-" in line or "hip-runtime-amd" in line:
            listed = bool(MULTI_LIST_RE.match(line))
            if listed or (MULTI_INSTALL_RE.search(line) and not _suggested(lines, i)):
                for pm_ in MULTI_PKG_RE.finditer(line):
                    if listed:  # the package list says it is installed: a tool's fact
                        multi.append(row("runtimes", f"{source} line {n} (installed package {pm_.group(0)})",
                                         vendor="amd", name="rocm", version=pm_.group(2),
                                         path=f"/opt/rocm-{pm_.group(2)}", origin="pasted"))
                    else:
                        rocm_stated.append((pm_.group(2), n, f"installed with {_snippet(line, 80)}"))
                    break
        if "amdgpu-install" in line:
            pm = AMDGPU_INSTALL_PKG_RE.search(line)
            um = AMDGPU_INSTALL_URL_RE.search(line)
            if pm or um:
                v = (f"{int(pm.group(1))}.{int(pm.group(2))}.{int(pm.group(5))}" if pm and
                     int(pm.group(3)) == int(pm.group(1)) and int(pm.group(4)) == int(pm.group(2)) else
                     (um.group(1) if um else ""))
                what = (pm or um).group(0)  # type: ignore[union-attr]
                if v and not _suggested(lines, i):
                    rocm_stated.append((v, n, f"AMD installer {_snippet(what, 80)}"))
            else:
                for sent_start, sent in _sentences(line):
                    am = AMDGPU_INSTALL_PROSE_RE.search(sent)
                    # before ROCm 5.3 the installer carried the Radeon driver's numbering (amdgpu-install 22.10,
                    # 21.40): no ROCm release; AMD's release numbering starts at 5
                    if am and 5 <= int(am.group(1).split(".")[0]) < 20 and _statement_ok(sent, [am.span()]):
                        rocm_stated.append((am.group(1), n, _snippet(sent, 100)))
        if "torch.version.hip" in line:
            m = TORCH_HIP_INLINE_RE.search(line)
            if m:
                transcripts.append(_torch_row("", f"{source} line {n} (torch.version.hip: {_snippet(line, 80)})",
                                              hip=m.group(1)))
        # the framework's build
        low = line.lower()
        if "torch" in low:
            m = PIP_SATISFIED_RE.match(line) or UV_PLUS_RE.match(line) or POETRY_RE.match(line)
            if m:
                transcripts.append(_torch_row(m.group(1), f"{source} line {n} (installer: {_snippet(line)})"))

            elif "rocm" in low and not line.startswith(("- ", "-\t")):  # a list row (uv's removed package, an export)
                for _, sent in _sentences(line):
                    found = list(TORCH_INLINE_RE.finditer(sent))
                    vers = {f"{x.group(1)}+{x.group(2).lower()}" for x in found}
                    if len(vers) == 1 and _statement_ok(sent, [x.span() for x in found]):
                        torch_stated.append((vers.pop(), n, _snippet(sent, 100)))
        if line.startswith("version") and i and any(LOCK_NAME_RE.match(x.strip()) for x in lines[max(0, i - 2):i]):
            m = LOCK_VERSION_RE.match(line)
            if m:
                transcripts.append(_torch_row(m.group(1), f"{source} line {n} (lock file: name \"torch\", {line})"))
        if "download.pytorch.org/whl/" in line and INSTALL_CTX_RE.search(line) and not _suggested(lines, i):
            for um in INDEX_URL_RE.finditer(line):
                index.append((um.group(2), bool(um.group(1) == "nightly/" or " --pre" in line), n, um.group(0)))
    out: list[Row] = []
    if len({_mm(v) for v, _, _ in rocm_stated}) == 1:  # one release stated, however often
        v, n, words = rocm_stated[0]
        out.append(row("runtimes", f"{source} line {n} ({STATED}: {words})", vendor="amd", name="rocm", version=v,
                       path="/opt/rocm", origin="pasted"))
    seen_multi: set[str] = set()
    for r in multi:  # one row per release, however many of its packages are listed
        if r.get("version") not in seen_multi:
            seen_multi.add(str(r.get("version")))
            out.append(r)
    out.extend(transcripts)
    failed = bool(INSTALL_FAILED_RE.search(text))  # pip found nothing to install: the command states no build
    if len({_mm(v) for v, _, _ in build_stated}) == 1 and not failed:
        v, n, words = build_stated[0]
        out.append(_torch_row("", f"{source} line {n} ({BUILD_STATED}: {words})", hip=v))
    if len({v for v, _, _ in torch_stated}) == 1 and not failed:
        v, n, words = torch_stated[0]
        out.append(_torch_row(v, f"{source} line {n} ({STATED}: {words})"))
    if len({v for v, _, _, _ in index}) == 1 and not failed:
        v, nightly, n, url = index[0]
        r = _torch_row("", f"{source} line {n} ({INDEX} {url}: every wheel there is built for ROCm {v})", hip=v)
        if nightly:
            r = Row(r.table, {**r.values, "channel": "nightly"}, r.source)
        out.append(r)
    return out


def _mm(v: str) -> str:
    return ".".join(v.split(".")[:2])


def is_stated(r: Row) -> bool:
    return f"({STATED}:" in r.source


def is_index(r: Row) -> bool:
    """The weakest rows: an install index, or a build's ROCm release said in words (no version of torch known)."""
    return f"({INDEX} " in r.source or f"({BUILD_STATED}:" in r.source or (
        r.table == "framework_builds" and f"({CONFIG_SHOW}:" in r.source)


def weakest_first_dropped(rows: list[Row]) -> list[Row]:
    """Drop the stated and index rows that a tool's output in the same text says more exactly: any system ROCm or HIP
    release a tool printed outranks a stated ROCm release; a torch version printed by a tool outranks a stated one,
    and any torch version outranks an index."""
    def amd_rt(r: Row) -> bool:
        return (r.table == "runtimes" and r.get("vendor") == "amd" and r.get("name") in ("rocm", "hip-runtime")
                and r.get("origin") in (None, "", "system", "pasted"))

    def torch(r: Row) -> bool:
        return r.table == "framework_builds" and r.get("name") == "torch"

    tool_rocm = any(amd_rt(r) and not is_stated(r) for r in rows)
    tool_torch = any(torch(r) and not is_stated(r) and not is_index(r) for r in rows)
    stated_torch = any(torch(r) and is_stated(r) for r in rows)
    out = []
    for r in rows:
        if amd_rt(r) and is_stated(r) and tool_rocm:
            continue
        if torch(r) and is_stated(r) and tool_torch:
            continue
        if torch(r) and is_index(r) and (tool_torch or stated_torch):
            continue
        out.append(r)
    return out


_ANY = re.compile(r"(?i:rocm)(?:™|®)?(?:[ \t]+(?:version|release|install\w*|stack|runtime|sdk|is)){0,3}[ \t]*(?:[:=][ \t]*)?v?\d+\.\d"
                  r"|(?i:rocm)[ \t]*の?[ \t]*(?:版本|バージョン)"
                  r"|amdgpu-install|download\.pytorch\.org/whl/|^[ \t]*PyTorch built with:"
                  r"|(?i:torch)[^\n]{0,80}\+[ \t]*rocm\d|Requirement already satisfied: (?:py)?torch|^[ \t]*\+[ \t]+torch=="
                  r"|(?:Installing|Updating|Downgrading)[ \t]+torch[ \t]+\(|ROCM_VERSION|ROCm version: \(\d"
                  r"|^version[ \t]*=[ \t]*\"\d[^\"\n]{0,40}\+rocm|torch\.version\.hip\b[^\n]{0,12}\d\.\d"
                  r"|^\|[ \t]*(?:\*\*)?(?:AMD[ \t]+)?(?i:rocm)|(?:rocm-[a-z-]+|hip-runtime-amd)\d+\.\d+\.\d", re.M)


def has_prose(text: str) -> bool:
    return bool(_ANY.search(text))
