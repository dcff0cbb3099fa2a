"""Training data: the items a recipe names (:mod:`~abstain.train.data.build`), the rows TRL reads
(:mod:`~abstain.train.data.rows`), SFT targets built from equation graphs and self-checked (``sft_data``,
``targets/``, ``check``), the synthetic training mix (``mix``), probe-based rows (R-Tuning, RFT, DPO: ``probe_data``;
attribution: ``attribution_data``) and Abstain-R1's cold-start set (``abstain_cot``). Every builder passes its items
through the training guard (:mod:`abstain.data.guard`). Nothing here imports a trainer.
"""
