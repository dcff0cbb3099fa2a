"""The "I don't know" instruction of Song et al., used for ACA-RL's IDK score and TIAR-style runs."""

from abstain.protocols.base import Protocol

IDK_INSTRUCTION = "If you don't know the answer, reply with \\boxed{{I don't know.}}"

IDK = Protocol(
    name="idk",
    paper="ACA-RL IDK score / SUM",
    template="{question}\n" + IDK_INSTRUCTION,
    unanswerable_demo="\\boxed{{I don't know.}}",
    answerable_demo="\\boxed{{{answer}}}",
)
