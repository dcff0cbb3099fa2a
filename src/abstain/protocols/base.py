"""A protocol is a way of asking: a prompt template plus how a good demonstration answers.

Every protocol but ``plain`` asks for exactly one ``\\boxed{}`` final decision, so one parser serves them all
(``plain`` asks as AbstentionBench does, and a judge reads its free text).

Example:
    >>> from abstain.protocols import get_protocol
    >>> from abstain.schema import Item, Message
    >>> item = Item(id="1", question="What is 2 + 3?", answers=["5"], label="answerable")
    >>> msgs = get_protocol("idk").messages(item)
    >>> msgs[-1]["content"].endswith("reply with \\\\boxed{I don't know.}")
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from abstain.schema import Item, Message

__all__ = ["Protocol"]


@dataclass(frozen=True)
class Protocol:
    """Prompt template and demonstration style of one protocol.

    Attributes:
        name: registry name (``attribution``, ``idk``, ``clarify``, ``aca``, ...).
        paper: where it comes from.
        template: user prompt with a ``{question}`` slot.
        unanswerable_demo: how a demonstration answers an unanswerable item; ``{ask}`` is replaced by a
            clarifying question built from the item's ``gap``.
        answerable_demo: how a demonstration answers an answerable item; ``{answer}`` is the reference.
        system: optional system prompt.
        strip: strip the question of surrounding whitespace (``plain`` sends it exactly as given).
    """

    name: str
    paper: str
    template: str
    unanswerable_demo: str
    answerable_demo: str = "The question gives everything needed, so the answer is \\boxed{{{answer}}}."
    system: str | None = None
    strip: bool = True

    def prompt(self, question: str) -> str:
        """The user message for one question."""
        return self.template.format(question=question.strip() if self.strip else question)

    def demo_response(self, item: Item) -> str:
        """A model-free demonstration answer for an in-context example."""
        if item.label == "answerable":
            if not item.answers:
                raise ValueError(f"item {item.id}: an answerable demonstration needs a reference answer")
            return self.answerable_demo.format(answer=item.answers[0])
        gap = (item.gap or "the missing information").strip().rstrip(".")
        ask = f"Could you tell me {gap[0].lower() + gap[1:]}?" if item.gap else "Could you give the missing information?"
        return self.unanswerable_demo.format(ask=ask)

    def messages(self, item: Item, demos: Sequence[Item] = ()) -> list[Message]:
        """Chat messages: optional system prompt, demonstrations as earlier turns, then the item."""
        out: list[Message] = []
        if self.system:
            out.append({"role": "system", "content": self.system})
        for demo in demos:
            out.append({"role": "user", "content": self.prompt(demo.question)})
            out.append({"role": "assistant", "content": self.demo_response(demo)})
        out.append({"role": "user", "content": self.prompt(item.question)})
        return out
