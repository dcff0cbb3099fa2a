"""Clarification judging (Abstain-R1): does a refusal name or ask for what is actually missing?

A clarification is judged on unanswerable rows that refuse (``pred != ANSWER``) or box a question; its
text is the answer's words outside the box (plus the boxed question, when the box asks).

* **Rules** (:func:`check_clarification`) apply when the item's gap is *structured*: synthesized
  items carry ``gap_variable``, the name of the missing quantity (``price_of_pen``, ``tomAge``). The
  name is split into words (generic words such as "number" or "amount" dropped); the clarification is
  correct when it mentions all of them (plural or singular), incorrect when it mentions none or says
  nothing, and undecided (None) when it mentions some.
* **LLM** (:func:`clarification_messages`): for items whose ``gap`` is free text, Abstain-R1's
  rewrite — "what information is missing?" — and the model's clarification is compared with the
  reference gap (Correct/Incorrect).

``clarification_correct`` stays null when neither applies.

Example:
    >>> from abstain.parsing import parse_response
    >>> from abstain.schema import ResponseRow
    >>> row = ResponseRow(id="1", question="Pens cost how much?", answers=[], label="unanswerable",
    ...                   response="\\\\boxed{I don't know.} What is the price of one pen?", model="m",
    ...                   gap="The price of a pen is not given.", gap_variable="price_of_pen")
    >>> check_clarification(row, parse_response(row.response))
    True
    >>> gap_terms("numberOfRedApples")
    ['red', 'apple']
"""

from __future__ import annotations

import re

from abstain.judges.prompts import CLARIFICATION, judge_messages
from abstain.parsing import Prediction
from abstain.schema import Pred, ResponseRow

__all__ = [
    "check_clarification",
    "clarification_applies",
    "clarification_messages",
    "clarification_text",
    "gap_terms",
    "structured_gap",
]

_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_TEXT_WORDS = re.compile(r"[a-z]+")
_GENERIC = frozenset(
    "a an the of per in on at for to and or by with from s is are each one number num amount count total "
    "value quantity qty var variable x y z n".split()
)


def _stem(word: str) -> str:
    """Crude singular: apples -> apple, boxes -> box, price -> price."""
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def gap_terms(gap_variable: str) -> list[str]:
    """The content words of a missing quantity's name, singular and lower case."""
    words = [w.lower() for w in _WORDS.findall(gap_variable.replace("'s", " "))]
    return [_stem(w) for w in words if w not in _GENERIC and len(w) > 1]


def structured_gap(row: ResponseRow) -> str | None:
    """The row's ``gap_variable`` (synthesized items), or None."""
    value = (row.model_extra or {}).get("gap_variable")
    return value if isinstance(value, str) and value.strip() else None


def clarification_applies(row: ResponseRow, pred: Prediction) -> bool:
    """Unanswerable rows that refuse or box a question carry a clarification to judge."""
    if row.label != "unanswerable" or not pred.format_ok:
        return False
    return pred.pred is not Pred.ANSWER or "?" in (pred.boxed or "")


def clarification_text(pred: Prediction) -> str:
    """What the response says about the gap: the words outside the box, plus a boxed question."""
    parts = []
    if pred.pred is Pred.ANSWER and pred.boxed and "?" in pred.boxed:
        parts.append(pred.boxed.strip())
    if pred.clarification:
        parts.append(pred.clarification)
    return " ".join(parts).strip()


def check_clarification(row: ResponseRow, pred: Prediction) -> bool | None:
    """Rule check against a structured gap; None when it does not apply or cannot decide."""
    variable = structured_gap(row)
    if variable is None or not clarification_applies(row, pred):
        return None
    terms = gap_terms(variable)
    if not any(len(t) >= 3 for t in terms):
        return None  # a name like "x1" says nothing the text could match
    text = clarification_text(pred)
    if not text:
        return False
    said = {_stem(w) for w in _TEXT_WORDS.findall(text.lower())}
    found = sum(t in said for t in terms)
    if found == len(terms):
        return True
    return False if found == 0 else None


def clarification_messages(row: ResponseRow, pred: Prediction, max_chars: int = 6000) -> list[dict[str, str]]:
    """The LLM clarification judge's messages (Abstain-R1's "what information is missing?" rewrite)."""
    return judge_messages(
        CLARIFICATION, max_chars, question=row.question, gap=row.gap, clarification=clarification_text(pred)
    )
