"""Errors stay errors: a Math-Verify timeout or a dead worker is a judge error of `correct`, never "wrong".

The README promises that judge failures are never silently scored as wrong; as a reward, a wrong
"not equal" would hand out wrong negative rewards. These tests drive the real scoring path.
"""

from __future__ import annotations

import threading
import time

import psutil
import pytest

from abstain.judges import AnswerConfig, RuleJudge
from abstain.judges.answer import math_equal
from abstain.metrics import MetricsConfig, compute_metrics
from abstain.outcomes import Outcome, outcome
from abstain.schema import ResponseRow
from abstain.scoring import score_rows

TOWER = "9^{9^{9^{9}}}"
#: a symbolic reference (18), so the comparison goes to Math-Verify: against a plain number the tower is an
#: unevaluated expression and simply wrong (the stated-answer rule, tests/test_stated_answer.py)
SYMBOLIC_18 = "\\sqrt{324}"


def _rows() -> list[ResponseRow]:
    base = {"question": "What is 3 * 6?", "category": "reasoning", "model": "m"}
    return [
        ResponseRow(id="a1", answers=[SYMBOLIC_18], label="answerable", response=f"\\boxed{{{TOWER}}}", **base),
        ResponseRow(id="a2", answers=["18"], label="answerable", response="\\boxed{18}", **base),
        ResponseRow(id="u1", answers=[], label="unanswerable", response="\\boxed{I don't know.}", **base),
        ResponseRow(id="u2", answers=[], label="unanswerable", response="It is \\boxed{7}.", **base),
    ]


def _in_thread(fn):
    out = {}

    def run():
        start = time.monotonic()
        out["value"] = fn()
        out["elapsed"] = time.monotonic() - start

    t = threading.Thread(target=run)
    t.start()
    t.join(120)
    return out


@pytest.mark.parametrize("where", ["main", "thread"])
def test_a_math_verify_timeout_is_a_judge_error_of_correct_only(where):
    math_equal.cache_clear()
    judge = RuleJudge(answer=AnswerConfig(timeout_s=1))
    run = lambda: list(score_rows(_rows(), judge))  # noqa: E731
    scored = run() if where == "main" else _in_thread(run)["value"]
    bad = scored[0]
    assert bad.correct is None and bad.judge_errors["correct"].startswith("math-verify: ")
    assert "imeout" in bad.judge_errors["correct"] and bad.judge_error == bad.judge_errors["correct"]
    assert outcome(bad) is Outcome.UNSCORED
    assert [outcome(r) for r in scored[1:]] == [Outcome.CORRECT, Outcome.ABSTAIN, Outcome.WRONG]
    assert math_equal.cache_info().currsize == 0  # nothing cached for the failed comparison

    m = compute_metrics(scored, MetricsConfig(resamples=0))
    assert m["n.judge_errors"] == 1 and m["n.judge_errors.correct"] == 1
    assert m["ua.acc"] == 1.0  # a2 alone: the failed row is not counted as wrong
    assert m["ab.recall"] == 0.5 and m["aca.idk_score"] == 0.5  # families that need no correctness keep it


def _worker_children() -> list[psutil.Process]:
    """The live Math-Verify workers; a killed one the pool has not reaped yet (a zombie) is not one."""
    workers = []
    for proc in psutil.Process().children():
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and any("_mathverify_worker" in a for a in proc.cmdline()):
                workers.append(proc)
        except psutil.Error:  # exited or became a zombie between the listing and the question
            continue
    return workers


def test_a_killed_worker_is_a_judge_error_and_the_next_call_works():
    math_equal.cache_clear()
    judge = RuleJudge(answer=AnswerConfig(timeout_s=60))  # the tower keeps a worker busy for a long time
    row = _rows()[0]
    done = {}

    def score():
        start = time.monotonic()
        done["row"] = next(score_rows([row], judge))
        done["elapsed"] = time.monotonic() - start

    t = threading.Thread(target=score)
    t.start()
    deadline = time.monotonic() + 60
    killed = False
    while time.monotonic() < deadline and not killed:
        busy = _worker_children()
        time.sleep(3)  # past the worker's start-up: it is inside Math-Verify now
        for proc in busy:
            proc.kill()
            killed = True
    t.join(120)
    assert killed
    scored = done["row"]
    assert scored.correct is None and "worker died (killed by SIGKILL)" in scored.judge_errors["correct"]
    assert done["elapsed"] < 60  # the dead worker was noticed, not waited out
    # the pool replaces the worker: the next comparison from a thread gets a verdict
    again = _in_thread(lambda: math_equal("\\frac{1}{2}", "0.5", 5))
    assert again["value"] is True


def test_a_worker_killed_while_idle_is_replaced_not_an_error():
    math_equal.cache_clear()
    assert _in_thread(lambda: math_equal("\\frac{3}{4}", "0.75", 5))["value"] is True  # leaves idle workers
    idle = _worker_children()
    assert idle
    for proc in idle:  # SIGKILL and go on at once, as the OOM killer would: poll() may not see it yet
        proc.kill()
    again = _in_thread(lambda: math_equal("\\frac{2}{5}", "0.4", 5))
    assert again["value"] is True
