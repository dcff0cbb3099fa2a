"""Model backends behind one interface (:class:`Backend`)."""

from abstain.backends.base import Backend, GenerationConfig, Message

__all__ = ["Backend", "GenerationConfig", "Message"]
