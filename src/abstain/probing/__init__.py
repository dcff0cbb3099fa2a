"""Knowledge-boundary probing: ``abstain probe``, and the probe file that training and the competence metrics read.

* :mod:`abstain.probing.file` — the probe file ``probe.jsonl``: one ``ProbeRow`` per item (``k`` samples, p̂, out of
  knowledge), ``aggregate`` (scored samples -> rows), ``read_probe``; it imports no evaluation code, so training
  (R-Tuning, RFT, DPO, UA-Bench targets) and :mod:`abstain.metrics.competence` read it;
* :mod:`abstain.probing.run` — ``run_probe``: an ``abstain eval`` run with ``k`` samples per item at a temperature
  above 0, folded into ``probe.jsonl``; it sits above evaluation.

Importing this package imports neither.

Example:
    >>> from abstain.probing.file import PROBE
    >>> PROBE
    'probe.jsonl'
"""
