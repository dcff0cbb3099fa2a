"""ACA-RL's response policy as a prompt: ask, condition or abstain rather than invent a premise."""

from abstain.protocols.base import Protocol

ACA = Protocol(
    name="aca",
    paper="ACA-RL",
    template=(
        "Solve the problem below, reasoning step by step. End with exactly one \\boxed{{}} holding your "
        "final decision. If the problem gives everything needed for a unique answer, box the answer. If a "
        "premise is missing, do not invent it; instead do one of these:\n"
        "- ask for the missing information: box a question to the user, e.g. \\boxed{{What is the price of "
        "one pen?}};\n"
        "- answer conditionally: call the missing quantity x and box the answer as a formula in x;\n"
        "- abstain: write \\boxed{{I don't know.}} and say what is missing.\n\nProblem: {question}"
    ),
    unanswerable_demo="A needed value is missing, so I should ask for it. \\boxed{{{ask}}}",
)
