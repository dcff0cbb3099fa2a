"""Clarification judging (Abstain-R1): does a refusal name or ask for what is actually missing?

A clarification is judged on unanswerable rows that refuse (``pred != ANSWER``) or box a question; its
text is the answer's words outside the box (plus the boxed question, when the box asks).

* **Rules** (:func:`check_clarification`) apply when the item's gap is *structured*: synthesized
  items carry ``gap_variable``, the name of the missing quantity (``blanket_price``, ``tom_age``). The
  name is split into words (generic words such as "number", units such as "km" or "boxes" dropped);
  the clarification is correct when it mentions all of them (crudely stemmed, with a few synonyms:
  age ~ old, price ~ cost / how much, km ~ far / long), incorrect when it mentions none of them or
  says nothing, and undecided (None) when it mentions only some.
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
    ['red', 'appl']
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
    "value quantity qty var variable x y z n "
    # units and containers name how a quantity is counted, not which one is missing
    "km m cm mm kg g mg l ml min h hr hours minutes sec usd dollars cents box boxes bag bags pack packs".split()
)
# a name's word -> other words a clarification may use for it
_SYNONYMS = {
    "age": ("old", "born"),
    "price": ("cost", "much", "pay", "paid", "charge"),
    "cost": ("price", "much", "pay", "paid"),
    "km": ("far", "long", "distance"),
    "saved": ("save", "saving"),
    "earned": ("earn", "make", "made"),
}


def _stem(word: str) -> str:
    """Crude stem, the same on both sides: apples -> appl, boxes -> box, saved/save -> sav."""
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def gap_terms(gap_variable: str) -> list[str]:
    """The content words of a missing quantity's name, stemmed and lower case."""
    words = [w.lower() for w in _WORDS.findall(gap_variable.replace("'s", " "))]
    return [_stem(w) for w in words if w not in _GENERIC and len(w) > 1]


def _mentioned(term: str, said: set[str]) -> bool:
    if term in said:
        return True
    return any(_stem(alt) in said for word, alts in _SYNONYMS.items() if _stem(word) == term for alt in alts)


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
    found = sum(_mentioned(t, said) for t in terms)
    if found == len(terms):
        return True
    return False if found == 0 else None


def clarification_messages(row: ResponseRow, pred: Prediction, max_chars: int = 6000) -> list[dict[str, str]]:
    """The LLM clarification judge's messages (Abstain-R1's "what information is missing?" rewrite)."""
    return judge_messages(
        CLARIFICATION, max_chars, question=row.question, gap=row.gap, clarification=clarification_text(pred)
    )
