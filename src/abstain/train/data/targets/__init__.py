"""SFT targets computed from an item's equation graph: check what the question needs, then decide.

Example:
    >>> from abstain.synth import make_pair
    >>> build_target(make_pair(seed=2, index=0, operator="entity_disruption").twin, "idk").kind
    'idk'
"""

from abstain.train.data.targets.build import ACA_CHOICES, PROTOCOLS, Intent, Target, TargetConfig, build_target
from abstain.train.data.targets.trace import Check, Lin, Walk
from abstain.train.data.targets.words import Vocabulary, vocabulary

__all__ = ["ACA_CHOICES", "Check", "Intent", "Lin", "PROTOCOLS", "Target", "TargetConfig", "Vocabulary", "Walk",
           "build_target", "vocabulary"]
