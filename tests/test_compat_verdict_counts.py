"""`gpuvet compat`: the verdict and the counts under it agree (a warning is a caveat of a stack that
works, never "works" beside "1 failed"), in the terminal, Markdown and JUnit alike."""
import pytest

CASES = [
    # description, verdict line, how the counts line starts (the not-applicable count grows with the checks)
    (["--torch", "2.1", "--cuda", "11.8", "--driver", "470.82", "--gpu", "A100"],
     "Verdict: works, with 1 warning", "1 warning · 9 passed · "),
    (["--torch", "2.8", "--cuda", "12.8", "--driver", "470.82", "--gpu", "A100"],
     "Verdict: breaks", "1 error · 9 passed · "),
    (["--torch", "2.1", "--cuda", "11.8", "--driver", "535.54.03", "--gpu", "A100"],
     "Verdict: works", "10 passed · "),
]


@pytest.mark.parametrize("args,verdict,counts", CASES)
def test_compat_verdict_and_counts_agree(cli, args, verdict, counts):
    r = cli(["compat", *args, "--fail-on", "never"])
    lines = r.out.splitlines()
    assert lines[0] == verdict, r.out
    assert any(line.startswith(counts) for line in lines), r.out
    assert "failed" not in " ".join(lines[-3:])  # the counts never call a warning "failed"
    doc = cli(["compat", *args, "--fail-on", "never", "--format", "json"]).json()
    assert doc["verdict"] == verdict.split()[1].rstrip(",")  # the JSON keeps its verdict values
    if doc["verdict"] == "works":  # what "failed" counts there is warnings at most
        assert all(f["severity"] == "warning" for f in doc["findings"] if f["outcome"] == "failed")


def test_compat_works_with_a_warning_in_markdown_and_junit(cli):
    args = ["compat", "--torch", "2.1", "--cuda", "11.8", "--driver", "470.82", "--gpu", "A100", "--fail-on", "never"]
    md = cli([*args, "--format", "markdown"]).out
    assert "**Verdict: works, with 1 warning**" in md
    junit = cli([*args, "--format", "junit"]).out
    assert "Verdict: works, with 1 warning" in junit


def test_check_counts_keep_failed(cli):
    """`check` has no verdict: its score line still counts every failure as failed (exit status and
    score are about failures)."""
    from gpuvet.model import Evidence, Finding, Outcome, Severity
    from gpuvet.render.terminal import tally

    f = Finding(code="DRV001", name="x", severity=Severity.WARNING, outcome=Outcome.FAILED, title="t",
                evidence=(Evidence("e"),))
    assert tally([f])[0] == "1 failed"
    assert tally([f], by_severity=True)[0] == "1 warning"
