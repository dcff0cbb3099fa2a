"""``p_true``: ask the same model whether the answer it proposed is correct, and read the probability of "yes".

After the responses are generated, every response that proposes an answer (the parser's decision is ``ANSWER``
with an answer, boxed or, for an unboxed response, its tail) is put back to the model as a second query
(Kadavath et al., 2022, "Language Models (Mostly) Know What They Know": P(True)). One token is generated; from its
top-20 alternatives, P(yes) and P(no) are summed over spellings (``Yes``, `` yes``, ``YES`` …) and the value is
P(yes) / (P(yes) + P(no)). It is null when neither word is among the alternatives, and for a refusal, which
proposes no answer. It costs one more prefill and one generated token per answer.

Example:
    >>> import math
    >>> from abstain.backends.token_scores import ScoredText
    >>> first = ScoredText("Yes", [-0.3], [0.6], [3], [("Yes", math.log(0.6)), (" no", math.log(0.2)), ("Maybe", -3)])
    >>> round(p_true_value(first), 4)
    0.75
    >>> p_true_prompt("What is 2 + 3?", "5").splitlines()[-1]
    'Is the proposed answer correct? Answer with one word, yes or no.'
"""

from __future__ import annotations

import math

from abstain.backends.token_scores import ScoredText
from abstain.parsing import parse_response
from abstain.schema import Message, Pred, ResponseRow

__all__ = ["p_true_messages", "p_true_prompt", "p_true_value"]


def p_true_prompt(question: str, answer: str) -> str:
    """The second query: the question, the proposed answer, and the yes/no question."""
    return (f"Question: {question}\nProposed answer: {answer}\n"
            "Is the proposed answer correct? Answer with one word, yes or no.")


def p_true_messages(row: ResponseRow) -> list[Message] | None:
    """The chat messages of the second query for ``row``, or None when its response proposes no answer."""
    decided = parse_response(row.response)
    if decided.pred != Pred.ANSWER or not (decided.answer or "").strip():
        return None
    return [{"role": "user", "content": p_true_prompt(row.question, decided.answer or "")}]


def p_true_value(first: str) -> float | None:
    """P(yes) / (P(yes) + P(no)) from the first token's top alternatives (None when neither word is there).

    Raises ValueError when ``first`` came without log-probabilities.
    """
    if not isinstance(first, ScoredText):
        raise ValueError("p_true needs the backend's log-probabilities (generate with logprobs > 0)")
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in first.first_top:
        word = token.strip().strip(".!,").lower()
        if word in mass:
            mass[word] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None
