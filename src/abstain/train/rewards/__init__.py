"""Rewards and advantages: the reward presets on abstain's scorer (:mod:`~abstain.train.rewards.presets`), the
reward call's inputs rebuilt from TRL's columns (:mod:`~abstain.train.rewards.inputs`), the reward profile of a mix
(:mod:`~abstain.train.rewards.profile`) and GRPO / TIAR / coupled advantages (:mod:`~abstain.train.rewards.advantages`).
Nothing here imports a trainer; the veRL plugin imports the advantages too.
"""
