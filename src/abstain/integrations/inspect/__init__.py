"""abstain as an Inspect package: ``inspect eval abstain/abstain_eval -T suite=quick -T protocol=idk --model M``.

``pip install 'abstain[inspect]'`` registers this package under Inspect's ``inspect_ai`` entry point
(:mod:`abstain.integrations.inspect._registry`), so Inspect finds ``abstain/<task>`` by name. The tasks
(:mod:`.tasks`) are ``abstain eval`` runs: the same items in the same order, the protocol's own messages, and
the scorer (:mod:`.scorer`) is abstain's parse → judge → outcome path with abstain's metrics and bootstrap
CIs. Importing this package imports Inspect; the rest of abstain never does.
"""

from abstain.integrations.inspect.scorer import abstain_metrics, abstain_scorer
from abstain.integrations.inspect.tasks import (
    abstain_eval,
    abstain_test_sum,
    abstentionbench_lite,
    check_generation,
    ua_bench,
)

__all__ = ["abstain_eval", "abstain_metrics", "abstain_scorer", "abstain_test_sum", "abstentionbench_lite",
           "check_generation", "ua_bench"]
