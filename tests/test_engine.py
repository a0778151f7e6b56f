"""Engine: unknown is never passed, policy is applied outside rules, score and exit codes."""
import time

from gpuvet.checks.base import Fail, check, parse_doc
from gpuvet.app.engine import Policy, build_report, exit_code, run_checks, score
from gpuvet.model import ExitCode, Facts, Outcome, ProbeError, Severity, row
from gpuvet.probes.base import Probe, ProbeFailed, run_probes
from gpuvet.probes.system import FakeSystem


@check(code="DRV999", name="test-rule", severity="error", tables=("drivers",), cause="driver-too-old", component="driver")
def rule(ctx):
    """What it does:
    Fires on driver 1.0.

    Why is this bad?
    Test.

    Example:
    x

    Fix:
    y

    References:
    z
    """
    for r in ctx.facts.table("drivers"):
        if r["version"] == "1.0":
            yield Fail("old driver")


def test_unknown_when_probe_failed_or_not_collected():
    f = Facts()
    f.fail(ProbeError("nvidia", ("drivers",), "nvidia-smi timed out", "timeout"))
    [res] = run_checks(f, [rule], None)
    assert res.outcome is Outcome.UNKNOWN and "timed out" in res.title
    [res] = run_checks(Facts(), [rule], None)
    assert res.outcome is Outcome.UNKNOWN
    f = Facts()
    f.mark("drivers")
    [res] = run_checks(f, [rule], None)
    assert res.outcome is Outcome.PASSED  # looked, nothing there: rule decides


def test_policy_select_ignore_ack_severity():
    f = Facts()
    f.add([row("drivers", "t", vendor="nvidia", version="1.0")])
    assert run_checks(f, [rule], None, Policy(ignore=("DRV",))) == []
    assert run_checks(f, [rule], None, Policy(select=("ENV",))) == []
    [res] = run_checks(f, [rule], None, Policy(acknowledged={"DRV999": "known, upgrading in Q3"},
                                              severity={"DRV999": Severity.WARNING}))
    assert res.acknowledged and res.severity is Severity.WARNING
    rep = build_report("check", f, [res], None)
    assert rep.score == 100 and exit_code(rep, Severity.WARNING) is ExitCode.OK
    [res] = run_checks(f, [rule], None)
    rep = build_report("check", f, [res], None)
    assert rep.score == 80 and exit_code(rep, Severity.ERROR) is ExitCode.FINDINGS
    assert exit_code(rep, Severity.CRITICAL) is ExitCode.OK


def test_score_caps_unknowns():
    from gpuvet.model import Finding
    unknowns = [Finding(f"X{i}", "n", Severity.ERROR, Outcome.UNKNOWN, "t") for i in range(20)]
    sc, ded = score(unknowns)
    assert sc == 90 and ded[-1].code == "unknown"


def test_docstring_sections():
    s = parse_doc(rule.doc)
    assert s["What it does"] == "Fires on driver 1.0." and s["Fix"] == "y" and set(s) == {
        "What it does", "Why is this bad?", "Example", "Fix", "References"}


def test_runner_turns_failures_and_hangs_into_errors():
    def ok(system):
        return [row("drivers", "x", vendor="amd", version="6.7.0")]

    def boom(system):
        raise RuntimeError("parse bug")

    def clean_fail(system):
        raise ProbeFailed("rocminfo: ROCk module is NOT loaded", "error")

    def hang(system):
        time.sleep(5)
        return []

    t0 = time.monotonic()
    f = run_probes(FakeSystem(), [Probe("ok", ("drivers",), ok), Probe("boom", ("runtimes",), boom),
                                  Probe("clean", ("gpu_devices",), clean_fail), Probe("hang", ("compilers",), hang)],
                   deadline=0.5)
    assert time.monotonic() - t0 < 2
    assert f.status("drivers") == "ok"
    assert f.status("runtimes") == "error" and "parse bug" in f.table_errors("runtimes")[0].message
    assert f.table_errors("gpu_devices")[0].message.startswith("rocminfo")
    assert f.table_errors("compilers")[0].kind == "timeout"


def test_skip_becomes_unknown_when_a_needed_probe_failed():
    from gpuvet.checks.base import Skip

    @check(code="EXT998", name="needs-nvcc", severity="error", tables=("compilers",), cause="toolchain",
           component="extension")
    def needs_nvcc(ctx):
        """What it does:
        x
        """
        if not ctx.facts.where("compilers", name="nvcc"):
            yield Skip("no nvcc found")

    f = Facts()
    f.add([row("compilers", "gcc", name="gcc", version="12.2.0")])
    [res] = run_checks(f, [needs_nvcc], None)
    assert res.outcome is Outcome.SKIPPED
    f.fail(ProbeError("nvidia-nvcc", ("compilers",), "`nvcc --version` timed out", "timeout"))
    [res] = run_checks(f, [needs_nvcc], None)
    assert res.outcome is Outcome.UNKNOWN and "timed out" in res.title
