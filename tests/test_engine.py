"""Engine: unknown is never passed, policy is applied outside rules, score and exit codes."""
import time

from gpuvet.checks.base import Fail, check, parse_doc
from gpuvet.app.engine import Policy, build_report, exit_code, run_checks, score
from gpuvet.model import ExitCode, Facts, Outcome, ProbeError, Severity, row
from gpuvet.probes.base import Probe, ProbeFailed, run_probes
from fakes import FakeSystem


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


def test_score_is_of_what_was_checked_and_coverage_says_how_much_was_not():
    from gpuvet.app.engine import coverage
    from gpuvet.model import Finding
    unknowns = [Finding(f"X{i}", "n", Severity.ERROR, Outcome.UNKNOWN, "t") for i in range(20)]
    passed = [Finding("Y1", "n", Severity.ERROR, Outcome.PASSED, "t")]
    failed = [Finding("Z1", "n", Severity.WARNING, Outcome.FAILED, "t")]
    sc, ded = score(unknowns + passed)
    assert sc == 100 and ded == []
    sc, ded = score(unknowns + passed + failed)
    assert sc == 92 and [d.code for d in ded] == ["Z1"]
    assert coverage(unknowns + passed + failed) == {"checked": 2, "unchecked": 20, "not_applicable": 0}


def test_one_rule_failing_many_times_costs_at_most_twice_its_points():
    """Nine packages installed twice (PKG063 x9, seen on the day-8 device image) were nine warnings, 72 points:
    health 28 for a machine whose GPU stack was fine.  Repeats of a rule now halve: 8+4+2+1 = 15."""
    from gpuvet.model import Finding
    dups = [Finding("PKG063", "n", Severity.WARNING, Outcome.FAILED, f"pkg{i} installed twice") for i in range(9)]
    sc, ded = score(dups)
    assert sc == 85 and [d.points for d in ded] == [8, 4, 2, 1]
    # different rules still add up in full, and the most severe finding of a rule is the one charged in full
    other = [Finding("RTM021", "n", Severity.ERROR, Outcome.FAILED, "skew"),
             Finding("PKG063", "n", Severity.ERROR, Outcome.FAILED, "escalated by policy")]
    sc, ded = score(dups[:1] + other)
    assert sc == 100 - 20 - 20 - 4, ded
    assert [(d.code, d.points) for d in ded] == [("RTM021", 20), ("PKG063", 20), ("PKG063", 4)]
    # acknowledged findings cost nothing and do not count as the first of their rule
    from dataclasses import replace
    sc, ded = score([replace(dups[0], acknowledged="known"), dups[1]])
    assert sc == 92 and [d.points for d in ded] == [8]


def test_checks_of_a_vendor_the_gpus_rule_out_are_not_applicable():
    from gpuvet.app.engine import vendors_ruled_out
    from gpuvet.model import Facts, row
    f = Facts()
    f.add([row("gpu_devices", "nvidia-smi", vendor="nvidia", index=0, name="NVIDIA H200", arch="sm_90")])
    assert set(vendors_ruled_out(f)) == {"amd"}
    f.add([row("gpu_devices", "rocminfo", vendor="amd", index=0, name="MI210", arch="gfx90a")])
    assert vendors_ruled_out(f) == {}
    assert vendors_ruled_out(Facts()) == {}  # no GPU seen: nothing ruled out
    from gpuvet import kb as KB
    from gpuvet.checks.registry import all_checks
    g = Facts()  # a pasted nvidia-smi: only the GPU table is known
    g.add([row("gpu_devices", "nvidia-smi", vendor="nvidia", index=0, name="NVIDIA H200", arch="sm_90")])
    by = {x.code: x for x in run_checks(g, all_checks(), KB.load())}
    assert by["RTM027"].outcome is Outcome.SKIPPED and "NVIDIA" in by["RTM027"].title
    assert by["ENV024"].outcome is Outcome.SKIPPED
    assert by["DRV002"].outcome is not Outcome.SKIPPED  # NVIDIA's own rules still run


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
