"""Abstain-R1's format: reasoning in ``<thinking>``, then an ``<answer>`` that either boxes the answer
or refuses with ``\\boxed{I don't know.}`` followed by a clarifying question naming what is missing."""

from abstain.protocols.base import Protocol

CLARIFY = Protocol(
    name="clarify",
    paper="Abstain-R1",
    template=(
        "Think about the question inside <thinking> </thinking>, then give your response inside "
        "<answer> </answer>. If the question can be answered, put the final answer inside exactly one "
        "\\boxed{{}} in your answer. If it cannot be answered because information is missing or unclear, "
        "write \\boxed{{I don't know.}} and then ask one clarifying question that names the missing "
        "information.\n\nQuestion: {question}"
    ),
    unanswerable_demo=(
        "<thinking>A value the question depends on is never given.</thinking>"
        "<answer>\\boxed{{I don't know.}} {ask}</answer>"
    ),
    answerable_demo=(
        "<thinking>Everything needed is given.</thinking><answer>\\boxed{{{answer}}}</answer>"
    ),
)
