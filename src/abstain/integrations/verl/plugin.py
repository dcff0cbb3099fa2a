"""veRL plugin entry point: importing this module registers the ``tiar`` and ``tiar_coupled`` estimators.

pyproject.toml declares it under ``[project.entry-points."verl.plugins"]``, and veRL (0.9+) imports every
such entry point from ``verl/__init__.py``, so each process that imports veRL (the driver, the trainer
actor, every Ray worker) has the estimators. veRL logs a plugin that fails to load only at DEBUG level; if
``algorithm.adv_estimator=tiar`` then fails with "Unknown advantage estimator", load it by hand with veRL's
other mechanism, forwarded to the Ray workers through the runtime environment::

    export VERL_USE_EXTERNAL_MODULES=abstain.integrations.verl.plugin
    python -m verl.trainer.main_ppo ... \\
        +ray_kwargs.ray_init.runtime_env.env_vars.VERL_USE_EXTERNAL_MODULES=abstain.integrations.verl.plugin

Without veRL installed, importing this module does nothing.

Example:
    >>> import abstain.integrations.verl.plugin as plugin
    >>> plugin.REGISTERED in (True, False)
    True
"""

from __future__ import annotations

from importlib.util import find_spec

REGISTERED = False
_spec = find_spec("verl")

if _spec is not None and _spec.origin is not None:  # a real veRL, not some folder named verl on the path
    from abstain.integrations.verl.estimators import register

    register()
    REGISTERED = True
