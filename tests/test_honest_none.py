"""Issue 9 (day 8, m8): an error nothing reads gets an honest ranked list, not silence.

When no signature, fact or vocabulary reads the error and the learned model is unsure (or reads user code), ``rank``
puts ``none`` ("probably not a stack problem") first and the model's two likeliest stack causes after it, as guesses
(logs/rank._honest_none).  Silence there was a miss at top-1 and top-3 for every stack case; `none` first keeps every
`none` case right.  Measured in bench/results/issue9-m8-honest-none.md."""
from __future__ import annotations

from conftest import run_cli
from gpuvet.app.diagnose import _verdict, build_report, facts_from_text, findings_for
from gpuvet.app.diagnose import scan_text as scan
from gpuvet.logs import learned
from gpuvet.logs.rank import blames_nothing, rank
from gpuvet.render import render

TRACE = 'Traceback (most recent call last):\n  File "train.py", line 88, in <module>\n    main()\n'


def _model(weights, abstain=0.5):
    return learned.Model({"format": learned.FORMAT, "classes": ["none", "runtime-mismatch", "toolchain", "other"],
                          "bias": [0.0, 0.0, 0.0, 0.0], "weights": weights, "abstain": abstain,
                          "components": {"runtime-mismatch": "runtime", "toolchain": "toolchain", "other": "driver"}})


# the model leans to user code but is not sure (p(none) ~0.45 < 0.5), and gives two stack causes a fair chance
LEANS_USER = _model({"frobnicator": {"0": 1.2, "1": 0.6, "2": 0.3}})


def test_an_error_nothing_reads_gets_none_first_then_the_models_two_likeliest_stack_causes():
    s = scan(TRACE + "RuntimeError: frobnicator quux exploded\n")
    assert rank(s, learned=None) == []  # the rules alone are silent, as before
    diags = rank(s, learned=LEANS_USER)
    assert [d.cause for d in diags] == ["none", "runtime-mismatch", "toolchain"]
    assert blames_nothing(diags)
    none, *guesses = diags
    assert none.component == "user-code" and "probably not a stack problem" in none.title
    assert none.evidence and none.evidence[0]["text"].startswith("RuntimeError: frobnicator")
    assert all(g.confidence <= 0.2 + 1e-9 < none.confidence for g in guesses)
    assert all("guess" in g.title and g.contributions[0].kind == "tentative" for g in guesses)
    assert guesses[0].why.startswith("A guess, after the likelier reading that the stack is not at fault")
    v = _verdict(diags)
    assert v.startswith("probably not a stack problem") and "possibly runtime-mismatch or toolchain" in v


def test_nothing_changes_where_a_rule_reads_the_error_or_there_is_no_error():
    # a signature reads it: its cause first, no `none`
    s = scan("RuntimeError: HIP error: invalid device function\n")
    diags = rank(s, learned=LEANS_USER)
    assert diags and diags[0].cause != "none"
    # no error line at all (a healthy report): nothing, whatever the model
    assert rank(scan("PyTorch version: 2.4.1+rocm6.0\nIs CUDA available: True\n"), learned=LEANS_USER) == []
    # a decisive user-code message has settled it: no guesses after it
    s = scan("Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [5,0,0] Assertion "
             "`t >= 0 && t < n_classes` failed.\nRuntimeError: CUDA error: device-side assert triggered\n")
    assert rank(s, learned=_model({"assertion": {"1": 1.0, "2": 0.8}})) == []


def test_no_guess_worth_a_place_means_silence():
    # the model is sure it is user code: every stack cause under HONEST_NONE_MIN_P, so the list would say nothing more
    sure_user = _model({"frobnicator": {"0": 6.0}})
    assert rank(scan(TRACE + "RuntimeError: frobnicator quux exploded\n"), learned=sure_user) == []


def test_the_report_exits_0_leads_with_the_user_code_reading_and_shows_the_guesses_as_guesses(monkeypatch):
    monkeypatch.setattr(learned, "load", lambda path=None: LEANS_USER)
    text = TRACE + "ValueError: frobnicator quux exploded\n"
    sc = scan(text)
    facts = facts_from_text(text, "case.txt", sc)
    rep = build_report(sc, facts, findings_for(facts), "case.txt")
    causes = [d["cause"] for d in rep.extra["diagnoses"]]
    assert causes == ["none", "runtime-mismatch", "toolchain"]
    assert [f.cause for f in rep.findings if f.name.startswith("diagnosis-")] == ["runtime-mismatch", "toolchain"]
    out = render(rep, "terminal", color=False, width=80)
    lines = out.splitlines()
    assert lines[0].startswith("Verdict: probably not a stack problem")
    head = out.index("If the stack is at fault after all")
    assert out.index("LOG142") < head < out.index("diagnosis-runtime-mismatch")  # the user-code signal first
    assert all(len(x) <= 80 for x in lines)
    # a guess's title gives the model's probability, not the rank weight (MIN_CONFIDENCE) as a second "confidence"
    titles = [f.title for f in rep.findings if f.name.startswith("diagnosis-")]
    assert all("p=0." in t and "confidence 0." not in t for t in titles), titles
    from gpuvet.cli.diagnose_run import diagnose_exit

    assert int(diagnose_exit(rep)) == 0


def test_the_cli_json_keeps_none_first_and_exits_0_on_a_plain_python_error():
    # the shipped model: whatever it guesses, a plain Python error with no stack word blames nothing
    r = run_cli(["diagnose", "--format", "json", "-"], stdin=TRACE + "ZeroDivisionError: division by zero\n")
    doc = r.json()
    assert r.code == 0 and blames_nothing(doc["diagnoses"]), doc["diagnoses"]


def test_blames_nothing_reads_objects_dicts_and_names():
    assert blames_nothing([]) and blames_nothing(["none", "other"]) and blames_nothing([{"cause": "none"}])
    assert not blames_nothing(["other", "none"]) and not blames_nothing([{"cause": "toolchain"}])
