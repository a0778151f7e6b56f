"""Add collected incident cases to bench/incidents-new, split by thread URL.

Usage: python3 bench/incidents-new/ingest.py BATCH [...]

A batch is a YAML list of cases in the case format of ../shared/benchmarks/incidents/CASE_FORMAT.md without
`id` (BATCH.yaml), or the same in a plain block form that needs no YAML quoting (any other name):

    @@ SOURCE-URL | PLATFORM | GPU or null | CAUSE | COMPONENT | CONFIDENCE
    --log
    verbatim lines ...
    --env                 (optional)
    verbatim lines ...
    --detail / --fix / --evidence
    one sentence each

 Each case goes to tuning/ or frozen/ by its `source` URL alone:

    half = "tuning" if sha256(source.encode()).digest()[0] % 2 == 0 else "frozen"

and gets the next free id of that half (new-tNNNN / new-fNNNN). A source that is already a case here, in
../shared/benchmarks/incidents/dev or in bench/incidents-heldout is refused (not new), as is a duplicate
within the batch. Nothing here runs gpuvet.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OLD_DIRS = (ROOT.parent / "shared" / "benchmarks" / "incidents" / "dev", ROOT / "bench" / "incidents-heldout",
            Path("/work/shared/benchmarks/incidents/dev"))
ORDER = ("id", "source", "platform", "gpu", "inputs", "label", "confidence")
LABEL_ORDER = ("cause", "component", "detail", "fix", "evidence_in_inputs")


def half_of(source: str) -> str:
    return "tuning" if hashlib.sha256(source.encode("utf-8")).digest()[0] % 2 == 0 else "frozen"


def norm(url: str) -> str:
    return url.strip().rstrip("/").split("#")[0]


def sources_in(d: Path) -> set[str]:
    out = set()
    for p in d.glob("*.yaml"):
        c = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        if c.get("source"):
            out.add(norm(c["source"]))
    return out


class Literal(str):
    pass


def _lit(dumper, s):
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style="|")


def _fold(dumper, s):
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=">" if len(s) > 100 else None)


class Dumper(yaml.SafeDumper):
    pass


class Folded(str):
    pass


Dumper.add_representer(Literal, _lit)
Dumper.add_representer(Folded, _fold)


def render(case: dict) -> str:
    inputs = {k: Literal(v.rstrip("\n") + "\n") for k, v in case["inputs"].items() if v}
    label = {k: (Folded(" ".join(str(case["label"][k]).split())) if k in ("detail", "fix", "evidence_in_inputs")
                 else case["label"][k]) for k in LABEL_ORDER if k in case["label"]}
    out = {k: case[k] for k in ORDER if k in case}
    out["inputs"], out["label"] = inputs, label
    return yaml.dump(out, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=110)


def parse_blocks(text: str) -> list[dict]:
    cases, cur, key = [], None, None
    for line in text.splitlines():
        if line.startswith("@@ "):
            src, platform, gpu, cause, comp, conf = [f.strip() for f in line[3:].split(" | ")]
            cur = {"source": src, "platform": platform, "gpu": None if gpu == "null" else gpu,
                   "inputs": {}, "label": {"cause": cause, "component": comp}, "confidence": conf}
            cases.append(cur)
            key = None
        elif line.rstrip() in ("--log", "--env", "--detail", "--fix", "--evidence"):
            key = line.strip()[2:]
            slot = cur["inputs"] if key in ("log", "env") else cur["label"]
            slot[{"evidence": "evidence_in_inputs"}.get(key, key)] = ""
        elif cur is not None and key is not None:
            slot = cur["inputs"] if key in ("log", "env") else cur["label"]
            k = {"evidence": "evidence_in_inputs"}.get(key, key)
            slot[k] += line + "\n"
    for c in cases:
        for k in ("log", "env"):
            if k in c["inputs"]:
                c["inputs"][k] = c["inputs"][k].strip("\n") + "\n"
                if not c["inputs"][k].strip():
                    del c["inputs"][k]
        for k in ("detail", "fix", "evidence_in_inputs"):
            c["label"][k] = " ".join(c["label"].get(k, "").split())
    return cases


def load_batch(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    return (yaml.safe_load(text) or []) if path.suffix == ".yaml" else parse_blocks(text)


def main(argv: list[str]) -> int:
    old = set()
    for d in OLD_DIRS:
        if d.is_dir():
            old |= sources_in(d)
    mine = sources_in(HERE / "tuning") | sources_in(HERE / "frozen")
    added = {"tuning": 0, "frozen": 0}
    for batch in argv:
        for case in load_batch(Path(batch)):
            src = norm(case["source"])
            if src in old:
                print(f"skip (dev/heldout): {src}")
                continue
            if src in mine:
                print(f"skip (already here): {src}")
                continue
            case["source"] = src
            half = half_of(src)
            d = HERE / half
            n = len(list(d.glob("new-*.yaml"))) + 1
            cid = f"new-{half[0]}{n:04d}"
            case = {"id": cid, **case}
            text = render(case)
            yaml.safe_load(text)  # round-trips
            (d / f"{cid}.yaml").write_text(text, encoding="utf-8")
            mine.add(src)
            added[half] += 1
    print("added", added, "total", {h: len(list((HERE / h).glob("new-*.yaml"))) for h in ("tuning", "frozen")})
    return 0




def stats() -> str:
    """Markdown tables of the counts per half, by platform and by cause (for README.md)."""
    from collections import Counter
    rows = {h: [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted((HERE / h).glob("new-*.yaml"))]
            for h in ("tuning", "frozen")}
    out = ["| | tuning | frozen | all |", "|---|---:|---:|---:|"]
    plat = {h: Counter(c["platform"] for c in cs) for h, cs in rows.items()}
    for k in ("rocm", "cuda"):
        out.append(f"| {k} | {plat['tuning'][k]} | {plat['frozen'][k]} | {plat['tuning'][k] + plat['frozen'][k]} |")
    n = {h: len(cs) for h, cs in rows.items()}
    out.append(f"| **cases** | {n['tuning']} | {n['frozen']} | {n['tuning'] + n['frozen']} |")
    out += ["", "| cause | tuning | frozen | all |", "|---|---:|---:|---:|"]
    cause = {h: Counter(c["label"]["cause"] for c in cs) for h, cs in rows.items()}
    for k in sorted(set(cause["tuning"]) | set(cause["frozen"])):
        out.append(f"| {k} | {cause['tuning'][k]} | {cause['frozen'][k]} | {cause['tuning'][k] + cause['frozen'][k]} |")
    conf = Counter(c["confidence"] for cs in rows.values() for c in cs)
    out += ["", f"confidence: {conf['confirmed']} confirmed, {conf['likely']} likely"]
    return "\n".join(out)


if __name__ == "__main__":
    if sys.argv[1:] == ["--stats"]:
        print(stats())
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
