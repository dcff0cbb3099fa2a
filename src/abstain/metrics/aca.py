"""ACA-RL: behavior distribution, behavior reward, Behavior Score and IDK score on unanswerable rows.

Over unanswerable rows that carry a behavior label::

    dist.<B>        = share of behavior B
    behavior_reward = mean of V(B), V = {ELICIT 1.0, COND 0.6, ABS 0.3, EA -0.3, SH -1.0} (the paper's)
    behavior_score  = mean of S(B), S = {ELICIT 1.0, COND 0.75, ABS 0.5, EA 0.0, SH 0.0} by default

and over all unanswerable rows ``idk_score = refused / N`` (:func:`idk_metrics`, which needs no behavior
judgment). V and S are :data:`abstain.outcomes.BEHAVIOR_REWARD` and :data:`~abstain.outcomes.BEHAVIOR_SCORE`;
the paper's Table 9 values for S are not in its text; the default above is consistent with its reported
IDK-RL numbers and is configurable (:class:`BehaviorValues`).

Example:
    >>> import numpy as np
    >>> from abstain.metrics.counts import SHAPE
    >>> c = np.zeros(SHAPE); c[1, 0, 0, 1, 0] = 1; c[1, 0, 0, 5, 0] = 1
    >>> float(aca_metrics(c)["behavior_reward"])
    0.0
    >>> BehaviorValues(score={"SH": 0, "EA": 0, "ABS": 1, "COND": 1, "ELICIT": 1}).score[Behavior.ABS]
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from abstain.metrics.counts import BEHAVIORS, REFUSED, UNANS, count, ratio, total
from abstain.outcomes import BEHAVIOR_REWARD, BEHAVIOR_SCORE, Behavior, behavior_values

__all__ = ["BEHAVIOR_REWARD", "BEHAVIOR_SCORE", "BehaviorValues", "aca_metrics", "idk_metrics"]


@dataclass(frozen=True)
class BehaviorValues:
    """Per-behavior values for ACA's reward (V) and Behavior Score (S), keyed by :class:`Behavior`.

    Names are accepted (``{"ELICIT": 1.0, ...}``); every behavior needs a value.
    """

    reward: Mapping[Any, float] = field(default_factory=lambda: dict(BEHAVIOR_REWARD))
    score: Mapping[Any, float] = field(default_factory=lambda: dict(BEHAVIOR_SCORE))

    def __post_init__(self) -> None:
        object.__setattr__(self, "reward", behavior_values(self.reward, "reward"))
        object.__setattr__(self, "score", behavior_values(self.score, "score"))


def aca_metrics(c: np.ndarray, values: BehaviorValues | None = None) -> dict[str, np.ndarray]:
    """The behavior distribution, reward and score from a count tensor (unanswerable rows only)."""
    values = values or BehaviorValues()
    per = {b: total(c, label=UNANS, behavior=i + 1) for i, b in enumerate(BEHAVIORS)}
    labelled = sum(per.values())
    out = {f"dist.{b.value}": ratio(per[b], labelled) for b in BEHAVIORS}
    out["behavior_reward"] = ratio(sum(values.reward[b] * per[b] for b in BEHAVIORS), labelled)
    out["behavior_score"] = ratio(sum(values.score[b] * per[b] for b in BEHAVIORS), labelled)
    return out


def idk_metrics(c: np.ndarray) -> dict[str, np.ndarray]:
    """ACA's IDK score: refused unanswerable / N."""
    return {"idk_score": ratio(count(c, REFUSED, label=UNANS), total(c, label=UNANS))}
