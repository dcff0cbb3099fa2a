"""Rule clarification check for structured gaps, and when clarification judging applies at all."""

from __future__ import annotations

import pytest

from abstain.judges import RuleJudge, check_clarification, clarification_applies, clarification_text
from abstain.judges.clarification import gap_terms
from abstain.parsing import parse_response
from abstain.schema import ResponseRow, read_jsonl

QUESTION = "Tom buys 3 notebooks and some pens. Notebooks cost $4 each. How much does he spend?"


def _row(response: str, gap_variable: str | None = "price_of_pen", label: str = "unanswerable") -> ResponseRow:
    extra = {"gap_variable": gap_variable} if gap_variable is not None else {}
    return ResponseRow(id="s1", question=QUESTION, answers=[] if label == "unanswerable" else ["20"], label=label,
                       response=response, model="m", gap="The price of one pen is not given.", **extra)


@pytest.mark.parametrize(
    ("name", "terms"),
    [
        ("price_of_pen", ["pric", "pen"]),
        ("numberOfRedApples", ["red", "appl"]),
        ("Tom's age", ["tom", "age"]),
        ("boxes_per_shelf", ["shelf"]),  # a container word says how it is counted, not what
        ("paint_brushes_boxes", ["paint", "brush"]),
        ("metz_km", ["metz"]),
        ("x1", []),
    ],
)
def test_gap_terms(name, terms):
    assert gap_terms(name) == terms


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("\\boxed{I don't know.} What is the price of one pen?", True),  # asks for it
        ("<answer>\\boxed{I don't know.} The prices of the pens are not given.</answer>", True),  # names it, plural
        ("\\boxed{What does each pen cost, and what is its price?}", True),  # boxed question (ELICIT)
        ("\\boxed{<DATA_UNCERTAIN>} How many notebooks did he buy?", False),  # asks for the wrong thing
        ("\\boxed{I don't know.}", False),  # refused and said nothing
        ("\\boxed{I don't know.} What is the pen's colour?", None),  # names the pen, not its price: unsure
        ("\\boxed{I don't know.} How much does one pen cost?", True),  # price ~ cost / how much
        ("He spends \\boxed{20} dollars.", None),  # answered: no clarification to judge
        ("The price is missing. What is it?", None),  # no box: parsing found no refusal
    ],
)
def test_structured_gap_rule(response, expected):
    row = _row(response)
    assert check_clarification(row, parse_response(response)) is expected


def test_rule_needs_a_structured_gap_and_an_unanswerable_item():
    response = "\\boxed{I don't know.} What is the price of one pen?"
    pred = parse_response(response)
    assert check_clarification(_row(response, gap_variable=None), pred) is None  # free-text gap: LLM's job
    assert check_clarification(_row(response, gap_variable="x1"), pred) is None  # a name with no words
    answerable = _row(response, label="answerable")
    assert not clarification_applies(answerable, pred) and check_clarification(answerable, pred) is None


def test_clarification_text_includes_a_boxed_question():
    pred = parse_response("I need more. \\boxed{What is the price of a pen?} Thanks.")
    assert clarification_text(pred).startswith("What is the price of a pen?")
    assert "Thanks" in clarification_text(pred)


def test_rule_judge_records_clarification_and_its_source(fixtures_dir):
    rows = [
        _row("\\boxed{I don't know.} What is the price of one pen?"),
        _row("\\boxed{I don't know.} How many notebooks?"),
        _row("\\boxed{I don't know.} What is the price of one pen?", gap_variable=None),
    ]
    judgments = RuleJudge().judge(rows, [parse_response(r.response) for r in rows])
    assert [j.clarification_correct for j in judgments] == [True, False, None]
    assert [j.judged_by.get("clarification_correct") for j in judgments] == ["rule", "rule", None]
    # real benchmark items carry no structured gap: clarification stays null there
    real = read_jsonl(fixtures_dir / "real_responses.jsonl", ResponseRow)
    assert all(j.clarification_correct is None for j in RuleJudge().judge(real, [parse_response(r.response) for r in real]))
