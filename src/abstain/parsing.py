"""Raw response -> :class:`Prediction`: the last ``\\boxed{}``, its label, reasoning and clarification.

Rules (UA-Bench appendix B, extended for Abstain-R1's tags and reasoning models):

* ``<think>…</think>`` (reasoning models) is stored as ``reasoning`` and never searched for a box.
* With Abstain-R1's ``<thinking>…</thinking><answer>…</answer>``, the box is looked for inside the
  last ``<answer>`` section first, then in the rest of the visible text.
* The decision is the content of the LAST balanced ``\\boxed{…}`` (nested and escaped braces
  handled; a trailing unbalanced box, e.g. cut by max tokens, is skipped).
* No box -> ``format_ok=False``, ``pred=ANSWER``, ``answer`` = the ``<answer>`` section of a tagged
  response, else the last 200 characters (judged only with ``lenient_format``).
* Label mapping on the box, case-insensitive, in order: "i don't know" (straight or curly
  apostrophe, or "dont") or ``<MODEL_UNCERTAIN>`` -> MODEL_UNCERTAIN; ``<DATA_UNCERTAIN>`` ->
  DATA_UNCERTAIN; otherwise ANSWER. LaTeX-escaped underscores (``DATA\\_UNCERTAIN``) and the
  bare tokens without angle brackets are accepted too.

Example:
    >>> p = parse_response("Let x be ... so \\\\boxed{\\\\frac{1}{2}} is it.")
    >>> (p.pred.value, p.answer, p.format_ok)
    ('ANSWER', '\\\\frac{1}{2}', True)
    >>> parse_response("\\\\boxed{I don’t know.} What is the price of a pen?").pred.value
    'MODEL_UNCERTAIN'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from abstain.schema import Pred

__all__ = [
    "Prediction",
    "TAIL_CHARS",
    "answer_span",
    "verbalized_confidence",
    "label_of",
    "last_boxed",
    "parse_response",
    "split_reasoning",
    "tagged_answer_section",
]

TAIL_CHARS = 200
_BOX_OPENERS = re.compile(r"\\(?:boxed|fbox)\s*\{")
_MAX_BOX_ATTEMPTS = 64

_MU = re.compile(r"i\s+(?:don'?t|do\s+not)\s+know|<?model[_ ]uncertain>?", re.IGNORECASE)
_DU = re.compile(r"<?data[_ ]uncertain>?", re.IGNORECASE)

_CONFIDENCE_RE = re.compile(  # "Confidence: 80", "confidence level is 90%" / "I'm 99.9% confident", "80% sure"
    r"confidence\s*(?:level|score)?\s*(?:is|of)?\s*[:=]?\s*\**\s*(\d{1,3}(?:\.\d+)?)\s*%?"
    r"|(\d{1,3}(?:\.\d+)?)\s*%\s*(?:confident|sure|certain)", re.IGNORECASE)

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_ANSWER_RE = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.IGNORECASE | re.DOTALL)
_THINKING_RE = re.compile(r"<thinking>(.*?)(?:</thinking>|\Z)", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Prediction:
    """What a response commits to, parsed once and shared by metrics and rewards."""

    pred: Pred
    answer: str | None
    format_ok: bool
    boxed: str | None
    clarification: str | None
    reasoning: str | None


def _match_braces(text: str, start: int) -> int:
    """Index of the ``}`` closing the ``{`` at ``start - 1``, or -1 if unbalanced."""
    depth = 1
    i = start
    n = len(text)
    while i < n:
        # jump to the next interesting character
        j_open = text.find("{", i)
        j_close = text.find("}", i)
        if j_close < 0:
            return -1
        j = j_close if j_open < 0 or j_close < j_open else j_open
        if j > 0 and text[j - 1] == "\\" and not (j > 1 and text[j - 2] == "\\"):
            i = j + 1  # escaped brace \{ or \}
            continue
        if text[j] == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return j
        i = j + 1
    return -1


def _last_box_span(text: str) -> tuple[int, int, int] | None:
    """Span of the last balanced box: (start of ``\\boxed``, content start, closing brace)."""
    openers = list(_BOX_OPENERS.finditer(text)) if "box" in text else []
    for m in reversed(openers[-_MAX_BOX_ATTEMPTS:]):
        end = _match_braces(text, m.end())
        if end >= 0:
            return m.start(), m.end(), end
    return None


def last_boxed(text: str) -> str | None:
    """Content of the last balanced ``\\boxed{...}`` in ``text``, or None.

    Example:
        >>> last_boxed("\\\\boxed{1} then \\\\boxed{\\\\frac{a}{b}} done")
        '\\\\frac{a}{b}'
        >>> last_boxed("\\\\boxed{\\\\{1, 2\\\\}}")
        '\\\\{1, 2\\\\}'
        >>> last_boxed("\\\\boxed{12} and \\\\boxed{cut off by max toke")
        '12'
    """
    span = _last_box_span(text)
    return None if span is None else text[span[1] : span[2]]


def label_of(boxed: str) -> Pred:
    """Map boxed content to a prediction label (MODEL_UNCERTAIN checked before DATA_UNCERTAIN)."""
    if "know" in boxed.lower() or "ncertain" in boxed.lower():
        text = boxed.replace("\u2019", "'").replace("\u2018", "'").replace("\\_", "_")
        if _MU.search(text):
            return Pred.MODEL_UNCERTAIN
        if _DU.search(text):
            return Pred.DATA_UNCERTAIN
    return Pred.ANSWER


def split_reasoning(text: str) -> tuple[str | None, str]:
    """Separate ``<think>`` reasoning from the visible text of a response.

    Example:
        >>> split_reasoning("<think>hmm</think> \\\\boxed{2}")
        ('hmm', ' \\\\boxed{2}')
        >>> split_reasoning("no tags")
        (None, 'no tags')
    """
    close = text.rfind(_THINK_CLOSE)
    if close >= 0:
        open_ = text.find(_THINK_OPEN)
        start = open_ + len(_THINK_OPEN) if 0 <= open_ < close else 0
        return text[start:close].strip(), text[close + len(_THINK_CLOSE) :]
    open_ = text.find(_THINK_OPEN)
    if open_ >= 0:  # reasoning never closed: nothing visible after it
        return text[open_ + len(_THINK_OPEN) :].strip(), text[:open_]
    return None, text


def _clarification(section: str, span: tuple[int, int, int] | None, tagged: bool) -> str | None:
    """The answer's words outside the box.

    In the tagged format this is the whole ``<answer>`` section minus the box. Untagged, it is the
    paragraph holding the box plus anything after it, so a long derivation is not mistaken for it.
    """
    if span is None:
        return None
    start, _, end = span
    if tagged:
        text = section[:start] + section[end + 1 :]
    else:
        para = section.rfind("\n\n", 0, start)
        text = section[para + 2 if para >= 0 else 0 : start] + section[end + 1 :]
    text = text.strip().strip("$").strip()
    return text or None


def parse_response(response: str) -> Prediction:
    """Parse a raw response into a :class:`Prediction` (see the module docstring for the rules)."""
    reasoning, visible = split_reasoning(response)
    section, tagged = visible, False
    if "<answer>" in visible.lower():
        answers = _ANSWER_RE.findall(visible)
        if answers:
            section, tagged = answers[-1], True
        if reasoning is None:
            thinking = _THINKING_RE.findall(visible)
            reasoning = thinking[-1].strip() if thinking else None
    span = _last_box_span(section)
    if span is None and tagged and _last_box_span(visible) is not None:  # box outside the <answer> section
        section, tagged = visible, False
        span = _last_box_span(section)
    if span is None:  # the tagged answer section is the answer; else the tail, kept for inspection
        return Prediction(
            pred=Pred.ANSWER,
            answer=(section.strip() if tagged else response)[-TAIL_CHARS:],
            format_ok=False,
            boxed=None,
            clarification=None,
            reasoning=reasoning,
        )
    boxed = section[span[1] : span[2]]
    return Prediction(
        pred=label_of(boxed),
        answer=boxed.strip(),
        format_ok=True,
        boxed=boxed,
        clarification=_clarification(section, span, tagged),
        reasoning=reasoning,
    )


_TAGS = ("<thinking>", "</thinking>", "<answer>", "</answer>")


def tagged_answer_section(response: str) -> str | None:
    """The ``<answer>`` section of a well-formed Abstain-R1 response, or None when its structure is broken.

    As the Abstain-R1 authors' reward checks it: a response that does not start with ``<thinking>`` gets
    it prepended (their prompt ends with the opening tag); then each of ``<thinking>``, ``</thinking>``,
    ``<answer>``, ``</answer>`` must appear exactly once, in that order, with only whitespace between
    ``</thinking>`` and ``<answer>``. Tags are case-sensitive, as theirs.

    Example:
        >>> tagged_answer_section("Two is given.</thinking>\\n<answer>\\\\boxed{2}</answer>")
        '\\\\boxed{2}'
        >>> tagged_answer_section("<thinking>a</thinking> so <answer>b</answer>") is None
        True
    """
    if not response.strip().startswith("<thinking>"):
        response = "<thinking>\n" + response
    if any(response.count(tag) != 1 for tag in _TAGS):
        return None
    positions = [response.find(tag) for tag in _TAGS]
    if positions != sorted(positions):
        return None
    if response[positions[1] + len("</thinking>") : positions[2]].strip():
        return None
    return response[positions[2] + len("<answer>") : positions[3]].strip()


def answer_span(response: str) -> tuple[int, int] | None:
    """Where the decision's boxed content sits in ``response`` (start, end), or None without a box.

    The box is the one :func:`parse_response` decides by (the last balanced box of the answer section); the
    confidence estimator ``answer_prob`` reads the probability of the tokens over this span.

    Example:
        >>> text = "So 2 + 3 = \\\\boxed{5}."
        >>> start, end = answer_span(text)
        >>> text[start:end]
        '5'
    """
    decided = parse_response(response)
    if decided.boxed is None:
        return None
    for m in reversed(list(_BOX_OPENERS.finditer(response))):
        end = _match_braces(response, m.end())
        if end >= 0 and response[m.end():end] == decided.boxed:
            return m.end(), end
    return None


def verbalized_confidence(response: str) -> float | None:
    """The confidence a response states after its answer (``Confidence: 80``, ``confidence: 80%``, ``I am 80%
    confident``), in [0, 1]; the last statement outside ``<think>`` counts; None when there is none or it is above
    100.

    Example:
        >>> verbalized_confidence("\\\\boxed{5}\\nConfidence: 80%")
        0.8
        >>> verbalized_confidence("\\\\boxed{5}") is None
        True
    """
    _, visible = split_reasoning(response)
    found = _CONFIDENCE_RE.findall(visible)
    if not found:
        return None
    value = float(next(group for group in found[-1] if group))
    return value / 100 if value <= 100 else None
