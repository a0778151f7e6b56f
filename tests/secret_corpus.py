"""A corpus of secrets in real formats, and helpers to plant them and to grep for them.

Reusable by any test that guards an output (commands, formats, snapshots, bundles)::

    from secret_corpus import CORPUS, secret_env, secret_log, secret_argv, leaks, leaks_in_tree

    env = secret_env()                       # secret-named variables, to put in an environment
    log = secret_log()                       # a log that prints every secret in its usual context
    assert leaks(text) == []                 # no secret value appears in ``text``
    assert leaks_in_tree(tmp_path) == []     # ... nor in any file under a directory

The values have the exact shapes of the real formats (prefixes, lengths, alphabets) but are generated
here from a fixed seed: none is a working credential.
"""
from __future__ import annotations

import os
import random
import string
from dataclasses import dataclass

_rng = random.Random(7)
_AN = string.ascii_letters + string.digits


def _r(n: int, alphabet: str = _AN) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


@dataclass(frozen=True)
class Secret:
    kind: str
    value: str  # what must never appear in an output
    context: str  # how it shows up in a log line ({v} is the value)


HF = "hf_" + _r(34)
GH = "ghp_" + _r(36)
GH_PAT = "github_pat_" + _r(22) + "_" + _r(59)
OPENAI = "sk-proj-" + _r(48, _AN + "_-")
ANTHROPIC = "sk-ant-api03-" + _r(93, _AN + "_-") + "AA"
AWS_ID = "AKIA" + _r(16, string.ascii_uppercase + string.digits)
AWS_SECRET = _r(40, _AN + "/+")
WANDB = _r(40, "0123456789abcdef")
SLACK_HOOK_PATH = "T" + _r(8, string.ascii_uppercase + string.digits) + "/B" + _r(10, string.ascii_uppercase + string.digits) + "/" + _r(24)
SLACK_BOT = "xoxb-" + _r(12, string.digits) + "-" + _r(13, string.digits) + "-" + _r(24)
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6ImdwdXZldCJ9." + _r(43, _AN + "_-")
NGC = "nvapi-" + _r(64, _AN + "_-")
PIP_PASS = "pIp" + _r(17)
DB_PASS = "Db" + _r(18)
MY_PASSWORD = "hunter2-" + _r(10)
BEARER = _r(40, _AN + "._-")
GITLAB = "glpat-" + _r(20, _AN + "_-")
PEM_BODY = _r(64, _AN + "+/")
VLLM_KEY = _r(32)
NGC_KEY = _r(84)

CORPUS: tuple[Secret, ...] = (
    Secret("huggingface", HF, "huggingface_hub: using token {v} from HF_TOKEN"),
    Secret("github", GH, "remote: git clone https://{v}@github.com/org/private-repo.git"),
    Secret("github-pat", GH_PAT, "export GITHUB_TOKEN={v}"),
    Secret("openai", OPENAI, "openai.AuthenticationError: Incorrect API key provided: {v}"),
    Secret("anthropic", ANTHROPIC, "anthropic client init: api_key='{v}'"),
    Secret("aws-id", AWS_ID, "botocore: Found credentials: aws_access_key_id={v}"),
    Secret("aws-secret", AWS_SECRET, "aws_secret_access_key = {v}"),
    Secret("wandb", WANDB, "WANDB_API_KEY={v} wandb login"),
    Secret("slack-webhook", SLACK_HOOK_PATH, "POST https://hooks.slack.com/services/{v} failed: 404"),
    Secret("slack-bot", SLACK_BOT, "slack_sdk: token={v}"),
    Secret("jwt", JWT, "Authorization header rejected, token {v} expired"),
    Secret("ngc", NGC, "Error: docker login nvcr.io -u $oauthtoken -p {v}"),
    Secret("pip-index", PIP_PASS, "Looking in indexes: https://builder:{v}@pypi.internal.example.com/simple"),
    Secret("database-url", DB_PASS, "sqlalchemy.exc.OperationalError: postgresql://train:{v}@db:5432/runs"),
    Secret("password-assign", MY_PASSWORD, "MY_PASSWORD={v}"),
    Secret("bearer", BEARER, "curl -H 'Authorization: Bearer {v}' https://triton.internal/v2/models"),
    Secret("gitlab", GITLAB, "fatal: Authentication failed for https://oauth2:{v}@gitlab.example.com/x.git"),
    Secret("pem", PEM_BODY, "-----BEGIN RSA PRIVATE KEY-----\n{v}\n-----END RSA PRIVATE KEY-----"),
)

# Secret-named variables as they sit in an environment (the names have harmless-looking prefixes too).
ENV: dict[str, str] = {
    "HF_TOKEN": HF,
    "GITHUB_TOKEN": GH_PAT,
    "OPENAI_API_KEY": OPENAI,
    "ANTHROPIC_API_KEY": ANTHROPIC,
    "AWS_ACCESS_KEY_ID": AWS_ID,
    "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
    "WANDB_API_KEY": WANDB,
    "NVIDIA_NGC_KEY": NGC_KEY,
    "VLLM_HF_KEY": VLLM_KEY,
    "TRITON_REMOTE": "Bearer " + BEARER,
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/" + SLACK_HOOK_PATH,
    "PIP_INDEX_URL": f"https://builder:{PIP_PASS}@pypi.internal.example.com/simple",
    "DATABASE_URL": f"postgresql://train:{DB_PASS}@db:5432/runs",
    "MY_PASSWORD": MY_PASSWORD,
}

# Values that must stay visible next to the secrets.
USEFUL_ENV: dict[str, str] = {
    "CUDA_VISIBLE_DEVICES": "0,1",
    "HSA_OVERRIDE_GFX_VERSION": "10.3.0",
    "NCCL_SOCKET_IFNAME": "eth0",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
}

VALUES: tuple[str, ...] = tuple(dict.fromkeys([s.value for s in CORPUS] + [v for v in ENV.values()
                                                                       if not v.startswith(("https://", "postgresql://", "Bearer "))]))


def secret_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: a copy of os.environ) with every secret-named variable and the useful ones."""
    env = dict(os.environ if base is None else base)
    env.update(ENV)
    env.update(USEFUL_ENV)
    return env


def secret_lines() -> list[str]:
    return [s.context.format(v=s.value) for s in CORPUS]


def secret_log(error: str = "RuntimeError: CUDA error: no kernel image is available for execution on the device") -> str:
    """A failing job's log that prints every corpus secret in its usual context, then a real GPU error."""
    return "\n".join(["Starting training run", *secret_lines(),
                      "Traceback (most recent call last):",
                      '  File "train.py", line 12, in <module>',
                      "    model.cuda()", error, ""])


def secret_argv() -> list[str]:
    """Command-line arguments carrying secrets as people pass them."""
    return [f"--token={HF}", "--api-key", OPENAI, f"--hub_token={GH}", f"WANDB_API_KEY={WANDB}",
            f"--index-url=https://builder:{PIP_PASS}@pypi.internal.example.com/simple"]


def leaks(text: str | bytes) -> list[str]:
    """The corpus kinds whose value appears in ``text`` (empty: no leak)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    found = [s.kind for s in CORPUS if s.value in text]
    found += [f"env:{k}" for k, v in ENV.items() if v in text and not v.startswith(("https://", "postgresql://", "Bearer "))]
    return sorted(set(found))


def leaks_in_tree(root: str | os.PathLike) -> dict[str, list[str]]:
    """{path: kinds} for every file under ``root`` containing a corpus value."""
    out: dict[str, list[str]] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            try:
                with open(p, "rb") as fh:
                    found = leaks(fh.read())
            except OSError:
                continue
            if found:
                out[p] = found
    return out
