"""Near-duplicate questions: two questions are near-duplicates when they share a run of 8 consecutive words.

Exact text (:func:`normalize_question`) misses a paraphrase: UMWP rewrote SVAMP and
GSM8K problems, and MiP rewrote the same sources, so a UMWP row and a MiP-SVAMP question can be one problem
with a number or a clause changed. A shared 8-word run (of the normalized text's ``\\w+`` words, numbers
included) catches that: editing a number, a name or a clause leaves most runs of an ordinary word problem
intact, while two different problems almost never share 8 words in a row. Measured here: 752 UMWP rows share
a run with MiP-SVAMP's questions and 18 with MiP-GSM8K's, and the 1,200-problem synthetic training mix shares
none with any shipped real-text evaluation question (templates are not word problems' prose). A question
shorter than 8 words is one run (the whole question): it matches only itself.

Example:
    >>> index = ShingleIndex()
    >>> index.add("mip_svamp", ["Jack had 8 pens and Mary had 5 pens. How many pens did they have in all?"])
    >>> index.sets_of("Jack had 9 pens and Mary had 5 pens. How many pens did they have in all?")
    {'mip_svamp'}
    >>> index.sets_of("Tom has 3 apples. How many apples does Tom have?")
    set()
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable

__all__ = ["SHINGLE_WORDS", "ShingleIndex", "normalize_question", "shingles"]

#: words per run: the near-duplicate threshold
SHINGLE_WORDS = 8
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_STRIP = string.whitespace + string.punctuation + "\u00a0“”‘’«»…–—¿¡"


def normalize_question(text: str) -> str:
    """The text as held-out questions are compared: NFKC, casefolded, whitespace collapsed, ends stripped.

    Example:
        >>> normalize_question("  What is\\n 2 + 3 ?  ")
        'what is 2 + 3'
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", text).strip(_STRIP)


def shingles(text: str, n: int = SHINGLE_WORDS) -> set[tuple[str, ...]]:
    """The runs of ``n`` consecutive words of ``text`` (normalized as held-out questions are compared).

    Example:
        >>> sorted(shingles("One two three", n=2))
        [('one', 'two'), ('two', 'three')]
    """
    words = tuple(_WORD.findall(normalize_question(text)))
    if len(words) <= n:
        return {words} if words else set()
    return {words[i:i + n] for i in range(len(words) - n + 1)}


class ShingleIndex:
    """Named sets of questions, looked up by shared runs of words."""

    def __init__(self, n: int = SHINGLE_WORDS) -> None:
        self.n = n
        self._runs: dict[tuple[str, ...], set[str]] = {}

    def add(self, name: str, texts: Iterable[str]) -> None:
        """Index ``texts`` under the set ``name``."""
        for text in texts:
            for run in shingles(text, self.n):
                self._runs.setdefault(run, set()).add(name)

    def sets_of(self, text: str) -> set[str]:
        """The sets holding a question that shares a run with ``text`` (empty: no near-duplicate)."""
        found: set[str] = set()
        for run in shingles(text, self.n):
            found |= self._runs.get(run, set())
        return found

    def __len__(self) -> int:
        return len(self._runs)
