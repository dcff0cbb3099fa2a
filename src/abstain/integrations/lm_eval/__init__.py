"""abstain's suites × protocols as lm-evaluation-harness tasks: ``lm_eval --include_path "$(abstain lm-eval-path)"``.

The task YAMLs (``tasks/abstain_<suite>_<protocol>.yaml``, tag ``abstain``; written by :mod:`.task_yamls`) load
their documents, score each response and aggregate the metrics through :mod:`.hooks`, which is abstain's own
prompts, scorer and metrics (:mod:`abstain.integrations.harness`); their class, :class:`.task.AbstainTask`, checks
and records the generation settings a run sends. Importing this package imports no lm-eval (``.task`` does).
"""
