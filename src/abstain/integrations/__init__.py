"""abstain inside other tools, and their logs read back as abstain runs.

* :mod:`abstain.integrations.harness` — ``HarnessTask``: an ``abstain eval`` run as a task of an evaluation
  harness (the run's prompts, scorer and metrics), which both harnesses below build on;
* :mod:`abstain.integrations.inspect` — an Inspect package (``inspect eval abstain/abstain_eval ...``);
* :mod:`abstain.integrations.lm_eval` — lm-evaluation-harness tasks (``lm_eval --include_path "$(abstain
  lm-eval-path)"``);
* :mod:`abstain.integrations.imports` (on :mod:`abstain.integrations.import_common`) — an Inspect or lm-eval log
  of such a task into a run folder (``abstain import inspect`` / ``lm-eval``), with what the harness sent
  (:mod:`abstain.integrations.generation`); :mod:`abstain.integrations.abstentionbench_log` — a log of
  inspect_evals' AbstentionBench task, with its grader's verdicts;
* :mod:`abstain.integrations.verl` — veRL: the reward (``compute_score``), the TIAR advantage estimators, the
  dataset and the plugin entry point (``abstain export verl`` writes its data).

Importing this package imports none of them (nor Inspect, lm-eval or veRL).

Example:
    >>> import pkgutil
    >>> import abstain.integrations
    >>> sorted(m.name for m in pkgutil.iter_modules(abstain.integrations.__path__) if m.ispkg)
    ['inspect', 'lm_eval', 'verl']
"""
