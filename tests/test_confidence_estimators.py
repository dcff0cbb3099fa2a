"""The estimators' own pieces, without a model: the --confidence list, the verbalized prompt and parser, p_true's
reading of the first token, consistency's agreement, and ScoredText's spans."""

from __future__ import annotations

import math
import pickle

import pytest

from abstain.backends.token_scores import ScoredText
from abstain.confidence import VERBALIZED_INSTRUCTION, parse_confidence, response_confidence
from abstain.confidence.consistency import agreement
from abstain.confidence.p_true import p_true_messages, p_true_value
from abstain.evaluation.run import EvalConfig, eval_prompts
from abstain.parsing import answer_span, verbalized_confidence
from abstain.schema import ResponseRow


def test_confidence_list_is_checked():
    assert parse_confidence("logprob, consistency:5,p_true") == ("logprob", "consistency:5", "p_true")
    for bad, message in (("nope", "unknown confidence estimator"), ("consistency", "K >= 2"),
                         ("consistency:1", "K >= 2"), ("logprob:3", "takes no"), ("logprob,logprob", "twice"),
                         ("consistency:2,consistency:3", "one consistency")):
        with pytest.raises(ValueError, match=message):
            parse_confidence(bad)
    with pytest.raises(ValueError, match="unknown confidence estimator"):
        EvalConfig(model="bundled", suite="quick", confidence=("logprobs",))


@pytest.mark.parametrize("text,value", [
    ("\\boxed{5}\nConfidence: 80", 0.8), ("\\boxed{5} My confidence level is 35%.", 0.35),
    ("\\boxed{5}\nI'm 90% confident.", 0.9), ("<think>Confidence: 10</think>\\boxed{5}\nConfidence: 70", 0.7),
    ("\\boxed{5}", None), ("Confidence: 250", None)])
def test_verbalized_confidence_is_read_by_the_parser(text, value):
    got = verbalized_confidence(text)
    assert got == (pytest.approx(value) if value is not None else None)
    assert response_confidence(text, ("verbalized",)) == {"verbalized": got}


def test_verbalized_adds_its_instruction_to_every_prompt_and_nothing_else():
    plain = eval_prompts(EvalConfig(model="m", suite="quick", limit=4, protocols=("idk",), shots=2))
    asked = eval_prompts(EvalConfig(model="m", suite="quick", limit=4, protocols=("idk",), shots=2,
                                    confidence=("verbalized",)))
    for a, b in zip(plain.messages, asked.messages, strict=True):
        assert b[-1]["content"] == f"{a[-1]['content']}\n\n{VERBALIZED_INSTRUCTION}"
        assert a[:-1] == b[:-1]  # the demonstrations are unchanged
    assert asked.record["confidence"] == ["verbalized"] and "confidence" not in plain.record


def test_p_true_reads_yes_against_no_over_spellings():
    first = ScoredText("Yes", [-0.2], [0.5], [3], [("Yes", math.log(0.5)), (" yes", math.log(0.1)),
                                                  ("No", math.log(0.2)), ("Maybe", math.log(0.1))])
    assert p_true_value(first) == pytest.approx(0.6 / 0.8)
    assert p_true_value(ScoredText("Hm", [-1.0], [1.0], [2], [("Hm", -1.0)])) is None
    with pytest.raises(ValueError, match="log-probabilities"):
        p_true_value("Yes")
    row = ResponseRow(id="1", question="What is 2 + 3?", answers=["5"], label="answerable", response="\\boxed{5}",
                      model="m")
    assert "Proposed answer: 5" in p_true_messages(row)[0]["content"]
    assert p_true_messages(row.model_copy(update={"response": "\\boxed{I don't know}"})) is None


def test_consistency_agrees_under_the_judge_equivalence():
    assert agreement("\\boxed{\\frac{1}{2}}", ["\\boxed{0.5}", "\\boxed{1/2}", "\\boxed{2}", "\\boxed{I don't know}"]) \
        == pytest.approx(0.5)
    assert agreement("\\boxed{<DATA_UNCERTAIN>}", ["\\boxed{<DATA_UNCERTAIN>}", "\\boxed{I don't know}"]) == 0.5
    assert agreement("\\boxed{5}", []) is None


def test_scored_text_spans_pickles_and_answer_prob():
    text = ScoredText("so \\boxed{12}.", [-0.1, -0.2, -0.3, -0.4, -0.5], [0.1] * 5, [3, 10, 11, 12, 14],
                      [("so", -0.1)])
    start, end = answer_span(text)
    assert text[start:end] == "12"
    assert text.span_logprob(start, end) == pytest.approx(-0.7)  # the tokens "1" and "2"
    assert response_confidence(text, ("answer_prob",))["answer_prob"] == pytest.approx(math.exp(-0.7))
    again = pickle.loads(pickle.dumps(text))
    assert again == text and again.token_logprobs == text.token_logprobs and again.first_top == text.first_top
    with pytest.raises(ValueError, match="one per token"):
        ScoredText("x", [-1.0], [], [1])
    with pytest.raises(ValueError, match="no log-probabilities"):
        response_confidence("plain", ("logprob",))


def test_a_probe_keeps_each_samples_confidence_and_their_mean():
    from abstain.records.probes import ProbeRow, aggregate
    from abstain.schema import ScoredRow

    base = dict(id="q1", question="2+2?", answers=["4"], label="answerable", model="m", protocol="idk",
                format_ok=True, answer=None, pred="ANSWER")
    rows = [ScoredRow(**base, sample=0, response="\\boxed{4}", correct=True, confidence={"p_true": 0.8, "logprob": -1.0}),
            ScoredRow(**base, sample=1, response="\\boxed{5}", correct=False, confidence={"p_true": 0.4, "logprob": None})]
    (row,) = aggregate(rows)
    assert row.p_hat == 0.5 and row.confidence == pytest.approx({"p_true": 0.6, "logprob": -1.0})
    assert [s.confidence for s in row.samples] == [r.confidence for r in rows]
    assert ProbeRow.model_validate_json(row.model_dump_json()).confidence == row.confidence
    assert "confidence" not in row.item().model_dump()
