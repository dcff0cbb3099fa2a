"""abstain in veRL: TIAR advantage estimators, a ``compute_score`` reward function and the dataset export.

* :mod:`~abstain.integrations.verl.estimators` — ``tiar`` and ``tiar_coupled`` for
  ``algorithm.adv_estimator``, registered in every process that imports veRL by the ``verl.plugins`` entry
  point (:mod:`~abstain.integrations.verl.plugin`).
* :mod:`~abstain.integrations.verl.reward` — ``compute_score`` for ``reward.custom_reward_function``.
* :mod:`~abstain.integrations.verl.dataset` — items -> veRL's RL dataset rows (``abstain export verl``).

Nothing here imports veRL, Ray or torch at import time.
"""
