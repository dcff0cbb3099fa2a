"""Confidence estimators: what ``abstain eval --confidence`` can store per response, and how each is computed.

Every estimator gives one number per response, higher meaning more confident, stored in the row's
``confidence`` column (``{"logprob": -0.41, "entropy": -0.73}``). The token estimators read the log-probabilities
the backend returned beside the text (:class:`~abstain.backends.token_scores.ScoredText`); none needs another model
call, and only their values are kept, never the tokens.

| name | value | a probability |
|---|---|---|
| ``logprob`` | the mean log-probability of the response's tokens | no |
| ``entropy`` | minus the mean entropy of each token's top-k alternatives | no |
| ``answer_prob`` | the probability of the boxed answer's tokens (the decision's span, :func:`abstain.parsing.answer_span`); null without a box | yes |
| ``consistency:K`` | the share of ``K`` sampled responses that reach the same decision (:mod:`abstain.confidence.consistency`) | yes |
| ``p_true`` | P(yes) when the same model is asked whether its proposed answer is correct (:mod:`abstain.confidence.p_true`) | yes |
| ``verbalized`` | the confidence the response states, 0–100 scaled to [0, 1], asked for by an instruction added to every prompt (:data:`VERBALIZED_INSTRUCTION`; read by :func:`abstain.parsing.verbalized_confidence`); null when it states none | yes |

Example:
    >>> from abstain.backends.token_scores import ScoredText
    >>> text = ScoredText("so \\\\boxed{5}", [-0.5, -0.1, -0.2, -0.05], [0.9, 0.2, 0.3, 0.1], [2, 10, 11, 12])
    >>> parse_confidence("logprob, answer_prob")
    ('logprob', 'answer_prob')
    >>> {k: round(v, 3) for k, v in response_confidence(text, ("logprob", "entropy", "answer_prob")).items()}
    {'logprob': -0.213, 'entropy': -0.375, 'answer_prob': 0.819}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from abstain.backends.token_scores import ScoredText
from abstain.parsing import answer_span, verbalized_confidence
from abstain.schema import Message

__all__ = ["ESTIMATORS", "TOP_LOGPROBS", "VERBALIZED_INSTRUCTION", "Estimator", "asks_verbalized", "estimator_of",
           "parse_confidence", "response_confidence", "samples_of", "with_verbalized"]

#: top alternatives per token a generation asks log-probabilities for when a token estimator is on
TOP_LOGPROBS = 20


@dataclass(frozen=True)
class Estimator:
    """One confidence estimator: its name, what it needs, and whether its values are probabilities.

    Attributes:
        name: the name in ``--confidence`` and in the ``confidence`` column (``consistency`` takes ``:K``).
        needs: ``tokens`` (log-probabilities beside the text), ``samples`` (``K`` more responses per prompt),
            ``query`` (a second question to the model, read through its log-probabilities) or ``protocol`` (the prompt
            asks for it and the parser reads it from the response).
        probability: values in [0, 1] meant as P(correct): calibration (ECE, Brier) is reported for these.
        help: one line for ``--help`` and the docs.
    """

    name: str
    needs: str
    probability: bool
    help: str


ESTIMATORS: dict[str, Estimator] = {e.name: e for e in (
    Estimator("logprob", "tokens", False, "mean token log-probability of the response"),
    Estimator("entropy", "tokens", False, "minus the mean top-k token entropy"),
    Estimator("answer_prob", "tokens", True, "probability of the boxed answer's tokens"),
    Estimator("consistency", "samples", True, "share of K sampled responses reaching the same decision "
                                              "(consistency:K, e.g. consistency:5)"),
    Estimator("p_true", "query", True, "P(yes) to 'is the proposed answer correct?', asked of the same model"),
    Estimator("verbalized", "protocol", True, "the 0-100 confidence the model states after its answer (the prompts "
                                              "ask for it)"),
)}

#: what ``verbalized`` adds to the last user message of every prompt (and demonstration turns are left as they are)
VERBALIZED_INSTRUCTION = ("After your final answer, state how confident you are that it is correct, from 0 to 100, on "
                          "its own line as: Confidence: N")


def estimator_of(name: str) -> Estimator:
    """The estimator a ``--confidence`` entry names (``consistency:5`` -> ``consistency``)."""
    base = name.partition(":")[0]
    if base not in ESTIMATORS:
        raise ValueError(f"unknown confidence estimator {name!r}; known: "
                         f"{', '.join(e if e != 'consistency' else 'consistency:K' for e in ESTIMATORS)}")
    return ESTIMATORS[base]


def samples_of(name: str) -> int:
    """``K`` of ``consistency:K`` (a positive whole number)."""
    _, _, k = name.partition(":")
    if not k.isdigit() or int(k) < 2:
        raise ValueError(f"--confidence {name}: consistency needs the number of samples K >= 2, e.g. consistency:5")
    return int(k)


def parse_confidence(spec: str | Sequence[str]) -> tuple[str, ...]:
    """The estimator names of ``--confidence`` (comma-separated, or a sequence), checked, without repeats."""
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        estimator = estimator_of(name)
        if estimator.needs == "samples":
            samples_of(name)
        elif ":" in name:
            raise ValueError(f"--confidence {name}: {estimator.name} takes no ':' argument")
        if name in out:
            raise ValueError(f"--confidence lists {name} twice")
        out.append(name)
    if sum(estimator_of(n).needs == "samples" for n in out) > 1:
        raise ValueError("--confidence: one consistency:K per run")
    return tuple(out)


def with_verbalized(messages: list[Message]) -> list[Message]:
    """``messages`` with :data:`VERBALIZED_INSTRUCTION` appended to the last user message (a new list).

    Example:
        >>> with_verbalized([{"role": "user", "content": "What is 2 + 3?"}])[0]["content"].endswith("Confidence: N")
        True
    """
    out = [dict(m) for m in messages]
    last = max(i for i, m in enumerate(out) if m["role"] == "user")
    out[last]["content"] = f"{out[last]['content']}\n\n{VERBALIZED_INSTRUCTION}"
    return out  # type: ignore[return-value]


def asks_verbalized(names: Sequence[str]) -> bool:
    """Whether the run's prompts carry the verbalized-confidence instruction."""
    return any(estimator_of(n).needs == "protocol" for n in names)


def response_confidence(text: str, names: Sequence[str]) -> dict[str, float | None]:
    """The estimators among ``names`` that read one response itself: its tokens (``logprob``, ``entropy``,
    ``answer_prob``) or its words (``verbalized``); None where undefined (no tokens, no box, no statement).

    Raises ValueError when a token estimator is asked for and ``text`` came without log-probabilities.
    """
    out: dict[str, float | None] = {}
    if "verbalized" in names:
        out["verbalized"] = verbalized_confidence(text)
    wanted = [n for n in names if estimator_of(n).needs == "tokens"]
    if not wanted:
        return out
    if not isinstance(text, ScoredText):
        raise ValueError("the backend returned no log-probabilities for a response (generate with logprobs > 0)")
    n = len(text.token_logprobs)
    for name in wanted:
        if name == "logprob":
            out[name] = sum(text.token_logprobs) / n if n else None
        elif name == "entropy":
            out[name] = -sum(text.token_entropies) / n if n else None
        else:
            span = answer_span(text)
            logprob = text.span_logprob(*span) if span is not None else None
            out[name] = math.exp(logprob) if logprob is not None else None
    return out
