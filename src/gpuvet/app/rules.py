"""``rules`` and ``rule CODE``: every check's documentation (from its docstring) and every log signature,
as a Report whose ``extra`` is the document the renderers print."""
from __future__ import annotations

from typing import Any

from gpuvet.model import Report
from gpuvet.model.errors import UsageError


def rule_dict(chk: Any) -> dict[str, Any]:
    return {"code": chk.code, "name": chk.name, "severity": chk.severity.name.lower(), "tables": list(chk.tables),
            "cause": chk.cause, "component": chk.component, "summary": chk.summary, "sections": chk.sections()}


def signatures() -> list[dict[str, Any]]:
    try:
        from gpuvet import kb as kbmod

        return list(kbmod.load().table("signatures"))
    except Exception:  # a missing or broken table must not hide the rules
        return []


def sig_id(s: dict[str, Any]) -> str:
    return str(s.get("id") or s.get("code") or s.get("name") or "?")


def sig_summary(s: dict[str, Any]) -> str:
    return str(s.get("title") or s.get("summary") or s.get("description") or s.get("cause") or "")


def list_rules(env: Any = None) -> Report:
    """Every check and every log signature (``document``: {"checks": [...], "signatures": [...]})."""
    from gpuvet.checks.registry import all_checks

    sigs = signatures()
    doc = {"checks": [rule_dict(c) for c in all_checks()],
           "signatures": [{"id": sig_id(s), "summary": sig_summary(s), "cause": s.get("cause", "")} for s in sigs]}
    return Report(command="rules", document=doc)


def show_rule(code: str, env: Any = None) -> Report:
    """One check (by code or name) or log signature; ``meta["kind"]`` says which, ``document`` is its document."""
    from gpuvet.checks.registry import get

    chk = get(code)
    if chk is not None:
        return Report(command="rule", meta={"kind": "check"}, document=rule_dict(chk))
    from gpuvet.validate.findings import rule_doc

    val = rule_doc(code)
    if val is not None:  # validate / bench / scan findings
        return Report(command="rule", meta={"kind": "check"}, document=val)
    sig = next((s for s in signatures() if sig_id(s).lower() == code.lower()), None)
    if sig is None:
        raise UsageError(f"no check or signature {code!r} (gpuvet rules lists them)")
    return Report(command="rule", meta={"kind": "signature"}, document=dict(sig))


def kb_info(env: Any = None) -> Report:
    """KB version, date and what each table covers (``document``: {"version", "date", "tables"})."""
    from gpuvet import kb as kbmod
    from gpuvet.kb import query as q

    k = kbmod.load()
    return Report(command="kb-info", document={"version": k.version, "date": k.date, "tables": q.coverage(k)})


def all_codes(with_signatures: bool = True) -> list[str]:
    """Every rule code a finding can carry: the checks', the history diff's and (when asked, as it
    loads the KB) the log signatures'.  --select/--ignore/--ack are validated against these."""
    from gpuvet.checks.registry import all_checks

    codes = [c.code for c in all_checks()]
    try:
        from gpuvet.history.diff import CATEGORIES

        codes += [c[1] for c in CATEGORIES]
    except Exception:  # the history layer is optional for the codes of a check  # noqa: BLE001
        pass
    from gpuvet.validate.findings import VAL_CODES  # validate / bench / scan findings

    codes += list(VAL_CODES)
    if with_signatures:
        codes += [sig_id(s) for s in signatures()]
    return sorted(set(codes))
