"""Evaluation: ``abstain eval``'s run, and the run folder it writes.

* :mod:`abstain.evaluation.run` — :func:`~abstain.evaluation.run.evaluate` (``abstain.evaluate``): items -> prompts
  -> backend -> responses -> scored rows -> metrics -> report, in fixed chunks that a rerun resumes
  (``EvalConfig``, ``Run``, ``eval_prompts``: the prompts a run sends, which the harness tasks send too);
* :mod:`abstain.evaluation.queries` — the passes that ask the model again after generation (``consistency:K``,
  ``p_true``);
* :mod:`abstain.evaluation.backend` — how a run talks to its backend: chunks streamed or one by one, tokens
  counted, a caller's backend borrowed, the log-probability check;
* :mod:`abstain.evaluation.folders` — the resumable run folder (``RunDir``: appended rows, torn-line repair, the
  config check) and its file names;
* :mod:`abstain.evaluation.estimate` — the requests and tokens a run will send a server, counted before it starts.

Importing this package imports none of them: the run folder's format is read below the run — by the report,
training runs and imported harness logs — without loading the run itself (``tests/test_imports.py`` checks that
nothing below imports the run).

Example:
    >>> import abstain
    >>> from abstain.evaluation import run
    >>> abstain.evaluate is run.evaluate and abstain.EvalConfig is run.EvalConfig
    True
    >>> from abstain.evaluation.folders import RESPONSES, SCORED
    >>> RESPONSES, SCORED
    ('responses.jsonl', 'scored.jsonl')
"""
