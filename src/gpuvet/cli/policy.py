"""The settings, policy and output of a command, without Click: ``gpuvet check``'s fast path
(``cli.check_run``) runs through these without importing Click (about 53 M instructions of start-up);
``cli.common`` re-exports them for the other commands."""
from __future__ import annotations

from gpuvet.app.env import Environment
from gpuvet.model import Report, Severity

__all__ = ["known_codes", "validate_codes", "resolve_settings", "make_policy", "emit"]


def known_codes(with_signatures: bool = True) -> list[str]:
    from gpuvet.app.rules import all_codes

    return all_codes(with_signatures)


def validate_codes(option: str, codes, prefix: bool) -> None:
    """A code (or, for --select/--ignore, a code prefix) that matches no rule is a usage error naming
    the closest codes: a typo must never run zero checks and report a clean score."""
    if not codes:
        return
    import difflib

    from gpuvet.model.errors import UsageError

    checks_only = known_codes(False)
    allc = None
    for code in codes:
        c = code.upper()
        if any(k.startswith(c) if prefix else k == c for k in checks_only):
            continue
        allc = allc or known_codes(True)
        if any(k.startswith(c) if prefix else k == c for k in allc):
            continue
        close = difflib.get_close_matches(c, allc, n=3, cutoff=0.5)
        hint = f"; closest: {', '.join(close)}" if close else "; `gpuvet rules` lists them"
        raise UsageError(f"{option} {code}: no rule has this code{'' if not prefix else ' or prefix'}{hint}")


def resolve_settings(env: Environment, select, ignore, ack, fail_on, python=None) -> dict:
    """The settings of this run, each with its origin (command line > environment > config > default)."""
    from gpuvet.app import config as cfgmod
    from gpuvet.checks.registry import resolve  # renamed codes redirect

    acks: dict[str, str] = {}
    for item in ack:
        code, sep, reason = item.partition("=")
        if not sep or not reason.strip():
            import click  # only this error needs it: the check fast path never imports click

            raise click.BadParameter(f"--ack needs CODE=REASON, got {item!r}", param_hint="--ack")
        acks[resolve(code.strip())] = reason.strip()
    cfg = cfgmod.load(env.cwd, env.environ)
    resolved = cfgmod.resolve(cfg, env.environ, select=tuple(resolve(s) for s in select),
                              ignore=tuple(resolve(s) for s in ignore), ack=acks, fail_on=fail_on, python=python)
    resolved["config"] = cfgmod.Setting(cfg.path, "found from " + env.cwd if cfg.path else "none found")
    for key, opt, prefix in (("select", "--select", True), ("ignore", "--ignore", True), ("ack", "--ack", False)):
        st = resolved[key]
        where = opt if st.origin == "command line" else f"{key} in {st.origin}"
        validate_codes(where, list(st.value), prefix)
    return resolved


def make_policy(select, ignore, ack, fail_on, env: Environment | None = None, python=None):
    """The user's policy from the command line and the configuration file (see app.config)."""
    from gpuvet.app.engine import Policy

    s = resolve_settings(env or Environment(), select, ignore, ack, fail_on, python)
    fo = s["fail-on"].value
    sev = Severity.CRITICAL + 1 if fo == "never" else Severity.parse(fo)
    pol = Policy(select=tuple(s["select"].value), ignore=tuple(s["ignore"].value),
                 acknowledged=dict(s["ack"].value), fail_on=sev)  # type: ignore[arg-type]
    # the interpreter from the command line or the file; GPUVET_PYTHON is read (and named in errors)
    # by the use case itself
    py = s["python"]
    pol.python = py.value if not py.origin.startswith("environment") else python  # type: ignore[attr-defined]
    return pol


def emit(report: Report, env: Environment, fmt: str, output: str | None, verbose: bool = False,
         stack: bool = False, quiet: bool = False, statistics: bool = False) -> None:
    from gpuvet.render import render

    color = env.color and output is None and fmt == "terminal"
    if fmt == "terminal" and (quiet or statistics):
        from gpuvet.render.terminal import render_quiet, render_statistics

        text = (render_quiet(report) if quiet else "") + (render_statistics(report) if statistics else "")
    else:
        text = render(report, fmt, color=color, width=env.width if output is None else 100, verbose=verbose,
                      stack=stack)
    if output:
        from gpuvet.app.output import write_output

        write_output(output, text)  # atomic over regular files (mode kept); devices, FIFOs, links written straight
    else:
        env.stdout.write(text)
