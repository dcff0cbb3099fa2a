"""A generated text with its tokens' log-probabilities: :class:`ScoredText`.

A generate call whose :class:`~abstain.backends.base.GenerationConfig` asks for ``logprobs=k`` gets
:class:`ScoredText` objects back instead of plain strings. A :class:`ScoredText` *is* the text (a ``str``: every
caller that reads texts is unchanged) and carries, for each generated token of the text (end-of-sequence left
out), the token's log-probability under the model (the raw distribution, before temperature or top-p), the
entropy of its top-``k`` alternatives, and where the token ends in the text; and the top-``k`` alternatives of the
first token, as (text, log-probability) pairs (what ``p_true`` reads: the probability of "yes"). The confidence estimators
(:mod:`abstain.confidence`) reduce these to a few numbers per response; the tokens themselves are never stored.

Example:
    >>> t = ScoredText("4 apples", logprobs=[-0.1, -0.5], entropies=[0.3, 0.9], ends=[1, 8])
    >>> t == "4 apples", t.token_logprobs, t.span_logprob(0, 1)
    (True, (-0.1, -0.5), -0.1)
    >>> shifted = t.with_prefix("<think>\\n")
    >>> shifted, shifted.token_ends
    ('<think>\\n4 apples', (9, 16))
    >>> round(top_entropy([math.log(0.5), math.log(0.5)]), 4)
    0.6931
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

__all__ = ["ScoredText", "decoded_ends", "piece_ends", "top_entropy"]


class ScoredText(str):
    """A text and, per generated token, its log-probability, its top-k entropy and its end offset in the text."""

    token_logprobs: tuple[float, ...]
    token_entropies: tuple[float, ...]
    token_ends: tuple[int, ...]
    first_top: tuple[tuple[str, float], ...]

    def __new__(cls, text: str, logprobs: Sequence[float], entropies: Sequence[float],
                ends: Sequence[int], first_top: Iterable[tuple[str, float]] = ()) -> ScoredText:
        if not len(logprobs) == len(entropies) == len(ends):
            raise ValueError(f"ScoredText: {len(logprobs)} log-probabilities, {len(entropies)} entropies and "
                             f"{len(ends)} token ends; they must be one per token")
        self = super().__new__(cls, text)
        self.token_logprobs = tuple(float(x) for x in logprobs)
        self.token_entropies = tuple(float(x) for x in entropies)
        self.token_ends = tuple(min(int(e), len(text)) for e in ends)
        self.first_top = tuple((str(t), float(lp)) for t, lp in first_top)
        return self

    def __reduce__(self):  # type: ignore[no-untyped-def]  # pickles (a worker process) with its scores
        return ScoredText, (str(self), self.token_logprobs, self.token_entropies, self.token_ends, self.first_top)

    def with_prefix(self, prefix: str) -> ScoredText:
        """The same scores behind ``prefix`` (reasoning a template or a server put in front of the text)."""
        if not prefix:
            return self
        return ScoredText(prefix + self, self.token_logprobs, self.token_entropies,
                          [e + len(prefix) for e in self.token_ends], self.first_top)

    def span_logprob(self, start: int, end: int) -> float | None:
        """The summed log-probability of the tokens that overlap characters ``[start, end)``; None if none do."""
        total, found, begin = 0.0, False, 0
        for logprob, stop in zip(self.token_logprobs, self.token_ends, strict=True):
            if begin < end and stop > start and stop > begin:
                total += logprob
                found = True
            begin = max(begin, stop)
        return total if found else None


def top_entropy(logprobs: Iterable[float]) -> float:
    """``-sum p log p`` over the top-k log-probabilities of one step (a lower bound of the full entropy)."""
    return -sum(math.exp(lp) * lp for lp in logprobs if lp > -math.inf)


def piece_ends(pieces: Iterable[str], start: int = 0) -> list[int]:
    """Where each token's text ends when the pieces are concatenated after ``start`` characters.

    Example:
        >>> piece_ends(["The", " answer", " is"])
        [3, 10, 13]
    """
    ends, at = [], start
    for piece in pieces:
        at += len(piece)
        ends.append(at)
    return ends


def decoded_ends(decode: Callable[[list[int]], str], ids: Sequence[int], text: str) -> list[int]:
    """Where each token of ``ids`` ends in ``text`` (their decoding): the length of each decoded prefix.

    A token that ends inside a multi-byte character decodes to a replacement character; it ends where the next
    token completes the character. The last token ends with the text.

    Example:
        >>> pieces = {1: "The", 2: " cat"}
        >>> decoded_ends(lambda ids: "".join(pieces[i] for i in ids), [1, 2], "The cat")
        [3, 7]
    """
    ends, at = [], 0
    for n in range(1, len(ids) + 1):
        at = max(at, len(decode(list(ids[:n])).rstrip("\ufffd")))
        ends.append(min(at, len(text)))
    if ends:
        ends[-1] = len(text)
    return ends
