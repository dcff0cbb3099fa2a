"""What Inspect loads through the ``inspect_ai`` entry point (``abstain = abstain.integrations.inspect._registry``):
every task, solver, scorer and metric, registered under the ``abstain/`` prefix."""

from abstain.integrations.inspect.scorer import abstain_metrics, abstain_scorer  # noqa: F401
from abstain.integrations.inspect.tasks import (  # noqa: F401
    abstain_eval,
    abstain_test_sum,
    abstentionbench_lite,
    check_generation,
    ua_bench,
)
