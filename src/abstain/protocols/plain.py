"""AbstentionBench's way of asking: the question as given, alone, with no instructions and no box.

AbstentionBench (and its Inspect port, whose solver is a bare ``generate()``) sends each question as the only
user message and lets an LLM grader decide from the free text whether the response abstained. ``plain`` is that
prompt in abstain: the parser finds no box (``pred`` stays ANSWER), so what the response *is* comes from a judge
that reads free text — ``--judge abstentionbench`` (AbstentionBench's grader, :mod:`abstain.judges.abstentionbench`)
or ``--judge llm`` (behaviors on every row) — and ``abstain import inspect`` of an ``inspect_evals/abstention_bench``
log lands under this protocol, beside ``abstain eval --protocol plain`` on the same items.

Example:
    >>> PLAIN.prompt("  Who won the 2030 World Cup? ")
    '  Who won the 2030 World Cup? '
"""

from abstain.protocols.base import Protocol

PLAIN = Protocol(
    name="plain",
    paper="AbstentionBench (the question alone; an LLM grader reads the free text)",
    template="{question}",
    unanswerable_demo="I can't answer that as asked. {ask}",
    answerable_demo="{answer}",
    strip=False,
)
