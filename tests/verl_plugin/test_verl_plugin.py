"""The entry point registers `tiar` / `tiar_coupled` in veRL's registry in any process that imports veRL."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

verl = pytest.importorskip("verl")
pytestmark = pytest.mark.verl

PROBE = (
    "import json, sys, verl\n"
    "from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY as R\n"
    "print(json.dumps({'names': sorted(k for k in R if k.startswith('tiar')),"
    " 'plugin_loaded': 'abstain.integrations.verl.plugin' in sys.modules,"
    " 'module': getattr(R.get('tiar'), '__module__', None)}))\n"
)


def _probe(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("VERL_USE_EXTERNAL")}
    done = subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True,
                          timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_entry_point_is_declared():
    ours = [ep for ep in entry_points(group="verl.plugins") if ep.name == "abstain"]
    assert [ep.value for ep in ours] == ["abstain.integrations.verl.plugin"]


def test_import_verl_registers_the_estimators():
    got = _probe()
    assert got == {"names": ["tiar", "tiar_coupled"], "plugin_loaded": True,
                   "module": "abstain.integrations.verl.estimators"}


def test_without_plugins_nothing_registers_and_the_fallback_does():
    assert _probe(VERL_USE_EXTERNAL_PLUGINS="none")["names"] == []  # so the entry point is what registers
    fallback = _probe(VERL_USE_EXTERNAL_PLUGINS="none", VERL_USE_EXTERNAL_MODULES="abstain.integrations.verl.plugin")
    assert fallback["names"] == ["tiar", "tiar_coupled"]


def test_in_process_registry_and_registering_again():
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY, get_adv_estimator_fn

    from abstain.integrations.verl import estimators

    assert get_adv_estimator_fn("tiar") is estimators.compute_tiar_outcome_advantage
    assert get_adv_estimator_fn("tiar_coupled") is estimators.compute_tiar_coupled_outcome_advantage
    estimators.register()  # again: no "already registered" error
    reloaded = importlib.reload(estimators)
    reloaded.register()
    assert ADV_ESTIMATOR_REGISTRY["tiar"] is reloaded.compute_tiar_outcome_advantage
