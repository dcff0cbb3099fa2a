"""Trainers and what runs them: the one entry point (:mod:`~abstain.train.trainers.entry`: ``train(recipe, out)``),
GRPO with TIAR / coupled advantages and dynamic sampling, SFT and DPO on TRL, pipelines, run folders and resume
(:mod:`~abstain.train.trainers.runner`, :mod:`~abstain.train.trainers.checkpoints`), the model a trainer starts from and
saves (:mod:`~abstain.train.trainers.policy`: dtype, attention, adapters, checkpointing; sharding in
:mod:`~abstain.train.trainers.sharding`), the TRL config (:mod:`~abstain.train.trainers.arguments`) and the TRL releases
it was tested with (:mod:`~abstain.train.trainers.trl_guard`), N processes (:mod:`~abstain.train.trainers.distributed`),
vLLM rollouts, the compact LM head and in-memory validation.

Importing this package loads nothing: TRL and torch load with the trainer that needs them.
"""
