"""Prompt protocols, by name.

Example:
    >>> sorted(PROTOCOLS)
    ['abstention_only', 'aca', 'answer_only', 'attribution', 'clarify', 'idk', 'plain']
"""

from abstain.protocols.aca import ACA
from abstain.protocols.base import Protocol
from abstain.protocols.clarify import CLARIFY
from abstain.protocols.idk import IDK, IDK_INSTRUCTION
from abstain.protocols.plain import PLAIN
from abstain.protocols.uabench import ABSTENTION_ONLY, ANSWER_ONLY, ATTRIBUTION

__all__ = ["IDK_INSTRUCTION", "MAIN_PROTOCOLS", "PROTOCOLS", "Protocol", "get_protocol"]

PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (ATTRIBUTION, IDK, CLARIFY, ACA, ANSWER_ONLY, ABSTENTION_ONLY,
                                                      PLAIN)}
#: The four protocols that ``--protocol all`` runs: one per source paper.
MAIN_PROTOCOLS = ("attribution", "idk", "clarify", "aca")


def get_protocol(name: str) -> Protocol:
    """Look a protocol up by name, with the valid names in the error."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ValueError(f"unknown protocol {name!r}; choose one of {sorted(PROTOCOLS)}") from None
