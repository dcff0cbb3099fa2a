"""Metrics of the four protocols (UA-Bench, Abstain-R1, ACA-RL, AbstentionBench/TIAR).

Pure functions over scored rows; nothing here imports a backend or a judge.
"""

from abstain.metrics.aca import BEHAVIOR_REWARD, BEHAVIOR_SCORE, BehaviorValues, aca_metrics
from abstain.metrics.ab import ab_metrics
from abstain.metrics.compute import AB_HEADLINE, HEADLINE, MetricsConfig, compute_metrics, headline, metric_block
from abstain.metrics.r1 import r1_metrics
from abstain.metrics.ua import ua_metrics

__all__ = [
    "AB_HEADLINE",
    "BEHAVIOR_REWARD",
    "HEADLINE",
    "BEHAVIOR_SCORE",
    "BehaviorValues",
    "MetricsConfig",
    "ab_metrics",
    "aca_metrics",
    "compute_metrics",
    "headline",
    "metric_block",
    "r1_metrics",
    "ua_metrics",
]
