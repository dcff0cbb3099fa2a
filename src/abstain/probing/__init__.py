"""Knowledge-boundary probing: ``abstain probe``.

* :mod:`abstain.probing.run` — ``run_probe``: an ``abstain eval`` run with ``k`` samples per item at a temperature
  above 0, folded into ``probe.jsonl`` (its format, which training and :mod:`abstain.metrics.competence` read, is
  :mod:`abstain.records.probes`, below the run).

Importing this package imports nothing.

Example:
    >>> from abstain.probing import run
    >>> run.PROBE
    'probe.jsonl'
"""
