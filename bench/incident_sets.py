"""One implementation of the gathered incident sets' ingest (bench/incidents-new2, bench/incidents-new3, ...).

Each set's ``ingest.py`` is a thin wrapper that builds an :class:`IncidentSet` (its directory, its id prefix such as
``n3``, the collectors behind its tags, the earlier sets whose threads count as used) and exposes its methods as the
module's functions, so the command line and the tests stay what they were:

    python3 bench/incidents-newN/ingest.py --tag r|c BATCH [...]    # add cases, split by thread URL
    python3 bench/incidents-newN/ingest.py --stats [--write]        # count tables (--write: into README.md)

A batch is the YAML list or the plain block form (``@@ SOURCE-URL | PLATFORM | ...`` headers) documented at the top of
bench/incidents-new/ingest.py, whose parser, renderer and split rule this reuses unchanged.

Each case goes to tuning/ or frozen/ by its `source` URL alone, the rule of bench/incidents-new:

    half = "tuning" if sha256(source.encode()).digest()[0] % 2 == 0 else "frozen"

and gets the next free id of its tag and half: <prefix><tag>-tNNNN / <prefix><tag>-fNNNN.

Refused (not added, one line each): a thread already used anywhere in the project -- a `source` of an earlier set,
any URL written in tests/fixtures, or a case already in this set -- compared after folding renamed orgs/repos and
issues/N vs pull/N (one thread, one key); and a case that breaks the case format (unknown cause/component/confidence,
empty or over-long log, short detail/fix, a --tag r case whose platform is not rocm or a --tag c case whose platform
is).  Exit status 1 if any case was refused for its format, else 0.  Nothing here runs gpuvet.
"""
from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "src"))

from gpuvet.model.taxonomy import COMPONENTS, LABELS  # noqa: E402

_spec = importlib.util.spec_from_file_location("incidents_new_ingest", BENCH / "incidents-new" / "ingest.py")
assert _spec is not None and _spec.loader is not None
old = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(old)
half_of, norm, render, load_batch = old.half_of, old.norm, old.render, old.load_batch

HALVES = ("tuning", "frozen")
TAGS = ("r", "c", "a", "b", "d")  # r, a and b: ROCm collectors (a: a second one, day 6; b: a third, day 8), c and d: everything else
ROCM_TAGS = ("r", "a", "b")
PLATFORMS = ("rocm", "cuda")
SHARED = ROOT.parent / "shared"
FIXTURES = ROOT / "tests" / "fixtures"
URL_RE = re.compile(r"https?://[^\s\"'<>)\]]+")


def halves_of(name: str) -> tuple[Path, ...]:
    return tuple(BENCH / name / h for h in HALVES)


# the sets gathered before any bench/incidents-newN: every `source:` there is a used thread
BASE_DIRS: dict[str, tuple[Path, ...]] = {
    "dev": (SHARED / "benchmarks" / "incidents" / "dev", Path("/work/shared/benchmarks/incidents/dev")),
    "heldout": (BENCH / "incidents-heldout",),
    "incidents-new": halves_of("incidents-new"),
}

# one GitHub thread can be cited under renamed orgs/repos (RadeonOpenCompute/ROCm -> ROCm/ROCm ->
# ROCm/legacy-rocm-build, ROCmSoftwarePlatform/*, ROCm-Developer-Tools/* -> ROCm/*) and as issues/N or pull/N
_ALIASES = (("radeonopencompute/rocm/", "rocm/legacy-rocm-build/"), ("/rocm/rocm/", "/rocm/legacy-rocm-build/"),
            ("rocmsoftwareplatform/", "rocm/"), ("rocm-developer-tools/", "rocm/"), ("radeonopencompute/", "rocm/"),
            # and the non-AMD projects that moved (old name -> the name GitHub redirects to)
            ("/microsoft/deepspeed/", "/deepspeedai/deepspeed/"),
            ("/microsoft/deepspeedexamples/", "/deepspeedai/deepspeedexamples/"),
            ("/openai/triton/", "/triton-lang/triton/"), ("/ggerganov/llama.cpp/", "/ggml-org/llama.cpp/"),
            ("/ggerganov/whisper.cpp/", "/ggml-org/whisper.cpp/"), ("/jmorganca/ollama/", "/ollama/ollama/"),
            ("/timdettmers/bitsandbytes/", "/bitsandbytes-foundation/bitsandbytes/"), ("/google/jax/", "/jax-ml/jax/"),
            ("/hazyresearch/flash-attention/", "/dao-ailab/flash-attention/"))


def thread_key(url: str) -> str:
    """One key per thread: lower case, no fragment/query/trailing slash, org renames folded, issues|pull -> thread."""
    key = url.strip().split("#")[0].split("?")[0].rstrip("/.,;").lower()
    key = re.sub(r"^http://", "https://", key).replace("://www.", "://")
    for a, b in _ALIASES:
        key = key.replace(a, b)
    key = re.sub(r"/(?:issues|pull|discussions)/(\d+)(?:/.*)?$", r"/thread/\1", key)
    return key


@dataclass(frozen=True)
class IncidentSet:
    """A gathered set: bench/<name>/{tuning,frozen}/<prefix><tag>-<t|f>NNNN.yaml, README.md, batches/."""

    name: str  # "incidents-new3"
    prefix: str  # "n3"
    collectors: dict[str, str]  # tag -> who collected it ("r": "g3r")
    earlier: dict[str, tuple[Path, ...]]  # where -> dirs whose cases' threads are used

    @property
    def here(self) -> Path:
        return BENCH / self.name

    def used_threads(self) -> dict[str, str]:
        """thread key -> where it is already used (the earlier sets, tests/fixtures)."""
        out: dict[str, str] = {}
        for where, dirs in self.earlier.items():
            for d in dirs:
                for p in sorted(d.glob("*.yaml")) if d.is_dir() else ():
                    c = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
                    if c.get("source"):
                        out.setdefault(thread_key(c["source"]), f"{where}/{p.name}")
        if FIXTURES.is_dir():
            for p in sorted(FIXTURES.rglob("*")):
                if p.is_file() and p.stat().st_size < 4_000_000:
                    try:
                        text = p.read_text(encoding="utf-8")
                    except (UnicodeDecodeError, OSError):
                        continue
                    for u in URL_RE.findall(text):
                        out.setdefault(thread_key(u), f"tests/fixtures/{p.relative_to(FIXTURES)}")
        return out

    def cases_here(self, dest: Path | None = None) -> list[tuple[Path, dict]]:
        dest = dest or self.here
        return [(p, yaml.safe_load(p.read_text(encoding="utf-8"))) for h in HALVES
                for p in sorted((dest / h).glob(f"{self.prefix}*.yaml"))]

    def ingest(self, batches: list[Path], tag: str, dest: Path | None = None) -> tuple[dict[str, int], list[str]]:
        """Add the batches' cases under dest/{tuning,frozen}; returns (added per half, refusal lines)."""
        dest = dest or self.here
        used = self.used_threads()
        mine = {thread_key(c["source"]): p.stem for p, c in self.cases_here(dest)}
        added, refused = {h: 0 for h in HALVES}, []
        for batch in batches:
            for case in load_batch(batch):
                src = norm(str(case.get("source") or ""))
                key = thread_key(src)
                if key in used:
                    refused.append(f"not new (used in {used[key]}): {src}")
                    continue
                if key in mine:
                    refused.append(f"not new (already {mine[key]}): {src}")
                    continue
                problem = format_problem(case, tag)
                if problem:
                    refused.append(f"format ({problem}): {src}")
                    continue
                case["source"] = src
                half = half_of(src)
                d = dest / half
                d.mkdir(parents=True, exist_ok=True)
                n = len(list(d.glob(f"{self.prefix}{tag}-{half[0]}*.yaml"))) + 1
                cid = f"{self.prefix}{tag}-{half[0]}{n:04d}"
                case.pop("id", None)
                text = render({"id": cid, **case})
                yaml.safe_load(text)  # round-trips
                (d / f"{cid}.yaml").write_text(text, encoding="utf-8")
                mine[key] = cid
                added[half] += 1
        return added, refused

    def stats(self, dest: Path | None = None) -> str:
        """Markdown tables of the counts per half: by platform, by collector, by cause, by confidence."""
        rows = {h: [c for p, c in self.cases_here(dest) if p.parent.name == h] for h in HALVES}

        def table(title: str, key: Callable[[dict], Any], keys: list[str] | None = None) -> list[str]:
            cnt = {h: Counter(key(c) for c in rows[h]) for h in HALVES}
            ks = keys or sorted(set(cnt["tuning"]) | set(cnt["frozen"]))
            out = [f"| {title} | tuning | frozen | all |", "|---|---:|---:|---:|"]
            out += [f"| {k} | {cnt['tuning'][k]} | {cnt['frozen'][k]} | {cnt['tuning'][k] + cnt['frozen'][k]} |"
                    for k in ks]
            return out

        n = {h: len(rows[h]) for h in HALVES}
        who = {f"{self.prefix}{t}": f"{name} ({self.prefix}{t})" for t, name in self.collectors.items()}
        out = table("platform", lambda c: c["platform"])
        out.append(f"| **cases** | {n['tuning']} | {n['frozen']} | {n['tuning'] + n['frozen']} |")
        out += [""] + table("collector", lambda c: who[c["id"][:len(self.prefix) + 1]])
        out += [""] + table("cause", lambda c: c["label"]["cause"])
        out += [""] + table("confidence", lambda c: c["confidence"], ["confirmed", "likely"])
        return "\n".join(out)

    def write_stats(self, dest: Path | None = None) -> None:
        """Refresh README.md: the count tables, and each collector's query log (batches/queries-r.txt, -c.txt)."""
        dest = dest or self.here
        readme = dest / "README.md"
        text = _block(readme.read_text(encoding="utf-8"), "stats", self.stats(dest) + "\n")
        for tag in TAGS:
            log = dest / "batches" / f"queries-{tag}.txt"
            qs = [q.strip() for q in log.read_text(encoding="utf-8").splitlines() if q.strip()] if log.is_file() else []
            body = "".join(f"- {q}\n" for q in qs) + (f"\n{len(qs)} queries.\n" if qs else "")
            text = _block(text, f"queries-{tag}", body)
        readme.write_text(text, encoding="utf-8")

    def main(self, argv: list[str]) -> int:
        ap = argparse.ArgumentParser(prog="ingest.py", description=f"add incident batches to bench/{self.name}")
        ap.add_argument("--tag", choices=tuple(self.collectors), help=", ".join(
            f"{t}: {name}'s {'ROCm cases' if t in ROCM_TAGS else 'non-AMD cases'} ({self.prefix}{t}-*)"
            for t, name in self.collectors.items()))
        ap.add_argument("--stats", action="store_true", help="print the count tables")
        ap.add_argument("--write", action="store_true", help="with --stats: write them into README.md")
        ap.add_argument("batches", nargs="*", type=Path)
        a = ap.parse_args(argv)
        if a.stats:
            if a.write:
                self.write_stats()
            print(self.stats())
            return 0
        if not a.tag or not a.batches:
            print("ingest.py: give --tag r|c and at least one batch file (or --stats)", file=sys.stderr)
            return 2
        for b in a.batches:
            if not b.is_file():
                print(f"ingest.py: no batch file {b}", file=sys.stderr)
                return 2
        try:
            added, refused = self.ingest(a.batches, a.tag)
        except (ValueError, TypeError, KeyError, yaml.YAMLError) as e:  # a malformed @@ header or YAML batch
            print(f"ingest.py: cannot read the batch: {e}", file=sys.stderr)
            return 2
        for line in refused:
            print("refused", line)
        total = {h: len(list((self.here / h).glob(f"{self.prefix}*.yaml"))) for h in HALVES}
        print("added", added, "total", total)
        return 1 if any(line.startswith("format") for line in refused) else 0


def format_problem(case: dict, tag: str) -> str | None:
    """Why a case breaks the case format (CASE_FORMAT.md), or None."""
    lab, inputs = case.get("label") or {}, case.get("inputs") or {}
    if case.get("platform") not in PLATFORMS:
        return f"platform {case.get('platform')!r} not one of {PLATFORMS}"
    if (tag in ROCM_TAGS) != (case["platform"] == "rocm"):
        return f"--tag {tag} takes {'only' if tag in ROCM_TAGS else 'no'} rocm cases"
    if lab.get("cause") not in LABELS:
        return f"cause {lab.get('cause')!r} not in the taxonomy"
    if lab.get("component") not in COMPONENTS:
        return f"component {lab.get('component')!r} unknown"
    if case.get("confidence") not in ("confirmed", "likely"):
        return f"confidence {case.get('confidence')!r} is neither confirmed nor likely"
    if set(inputs) - {"log", "env"} or not (inputs.get("log") or "").strip():
        return "inputs need a log (and at most an env)"
    if not 1 <= len(inputs["log"].strip().splitlines()) <= 60:
        return "log is over 60 lines"
    for k in ("detail", "fix"):
        if len(str(lab.get(k) or "").strip()) < 10:
            return f"label.{k} missing or too short"
    if not re.fullmatch(r"https://[\w.-]+/\S+", norm(str(case.get("source") or ""))):
        return "source is not an https URL"
    return None


def _block(text: str, name: str, body: str) -> str:
    return re.sub(rf"(<!-- {name} -->\n).*?(<!-- /{name} -->)", lambda m: m.group(1) + body + m.group(2),
                  text, flags=re.S)
