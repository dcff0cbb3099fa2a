"""The records every layer reads: run folders and probe files, their formats and nothing that writes them.

* :mod:`abstain.records.runs` — the resumable run folder of ``abstain eval`` (``RunDir``: appended and fsync'd rows,
  torn-line repair, the config check) and its file names;
* :mod:`abstain.records.probes` — the probe file ``probe.jsonl`` of ``abstain probe``: one ``ProbeRow`` per item
  (``k`` samples, p̂, out of knowledge), ``aggregate`` (scored samples -> rows), ``read_probe``.

They import only :mod:`abstain.schema`, so the report, the metrics and training read runs and probes without
loading the evaluation run (:mod:`abstain.evaluation`) or the probe run (:mod:`abstain.probing`).
Importing this package imports neither module.

Example:
    >>> from abstain.records.runs import RESPONSES, SCORED
    >>> from abstain.records.probes import PROBE
    >>> RESPONSES, SCORED, PROBE
    ('responses.jsonl', 'scored.jsonl', 'probe.jsonl')
"""
