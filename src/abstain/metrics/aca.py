"""ACA-RL: behavior distribution, behavior reward, Behavior Score and IDK score on unanswerable rows.

Over unanswerable rows that carry a behavior label::

    dist.<B>        = share of behavior B
    behavior_reward = mean of V(B), V = {ELICIT 1.0, COND 0.6, ABS 0.3, EA -0.3, SH -1.0} (the paper's)
    behavior_score  = mean of S(B), S = {ELICIT 1.0, COND 0.75, ABS 0.5, EA 0.0, SH 0.0} by default

and over all unanswerable rows ``idk_score = refused / N``. The paper's Table 9 values for S are not
in its text; the default above is consistent with its reported IDK-RL numbers and is configurable
(:class:`BehaviorValues`).

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> c = np.zeros(SHAPE); c[1, 0, 0, 1, 0] = 1; c[1, 0, 0, 5, 0] = 1
    >>> float(aca_metrics(c)["behavior_reward"])
    0.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from abstain.metrics.counts import BEHAVIORS, DU, MU, UNANS, ratio, total

__all__ = ["BEHAVIOR_REWARD", "BEHAVIOR_SCORE", "BehaviorValues", "aca_metrics"]

BEHAVIOR_REWARD: Mapping[str, float] = MappingProxyType(
    {"ELICIT": 1.0, "COND": 0.6, "ABS": 0.3, "EA": -0.3, "SH": -1.0}
)
BEHAVIOR_SCORE: Mapping[str, float] = MappingProxyType(
    {"ELICIT": 1.0, "COND": 0.75, "ABS": 0.5, "EA": 0.0, "SH": 0.0}
)


@dataclass(frozen=True)
class BehaviorValues:
    """Per-behavior values for ACA's reward (V) and Behavior Score (S)."""

    reward: Mapping[str, float] = field(default_factory=lambda: dict(BEHAVIOR_REWARD))
    score: Mapping[str, float] = field(default_factory=lambda: dict(BEHAVIOR_SCORE))

    def __post_init__(self) -> None:
        for name, values in (("reward", self.reward), ("score", self.score)):
            missing = set(BEHAVIORS) - set(values)
            if missing:
                raise ValueError(f"behavior {name} values miss {sorted(missing)}; give all of {BEHAVIORS}")


def aca_metrics(c: np.ndarray, values: BehaviorValues | None = None) -> dict[str, np.ndarray]:
    """ACA metrics from a count tensor (unanswerable rows only)."""
    values = values or BehaviorValues()
    per = {b: total(c, label=UNANS, behavior=i + 1) for i, b in enumerate(BEHAVIORS)}
    labelled = sum(per.values())
    out = {f"dist.{b}": ratio(per[b], labelled) for b in BEHAVIORS}
    out["behavior_reward"] = ratio(sum(values.reward[b] * per[b] for b in BEHAVIORS), labelled)
    out["behavior_score"] = ratio(sum(values.score[b] * per[b] for b in BEHAVIORS), labelled)
    out["idk_score"] = ratio(total(c, label=UNANS, pred=[DU, MU]), total(c, label=UNANS))
    return out


