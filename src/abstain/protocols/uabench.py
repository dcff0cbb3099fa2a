"""UA-Bench's three prompts: answer-only, abstention-only and uncertainty attribution (its protocol).

Our wording of the paper's Tables 4-6: reason first, then exactly one boxed final decision.
"""

from abstain.protocols.base import Protocol

ANSWER_ONLY = Protocol(
    name="answer_only",
    paper="UA-Bench (baseline)",
    template=(
        "Answer the following question. Think it through step by step, then give only your final "
        "answer inside exactly one \\boxed{{}}.\n\nQuestion: {question}"
    ),
    unanswerable_demo="I will give my best answer: \\boxed{{0}}",
)

ABSTENTION_ONLY = Protocol(
    name="abstention_only",
    paper="UA-Bench (baseline)",
    template=(
        "Answer the following question. Think it through step by step. If you can answer it reliably, "
        "give only your final answer inside exactly one \\boxed{{}}. If you cannot answer it reliably, "
        "for whatever reason, write \\boxed{{I don't know.}} instead.\n\nQuestion: {question}"
    ),
    unanswerable_demo="The question does not give enough to answer it reliably. \\boxed{{I don't know.}}",
)

ATTRIBUTION = Protocol(
    name="attribution",
    paper="UA-Bench",
    template=(
        "Consider the following question. First reason step by step: is the question clear and complete, "
        "with one objective answer, and can you work that answer out reliably yourself? Then write your "
        "final decision inside exactly one \\boxed{{}}:\n"
        "- if the question has a unique answer and you are confident in it, box the answer;\n"
        "- if the question is ambiguous, underspecified or missing information needed for a unique "
        "answer, write \\boxed{{<DATA_UNCERTAIN>}};\n"
        "- if the question is well-posed but answering it is beyond your knowledge or ability, write "
        "\\boxed{{<MODEL_UNCERTAIN>}}.\n\nQuestion: {question}"
    ),
    unanswerable_demo=(
        "The question leaves out information that a unique answer needs. \\boxed{{<DATA_UNCERTAIN>}}"
    ),
)
