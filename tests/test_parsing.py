"""Parsing: last balanced box, label mapping, tags, clarification, edge cases, real MATH-500 solutions."""

from __future__ import annotations

import json

import pytest

from abstain.parsing import TAIL_CHARS, label_of, last_boxed, parse_response, split_reasoning
from abstain.schema import Pred


def test_last_box_wins_and_nested_braces_are_balanced():
    text = "First \\boxed{1}. Then \\boxed{\\frac{a}{b^{2}}} and some words after."
    assert last_boxed(text) == "\\frac{a}{b^{2}}"
    # the last opener is the innermost box of a nested pair, as in UA-Bench's extractor
    assert last_boxed("\\boxed{\\boxed{<DATA_UNCERTAIN>}}") == "<DATA_UNCERTAIN>"
    assert last_boxed("\\boxed{a \\boxed{b} c}") == "b"


def test_escaped_braces_and_spacing_and_fbox():
    assert last_boxed("\\boxed{\\{1, 2\\}}") == "\\{1, 2\\}"
    assert last_boxed("\\boxed {42}") == "42"
    assert last_boxed("\\fbox{7}") == "7"


def test_trailing_unbalanced_box_is_skipped_for_the_last_complete_one():
    assert last_boxed("\\boxed{12} then \\boxed{\\frac{1}{2") == "12"
    p = parse_response("The answer is \\boxed{\\frac{1}{2")
    assert (p.format_ok, p.pred, p.boxed) == (False, Pred.ANSWER, None)


def test_no_box_keeps_the_tail():
    response = "x" * 500 + " so the answer is 18"
    p = parse_response(response)
    assert p.format_ok is False and p.pred is Pred.ANSWER
    assert p.answer == response[-TAIL_CHARS:] and len(p.answer) == TAIL_CHARS


@pytest.mark.parametrize(
    "boxed, expected",
    [
        ("I don't know.", Pred.MODEL_UNCERTAIN),
        ("I don\u2019t know", Pred.MODEL_UNCERTAIN),
        ("i dont know", Pred.MODEL_UNCERTAIN),
        ("I DON'T KNOW", Pred.MODEL_UNCERTAIN),
        ("<MODEL_UNCERTAIN>", Pred.MODEL_UNCERTAIN),
        ("<model_uncertain>", Pred.MODEL_UNCERTAIN),
        ("<DATA_UNCERTAIN>", Pred.DATA_UNCERTAIN),
        ("\\text{DATA\\_UNCERTAIN}", Pred.DATA_UNCERTAIN),
        # MODEL_UNCERTAIN is checked first
        ("<DATA_UNCERTAIN> or I don't know", Pred.MODEL_UNCERTAIN),
        ("42", Pred.ANSWER),
        ("knowledge", Pred.ANSWER),
        ("x = \\frac{1}{2}", Pred.ANSWER),
    ],
)
def test_label_mapping(boxed, expected):
    assert label_of(boxed) is expected


def test_abstain_r1_tags_and_clarification():
    response = (
        "<thinking>The price of a pen is never given, so \\boxed{3} would be a guess.</thinking>"
        "<answer>\\boxed{I don't know.} What is the price of one pen?</answer>"
    )
    p = parse_response(response)
    assert p.pred is Pred.MODEL_UNCERTAIN
    assert p.clarification == "What is the price of one pen?"
    assert p.reasoning.startswith("The price of a pen")


def test_untagged_clarification_is_the_boxed_paragraph_and_after():
    response = "Long derivation 1 + 1 = 2.\n\nThe rate is missing. \\boxed{<DATA_UNCERTAIN>} How fast was it?"
    p = parse_response(response)
    assert p.clarification == "The rate is missing.  How fast was it?"


def test_think_block_is_stored_but_never_decides():
    p = parse_response("<think>maybe \\boxed{99}</think>So \\boxed{<DATA_UNCERTAIN>}")
    assert p.pred is Pred.DATA_UNCERTAIN and p.reasoning == "maybe \\boxed{99}"
    unfinished = parse_response("<think>still thinking \\boxed{99}")
    assert unfinished.format_ok is False
    assert split_reasoning("<think>a</think>b") == ("a", "b")


def test_unicode_and_huge_responses():
    p = parse_response("答案是 \\boxed{四十二} ✓")
    assert p.answer == "四十二"
    huge = "lorem ipsum { dolor " * 50_000 + "\\boxed{7}"  # ~1 MB with unbalanced braces before the box
    assert len(huge) > 1_000_000
    assert parse_response(huge).answer == "7"
    huge_after = "\\boxed{7}" + " text" * 200_000
    assert parse_response(huge_after).answer == "7"
    many_boxes = "\\boxed{" * 10_000 + "\\boxed{8}"
    assert parse_response(many_boxes).answer == "8"


def test_every_math500_solution_box_is_its_reference_answer(benchmarks_dir):
    rows = [json.loads(line) for line in (benchmarks_dir / "math500" / "test.jsonl").open()]
    assert len(rows) == 500
    mismatches = [r["unique_id"] for r in rows if last_boxed(r["solution"]) != r["answer"]]
    assert mismatches == []
