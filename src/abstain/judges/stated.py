"""The answer a response *states*: what a plain-number reference is compared with, and nothing else in the text.

Math-Verify evaluates any arithmetic it finds, so a response that only repeats the question's ``93 + 59`` would
"equal" 152. For a reference that is a plain number the rule judge therefore compares one stated answer, read the
way the field's graders read a final answer (lm-eval's GSM8K ``strict-match`` "The answer is N" / ``#### N`` and
``flexible-extract`` last number; Qwen2.5-Math's and DeepSeekMath's ``extract_answer``: the box, then "the answer
is", then the last number):

1. the text judged is the last ``\\boxed{}`` (strict and lenient), or, in lenient mode without a box, the response's
   tail (:data:`abstain.parsing.TAIL_CHARS`);
2. in it, the first arithmetic run after the last "answer is" / "answer:" / ``####``; else the last run with an
   equals sign and a right-hand side (``=``, ``≈``, ``\\approx``); else the last run of numbers;
3. of that run, the part after its last equals sign is the statement. One number there is the stated answer
   (signs, ``$``, separators, decimals, ``3/4``, ``\\frac{3}{4}``, ``%`` and trailing words such as units allowed);
   an unevaluated expression of numbers (``93+59``, ``4 plus 5``, ``2^{10}``, ``\\sqrt{16}``) is no answer at all.

A *run* is numbers joined by operators (``+ - * / × ÷ ^ ** \\times \\cdot \\div``, ``plus`` / ``minus`` /
``times`` / ``divided by`` / ``multiplied by``, LaTeX functions such as ``\\sqrt``) and equals signs, with spaces,
brackets and ``$`` between them; any other word or a line break ends it.

Example:
    >>> stated_answer("So 4 + 5 = 9 apples.").text
    '9'
    >>> stated_answer("Tom has 4 + 5 apples now.").kind
    'expression'
    >>> stated_answer("528 * 901 ≈ 25817\\nThe answer is: 25817").text
    '25817'
    >>> stated_answer("What does 70 + 61 =?").kind
    'expression'
    >>> stated_answer("I am not sure.").kind
    'none'
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["StatedAnswer", "stated_answer"]

StatedKind = Literal["number", "expression", "none"]


@dataclass(frozen=True, slots=True)
class StatedAnswer:
    """What a response states: ``kind`` ``number`` (``text`` holds it), ``expression`` (an unevaluated expression of
    numbers: not an answer) or ``none`` (no number at all: words, a refusal)."""

    kind: StatedKind
    text: str | None = None


# ---- tokens ---------------------------------------------------------------------------------------------------

_NUM = (r"\\[dt]?frac\{-?\d+(?:\.\d+)?\}\{\d+(?:\.\d+)?\}"  # \frac{3}{4}
        r"|(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?:/\d+(?!\d|\.\d))?"  # 1,234.5 1e9 3/4 (a fraction)
        r"|\.\d+")
_TOKEN = re.compile(
    rf"(?P<num>(?:{_NUM})(?:\s*\\?%)?)"
    r"|(?P<eq>=|≈|\\approx\b|\\simeq\b|\bequals?\b|\bis\s+equal\s+to\b)"
    r"|(?P<op>\*\*|[-+*/×÷^·−]|\\(?:times|cdot|div|pm|mp)\b"
    r"|\b(?:plus|minus|times|multiplied\s+by|divided\s+by|over)\b|(?<![A-Za-z])x(?![A-Za-z]))"
    r"|(?P<fn>\\(?!boxed\b|fbox\b|left\b|right\b|quad\b|qquad\b)[A-Za-z]+)"  # \sqrt, \log, \pi ...: not a plain number
    r"|(?P<skip>[ \t]+|\\[,;:! ]|\\\$|\\(?:boxed|fbox|left|right|quad|qquad)\b|[$(){}\[\]]|\*\*?(?=\s|$))"
    r"|(?P<stop>\n|[A-Za-z]+|.)",
    re.DOTALL,
)
_WRAPPERS = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_LATEX_SEPARATOR = re.compile(r"(?<=\d)\\,(?=\d{3}(?!\d))")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°")
_MARKER = re.compile(r"(?:answer\s*(?:(?:is|was|would\s+be|will\s+be)\s*:?|[:=])|####)(?![A-Za-z])", re.IGNORECASE)


_SIGNS = ("-", "+", "−")


@dataclass(frozen=True, slots=True)
class _Run:
    """Numbers, operators and equals signs in a row: its statement is what follows the last equals sign."""

    start: int
    parts: tuple[tuple[tuple[str, str], ...], ...]  # segments between equals signs: (kind, text) tokens

    @property
    def has_rhs(self) -> bool:
        return len(self.parts) > 1 and any(kind == "num" for kind, _ in self.parts[-1])

    def statement(self) -> StatedAnswer:
        segment = next((p for p in reversed(self.parts) if any(k == "num" for k, _ in p)), ())
        nums = [i for i, (kind, _) in enumerate(segment) if kind == "num"]
        if not nums:
            return StatedAnswer("none")
        if len(nums) > 1 or any(kind == "fn" for kind, _ in segment):
            return StatedAnswer("expression")
        i = nums[0]
        if any(kind == "op" for kind, _ in segment[i + 1 :]) and not _dangling(segment[i + 1 :]):
            return StatedAnswer("expression")
        leading = [text for kind, text in segment[:i] if kind == "op"]
        if leading and any(t not in _SIGNS for t in leading):
            return StatedAnswer("expression")
        sign = "-" if leading and leading[-1] in "-−" else ""
        return StatedAnswer("number", sign + segment[i][1].strip())


def _dangling(tail: tuple[tuple[str, str], ...]) -> bool:
    """Operators after a run's only number with nothing to apply to ("3 times", markdown ``**``): not an expression."""
    return all(kind == "op" for kind, _ in tail)


def _runs(text: str) -> list[_Run]:
    runs: list[_Run] = []
    parts: list[list[tuple[str, str]]] = [[]]
    start = -1

    def close() -> None:
        nonlocal parts, start
        if any(kind == "num" for part in parts for kind, _ in part):
            runs.append(_Run(start, tuple(tuple(p) for p in parts)))
        parts, start = [[]], -1

    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "stop"
        if kind == "skip":
            continue
        if kind == "stop":
            close()
            continue
        if start < 0:
            if kind == "op" and m.group() not in _SIGNS:
                continue  # "over 5 books", "**9**": an operator with nothing before it opens no run
            start = m.start()
        if kind == "eq":
            parts.append([])
        else:
            parts[-1].append((kind, m.group()))
    close()
    return runs


@functools.lru_cache(maxsize=65536)
def stated_answer(text: str) -> StatedAnswer:
    """The answer ``text`` states (see the module docstring for the rule and its sources).

    Example:
        >>> stated_answer("\\\\boxed{93+59}".replace("\\\\boxed", "")).kind   # the box's content: an expression
        'expression'
        >>> stated_answer("x = \\\\frac{3}{4}").text
        '\\\\frac{3}{4}'
        >>> stated_answer("The answer is -12 degrees, since 3 - 15 = -12.").text
        '-12'
    """
    text = _DEGREES.sub("", _WRAPPERS.sub(r" \1 ", text))
    text = _LATEX_SEPARATOR.sub(",", text.replace("{,}", ",").replace("\\!", ""))  # 10{,}080, 10,\!080, 10\,080
    markers = list(_MARKER.finditer(text))
    if markers:
        end = markers[-1].end()
        line_end = text.find("\n", end)
        after = text[end : line_end if line_end >= 0 else len(text)]
        runs = _runs(after)
        if runs:
            return runs[0].statement()
    runs = _runs(text)
    if not runs:
        return StatedAnswer("none")
    with_rhs = [run for run in runs if run.has_rhs]
    return (with_rhs[-1] if with_rhs else runs[-1]).statement()
