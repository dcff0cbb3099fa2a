"""Evaluation: ``abstain eval``'s run, and the judges' audit (judges measured like models).

* :mod:`abstain.evaluation.run` — :func:`~abstain.evaluation.run.evaluate` (``abstain.evaluate``): items -> prompts
  -> backend -> responses -> scored rows -> metrics -> report, in fixed chunks that a rerun resumes
  (``EvalConfig``, ``Run``, ``eval_prompts``: the prompts a run sends, which the harness tasks send too);
* :mod:`abstain.evaluation.queries` — the passes that ask the model again after generation (``consistency:K``,
  ``p_true``);
* :mod:`abstain.evaluation.backend` — how a run talks to its backend: chunks streamed or one by one, tokens
  counted, a caller's backend borrowed, the log-probability check;
* :mod:`abstain.evaluation.estimate` — the requests and tokens a run will send a server, counted before it starts;
* :mod:`abstain.evaluation.audit` — ``abstain audit``: a judge's agreement with hand labels (accuracy, kappa).

The run folder it writes is :mod:`abstain.records.runs`, below it: the report, training runs and imported harness
logs read run folders without loading the run (``tests/test_imports.py`` checks that nothing below imports it).
Importing this package imports none of its modules.

Example:
    >>> import abstain
    >>> from abstain.evaluation import run
    >>> abstain.evaluate is run.evaluate and abstain.EvalConfig is run.EvalConfig
    True
    >>> from abstain.evaluation.audit import agreement
    >>> agreement("behavior", ["SH", "ABS"], ["SH", "ABS"]).accuracy
    1.0
"""
